"""ZeRO against plain data parallelism (DDP), numerically: the same GPT in
fp32, AdamW, 200 steps on text, on 2 and 4 local ranks, DDP and each ZeRO
stage. For each stage: whether the per-step losses and the final
parameters are bit-identical to DDP's, and if not, the largest relative
difference of the losses and of the parameters (over values above 1e-3:
the attention's key bias has an exactly zero gradient, so its values are
rounding noise whatever the reduction order). As a reference for what a
different summation order alone does over 200 steps, also DDP on N/2 ranks
with twice the batch (the same global batches, summed in another order)
against DDP on N.

Each comparison runs with every --reduce-orders value given to loom-run
(--reduce-order): `mpi` (the MPI library's algorithms, whose all-reduce
and reduce-scatter add in different orders above 2 ranks) and `rank` (sums
in rank order in every collective, so ZeRO and DDP add alike).

Prints a Markdown table; --record appends it and the command to
bench/RESULTS.md.

Usage: python3 bench/zero_numerics.py [--spec gpt:...] [--ranks 2,4]
       [--stages 1,2,3] [--steps 200] [--reduce-orders mpi,rank] [--record]"""
import argparse
import json
import os
import sys
import tempfile

from clusterlib import BIN, ROOT, results_section, sh

sys.path.insert(0, os.path.join(ROOT, "test", "e2e", "Inputs"))
from safetensors_file import read  # noqa: E402


def losses(path):
    return [json.loads(l)["loss"] for l in open(path) if '"step"' in l and
            '"summary"' not in l]


def rel(a, b):
    scale = max(abs(a), abs(b))
    return abs(a - b) / scale if scale else 0.0


def compare_params(a_path, b_path):
    a, b = read(a_path), read(b_path)
    same = all(a[n][2] == b[n][2] for n in a)
    worst = max(rel(x, y) for n in a for x, y in zip(a[n][2], b[n][2])
                if max(abs(x), abs(y)) > 1e-3)
    return same, worst


def run(args, spec, ranks, out, order, corpus, flags=()):
    """Compiles `spec` for `ranks` and trains it, into `out`."""
    sh([os.path.join(BIN, "loomc"), f"--model={spec}", f"--dp={ranks}", *flags,
        "-o", out])
    sh([os.path.join(BIN, "loom-run"), out, "--ranks", str(ranks), "--steps",
        str(args.steps), "--data", "text:" + corpus, "--log-every", "0",
        "--reduce-order", order, "--metrics", out + ".jsonl", "--save",
        out + ".ckpt"])


def compare_at(args, tmp, corpus, n, order):
    """Rows comparing each stage (and DDP on n/2 ranks) with DDP on n."""
    runs = {}
    for stage in ["0"] + args.stages.split(","):
        out = os.path.join(tmp, f"s{stage}-{n}-{order}")
        run(args, args.spec, n, out, order, corpus,
            [f"--zero={stage}"] if stage != "0" else [])
        runs[stage] = out
    if n % 2 == 0 and n > 2 and order == "mpi":
        fields = dict(kv.split("=") for kv in args.spec.split(":")[1].split(","))
        fields["batch"] = str(2 * int(fields["batch"]))
        spec = "gpt:" + ",".join(f"{k}={v}" for k, v in fields.items())
        out = os.path.join(tmp, f"half-{n}")
        run(args, spec, n // 2, out, order, corpus)
        runs[f"DDP on {n // 2} ranks, 2x batch"] = out
    rows = []
    base = runs["0"]
    for stage in [s for s in runs if s != "0"]:
        la, lb = losses(base + ".jsonl"), losses(runs[stage] + ".jsonl")
        same, worst = compare_params(base + ".ckpt/model.safetensors",
                                     runs[stage] + ".ckpt/model.safetensors")
        loss_worst = max(rel(x, y) for x, y in zip(la, lb))
        rows.append((n, order, stage, la == lb, loss_worst, same, worst))
        print(rows[-1], flush=True)
    return rows


def write_corpus(tmp):
    """The project's docs as one text file, the runs' data."""
    corpus = os.path.join(tmp, "corpus.txt")
    with open(corpus, "w") as f:
        for name in sorted(os.listdir(os.path.join(ROOT, "docs"))):
            if name.endswith(".md"):
                f.write(open(os.path.join(ROOT, "docs", name)).read())
    return corpus


def with_batch(spec, factor):
    fields = dict(kv.split("=") for kv in spec.split(":")[1].split(","))
    fields["batch"] = str(factor * int(fields["batch"]))
    return "gpt:" + ",".join(f"{k}={v}" for k, v in fields.items())


def train(artifact, ranks, steps, corpus, metrics, *flags):
    sh([os.path.join(BIN, "loom-run"), artifact, *(["--ranks", str(ranks)] if ranks > 1 else []),
        "--steps", str(steps), "--data", "text:" + corpus, "--log-every", "0",
        "--metrics", metrics, *flags])


def resume_rows(args, tmp, corpus):
    """ZeRO-2 on 4 ranks trained for --steps, against the same run saved at
    half the steps and resumed by other rank counts and stages (the global
    batch kept: the per-rank batch scaled): whether the resumed losses are
    the uninterrupted run's, and how far they are."""
    half = args.steps // 2
    full = os.path.join(tmp, "resume-z2-4")
    sh([os.path.join(BIN, "loomc"), f"--model={args.spec}", "--dp=4", "--zero=2", "-o", full])
    train(full, 4, args.steps, corpus, full + ".jsonl")
    ckpt = full + ".ckpt"
    train(full, 4, half, corpus, full + ".first.jsonl", "--save", ckpt)
    base = losses(full + ".jsonl")[half:]
    rows = []
    for label, ranks, flags, factor in [("4 ranks, ZeRO-2 (unchanged)", 4, ["--zero=2"], 1),
                                        ("4 ranks, ZeRO-3", 4, ["--zero=3"], 1),
                                        ("2 ranks, ZeRO-1", 2, ["--zero=1"], 2),
                                        ("4 ranks, DDP", 4, [], 1),
                                        ("1 rank", 1, [], 4)]:
        out = os.path.join(tmp, f"resume-{ranks}-{len(rows)}")
        sh([os.path.join(BIN, "loomc"), f"--model={with_batch(args.spec, factor)}",
            f"--dp={ranks}", *flags, "-o", out])
        train(out, ranks, half, corpus, out + ".jsonl", "--load", ckpt)
        got = losses(out + ".jsonl")
        rows.append((label, got == base, max(rel(x, y) for x, y in zip(got, base))))
        print(rows[-1], flush=True)
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spec", default="gpt:vocab=256,seq=32,dim=32,heads=4,layers=2,batch=4")
    ap.add_argument("--ranks", default="2,4")
    ap.add_argument("--stages", default="1,2,3")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--reduce-orders", default="mpi,rank")
    ap.add_argument("--resume", action="store_true",
                    help="instead: resume ZeRO-2 saved on 4 ranks elsewhere")
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()
    if args.resume:
        return main_resume(args)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        corpus = write_corpus(tmp)
        for n in (int(r) for r in args.ranks.split(",")):
            for order in args.reduce_orders.split(","):
                rows += compare_at(args, tmp, corpus, n, order)
    lines = ["| ranks | reduce order | stage | losses bit-identical |"
             " max rel loss diff | parameters bit-identical |"
             " max rel parameter diff (> 1e-3) |",
             "|---|---|---|---|---|---|---|"]
    for n, order, stage, lsame, lw, psame, pw in rows:
        lines.append(f"| {n} | {order} | {stage} | {'yes' if lsame else 'no'} | {lw:.1e} |"
                     f" {'yes' if psame else 'no'} | {pw:.1e} |")
    table = "\n".join(lines)
    print(table)
    if args.record:
        with results_section("ZeRO numerics against DDP") as out:
            out.write(f"`python3 bench/zero_numerics.py --spec {args.spec} --ranks "
                      f"{args.ranks} --stages {args.stages} --steps {args.steps} "
                      f"--reduce-orders {args.reduce_orders} "
                      f"--record`\n\n{table}\n")


def main_resume(args):
    with tempfile.TemporaryDirectory() as tmp:
        corpus = write_corpus(tmp)
        rows = resume_rows(args, tmp, corpus)
    lines = ["| resumed by | losses those of the uninterrupted run | max rel loss diff |",
             "|---|---|---|"]
    lines += [f"| {label} | {'yes' if same else 'no'} | {worst:.1e} |"
              for label, same, worst in rows]
    table = "\n".join(lines)
    print(table)
    if args.record:
        with results_section("ZeRO checkpoints resumed elsewhere") as out:
            out.write(f"`python3 bench/zero_numerics.py --resume --spec {args.spec} "
                      f"--steps {args.steps} --record`: ZeRO-2 on 4 ranks for "
                      f"{args.steps} fp32 steps, against the same run saved after "
                      f"{args.steps // 2} and resumed for the rest by each row "
                      f"(the per-rank batch scaled to keep the global batch)\n\n"
                      f"{table}\n")


if __name__ == "__main__":
    main()
