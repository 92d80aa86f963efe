"""L-GreCo against uniform PowerSGD and uncompressed DDP on text: a GPT whose
layers differ in shape (embeddings 256 x dim, attention dim x 3dim, MLP
dim x 4dim and 4dim x dim) on 2 local ranks for --steps steps, trained with
  - Loom DDP, fp32 all-reduce                       (loomc --dp=2)
  - Loom DDP sending bf16 gradients                 (--compress=bf16)
  - uniform PowerSGD rank 4                         (--compress=powersgd:rank=4)
  - L-GreCo within uniform rank 4's error, fewest bytes
                                                    (--compress=lgreco:rank=4,objective=bytes)
for every seed of --seeds, each run the same initial model and batches for
one seed. Bytes are what one rank sends per step (the plans loom-run
writes to the metrics, ring model): the compressed runs' mean after the
warm-up, each plan weighted by the steps it was in force. Loss: the mean
training loss of the last 100 steps, and the held-out loss of the final
model (loom-run --eval over the last tenth of the corpus, which no run
trains on). Corpus: the docstrings of the Python standard library
(bench/co2_convergence.py). Each run's loss curve (mean over seeds) is
saved to bench/results/compress_bytes.json, from which
bench/compress_cluster.py takes the steps each method needs to reach a
target loss (the numerics do not depend on the link).

The numbers are counts and losses, not times: the runs may share the
machine with anything.

Usage: /usr/bin/python3 bench/compress_bytes.py [--steps 1000] [--seeds 1,2,3] [--record]"""
import argparse
import json
import os
import tempfile

from clusterlib import BIN, ROOT, loomc, results_section, sh
from co2_convergence import docstrings

SPEC = "gpt:vocab=256,seq=64,dim=256,heads=4,layers=6,batch=4"


def plans_bytes(metrics, steps, warmup):
    """Mean bytes per step after the warm-up over the plans of a run, the
    fp32 bytes, the baseline's, and the worst error / budget."""
    plans = [r["compression"] for r in map(json.loads, open(metrics)) if "compression" in r]
    if not plans:
        return None
    total, worst = 0.0, 0.0
    for i, p in enumerate(plans):
        start = max(p["step"], warmup)  # a plan holds from the step after its choice
        end = plans[i + 1]["step"] if i + 1 < len(plans) else steps
        total += p["bytes_per_step"] * (end - start)
        if "budget" in p:
            worst = max(worst, p["error"] / p["budget"])
    return (total / (steps - warmup), plans[0]["fp32_bytes_per_step"],
            plans[0]["baseline_bytes_per_step"], worst)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--every", type=int, default=200)
    ap.add_argument("--spec", default=SPEC)
    ap.add_argument("--sweep", action="store_true",
                    help="uniform ranks 4-32 and L-GreCo at rank 4's and 16's "
                         "relative and absolute error, not bf16 (results: "
                         "compress_bytes_sweep.json)")
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    opt = ["--optimizer=adamw:lr=1e-3,beta1=0.9,beta2=0.95,wd=0.1",
           "--warmup-steps=50", f"--decay-steps={args.steps}", "--min-lr=1e-4"]
    lgreco = lambda rank, measure: (
        f"L-GreCo (within rank {rank}'s {measure} error, fewest bytes)",
        [f"--compress=lgreco:rank={rank},warmup={args.warmup},every={args.every},"
         f"objective=bytes,error={measure}"])
    uniform = lambda rank: (f"uniform PowerSGD rank {rank}",
                            [f"--compress=powersgd:rank={rank},warmup={args.warmup}"])
    runs = [("DDP (fp32 all-reduce)", []),
            ("DDP, bf16 gradients", ["--compress=bf16:warmup=0"]),
            uniform(4), lgreco(4, "relative"), lgreco(4, "absolute")]
    if args.sweep:
        # Which budget keeps the loss near DDP's, and what each measure
        # saves there.
        runs = [runs[0], uniform(4), uniform(8), uniform(16), uniform(32),
                lgreco(4, "relative"), lgreco(4, "absolute"),
                lgreco(16, "relative"), lgreco(16, "absolute")]
    rows, saved = [], []
    with tempfile.TemporaryDirectory() as tmp:
        text = docstrings()
        split = len(text) * 9 // 10
        corpus, heldout = os.path.join(tmp, "train.txt"), os.path.join(tmp, "heldout.txt")
        open(corpus, "wb").write(text[:split])
        open(heldout, "wb").write(text[split:])
        for name, flags in runs:
            art = os.path.join(tmp, "a")
            loomc(args.spec, art, "--dp=2", *opt, *flags)
            train, held, sent, curves = [], [], [], []
            for seed in seeds:
                metrics, evals = os.path.join(tmp, "m.jsonl"), os.path.join(tmp, "e.jsonl")
                ckpt = os.path.join(tmp, "ckpt")
                sh(["rm", "-rf", ckpt])
                sh([os.path.join(BIN, "loom-run"), art, "--ranks", "2", "--steps",
                    str(args.steps), "--data", "text:" + corpus, "--seed", str(seed),
                    "--log-every", "0", "--metrics", metrics, "--save", ckpt])
                sh([os.path.join(BIN, "loom-run"), art, "--ranks", "2", "--eval", "--load",
                    ckpt, "--data", "text:" + heldout, "--metrics", evals])
                losses = [r["loss"] for r in map(json.loads, open(metrics))
                          if "step" in r and "loss" in r]
                train.append(sum(losses[-100:]) / len(losses[-100:]))
                curves.append(losses)
                held.append([json.loads(l)["eval"]["loss"] for l in open(evals)][0])
                sent.append(plans_bytes(metrics, args.steps, args.warmup))
                print(name, "seed", seed, round(train[-1], 4), round(held[-1], 4),
                      sent[-1], flush=True)
            rows.append((name, train, held, sent))
            curve = [sum(c[i] for c in curves) / len(curves) for i in range(args.steps)]
            saved.append({"name": name, "flags": flags, "training_loss": train,
                          "heldout_loss": held, "curve": curve})
    mean = lambda xs: sum(xs) / len(xs)
    ddp_train, ddp_held = mean(rows[0][1]), mean(rows[0][2])
    fp32 = next(s for r in rows for s in r[3] if s)[1]
    base = mean([s[0] for s in next(r for r in rows if r[0] == "uniform PowerSGD rank 4")[3]])
    lines = [f"| {args.spec}, 2 ranks, {args.steps} steps, seeds {args.seeds} "
             "| bytes/step/rank after warm-up | vs uniform PowerSGD rank 4 | worst error / budget "
             "| training loss, last 100 | vs DDP | held-out loss | vs DDP |",
             "|---|---|---|---|---|---|---|---|"]
    for name, train, held, sent in rows:
        # bf16's plan has no warm-up: its one plan holds from step 1.
        b = mean([s[0] for s in sent]) if sent[0] else fp32
        worst = max(s[3] for s in sent) if sent[0] and sent[0][3] else None
        lines.append(
            f"| {name} | {b / 1024:.1f} KiB | {base / b:.2f}x fewer | "
            f"{'' if worst is None else f'{worst:.3f}'} | {mean(train):.4f} | "
            f"{100 * (mean(train) - ddp_train) / ddp_train:+.2f}% | {mean(held):.4f} | "
            f"{100 * (mean(held) - ddp_held) / ddp_held:+.2f}% |")
    table = "\n".join(lines)
    print(table)
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    saved_name = "compress_bytes_sweep.json" if args.sweep else "compress_bytes.json"
    with open(os.path.join(ROOT, "bench", "results", saved_name), "w") as out:
        json.dump({"spec": args.spec, "steps": args.steps, "seeds": seeds,
                   "runs": saved}, out)
    if args.record:
        title = ("Gradient compression: which budget keeps the loss" if args.sweep
                 else "Gradient compression: L-GreCo bytes and loss")
        with results_section(title) as out:
            out.write("`/usr/bin/python3 bench/compress_bytes.py "
                      f"--steps {args.steps} --seeds {args.seeds}"
                      f"{' --sweep' if args.sweep else ''}`\n\n{table}\n")


if __name__ == "__main__":
    main()
