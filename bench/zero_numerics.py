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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spec", default="gpt:vocab=256,seq=32,dim=32,heads=4,layers=2,batch=4")
    ap.add_argument("--ranks", default="2,4")
    ap.add_argument("--stages", default="1,2,3")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--reduce-orders", default="mpi,rank")
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        corpus = os.path.join(tmp, "corpus.txt")
        with open(corpus, "w") as f:
            for name in sorted(os.listdir(os.path.join(ROOT, "docs"))):
                if name.endswith(".md"):
                    f.write(open(os.path.join(ROOT, "docs", name)).read())
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


if __name__ == "__main__":
    main()
