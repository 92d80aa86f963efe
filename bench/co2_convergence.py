"""CO2 convergence against DDP on text: the quickstart GPT and optimizer
(scripts/quickstart.sh) on 2 local ranks for --steps steps, trained with
  - Loom synchronous DDP                            (loomc --dp=2)
  - Loom CO2 with τ = 4 and τ = 12                  (defaults: α 0.8, β 0, λ 2, φ 1)
  - ablations at τ = 4 and 12: no gap penalty, no clip, neither, a clip
    tight enough to bind, and the previous defaults (α 1, β 0.2, λ 4)
--runs SPEC;SPEC;... replaces the CO2 runs (each a --co2 spec), for sweeps;
DDP always runs first.
Each run is repeated for every seed of --seeds (default 1,2,3): one seed's
variance between DDP runs is as large as the gaps measured, so a single
seed says little. For one seed every run sees the same initial model and
samples (2 ranks x batch 8 per step, the same windows of the corpus). The training loss of a step is the mean over ranks
(DDP: per step; CO2: per round, as round_loss). Reports the mean loss over
the last 100 steps and its gap to DDP, and the held-out loss of the final
model (loom-run --eval over the last tenth of the corpus, which no run
trains on; for CO2 the mean of the ranks' final local models), writes
bench/co2_convergence.png (and its numbers to bench/results/); --record
appends to bench/RESULTS.md.

Usage: /usr/bin/python3 bench/co2_convergence.py [--steps 1200] [--runs SPECS] [--seeds 1,2,3] [--record]"""
import argparse
import datetime
import glob
import json
import os
import sys
import tempfile

from clusterlib import BIN, ROOT, loomc, sh

SPEC = "gpt:vocab=256,seq=64,dim=64,heads=4,layers=2,batch=8"


def losses(metrics, tau):
    """[(last step of a round or step, mean loss over ranks)]"""
    rows = [json.loads(l) for l in open(metrics)]
    summary = [r["summary"] for r in rows if "summary" in r][0]
    steps = [r for r in rows if "step" in r]  # not the summary or evaluations
    if not tau:
        return [(r["step"], r["loss"]) for r in steps]
    # round_loss at step s is the round that ended at step s - tau; the last
    # round's arrives with the summary.
    out = [(r["step"] - tau, r["round_loss"]) for r in steps if "round_loss" in r]
    out.append((steps[-1]["step"], summary["final_loss"]))
    return out


def tail_mean(points, steps, window=100):
    """Mean loss over the last `window` steps (rounds weighted by length)."""
    inside = [(s, l) for s, l in points if s > steps - window]
    return sum(l for _, l in inside) / len(inside)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=1200)
    ap.add_argument("--record", action="store_true")
    ap.add_argument("--seeds", default="1,2,3",
                    help="every run is repeated with each seed (init and data order "
                         "are the same across runs for one seed); gaps are per seed, "
                         "then averaged")
    ap.add_argument("--runs", help="CO2 specs separated by ';' instead of the default set")
    args = ap.parse_args()
    runs = [("DDP", 0, None)]
    if args.runs:
        for spec in args.runs.split(";"):
            tau = int(dict(f.split("=") for f in spec.split(",")).get("local-steps", 12))
            runs.append((f"CO2 {spec}", tau, spec))
    else:
        for tau in (4, 12):
            t = f"local-steps={tau}"
            runs += [(f"CO2 τ={tau}", tau, t),
                     (f"CO2 τ={tau}, no gap penalty", tau, t + ",gap-penalty=0"),
                     (f"CO2 τ={tau}, no clip", tau, t + ",clip=0"),
                     (f"CO2 τ={tau}, neither", tau, t + ",gap-penalty=0,clip=0"),
                     (f"CO2 τ={tau}, clip 0.002 (binds)", tau, t + ",clip=0.002"),
                     (f"CO2 τ={tau}, previous defaults (α 1, β 0.2, λ 4)", tau,
                      t + ",outer-lr=1,outer-momentum=0.2,gap-penalty=4")]
    optimizer = ["--optimizer=adamw:lr=3e-3,beta1=0.9,beta2=0.95,wd=0.1",
                 "--warmup-steps=20", f"--decay-steps={args.steps}", "--min-lr=3e-4"]
    seeds = [int(x) for x in args.seeds.split(",")]
    # (name, tau, mean training curve, [training loss], [held-out loss],
    #  mean held-out curve) per run
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        corpus = os.path.join(tmp, "corpus.txt")
        heldout = os.path.join(tmp, "heldout.txt")
        text = b"".join(open(path, "rb").read()
                        for path in sorted(glob.glob("/usr/share/common-licenses/*"))
                        if os.path.isfile(path))
        split = len(text) * 9 // 10
        with open(corpus, "wb") as out:
            out.write(text[:split])
        with open(heldout, "wb") as out:
            out.write(text[split:])
        for name, tau, co2 in runs:
            art = os.path.join(tmp, "a")
            flags = ["--dp=2", *optimizer] + ([f"--co2={co2}"] if co2 else [])
            loomc(SPEC, art, *flags)
            curves, train, held, held_curves = [], [], [], []
            for seed in seeds:
                metrics = os.path.join(tmp, "m.jsonl")
                ckpt = os.path.join(tmp, "ckpt")
                sh(["rm", "-rf", ckpt])
                sh([os.path.join(BIN, "loom-run"), art, "--ranks", "2", "--steps",
                    str(args.steps), "--data", "text:" + corpus, "--seed", str(seed),
                    "--log-every", "0", "--metrics", metrics, "--save", ckpt,
                    "--eval-data", "text:" + heldout, "--eval-every", "48"])
                evals = os.path.join(tmp, "e.jsonl")
                sh([os.path.join(BIN, "loom-run"), art, "--ranks", "2", "--eval", "--load",
                    ckpt, "--data", "text:" + heldout, "--metrics", evals])
                held.append([json.loads(l)["eval"]["loss"] for l in open(evals)][0])
                curves.append(losses(metrics, tau))
                held_curves.append([(r["eval"]["step"], r["eval"]["loss"])
                                    for r in map(json.loads, open(metrics)) if "eval" in r])
                train.append(tail_mean(curves[-1], args.steps))
                print(name, "seed", seed, round(train[-1], 4), round(held[-1], 4), flush=True)
            # Every seed's points are at the same steps: average them.
            curve = [(s_, sum(c[i][1] for c in curves) / len(curves))
                     for i, (s_, _) in enumerate(curves[0])]
            held_curve = [(s_, sum(c[i][1] for c in held_curves) / len(held_curves))
                          for i, (s_, _) in enumerate(held_curves[0])]
            results.append((name, tau, curve, train, held, held_curve))
    mean = lambda xs: sum(xs) / len(xs)
    ddp_train, ddp_held = results[0][3], results[0][4]

    def gaps(values, ref):
        return [100 * (v - r) / r for v, r in zip(values, ref)]

    lines = [f"| run | training loss, last 100 steps | vs DDP (per seed) "
             f"| held-out loss, final model | vs DDP (per seed) |",
             "|---|---|---|---|---|"]
    for name, _, _, train, held, _ in results:
        tg, hg = gaps(train, ddp_train), gaps(held, ddp_held)
        lines.append(f"| {name} | {mean(train):.4f} | {mean(tg):+.2f}% "
                     f"({', '.join(f'{g:+.1f}' for g in tg)}) | {mean(held):.4f} | "
                     f"{mean(hg):+.2f}% ({', '.join(f'{g:+.1f}' for g in hg)}) |")
    table = "\n".join(lines)
    print(table)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    tokens_per_step = 2 * 8 * 64
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    colors = plt.get_cmap("tab20").colors
    for i, (name, tau, points, _, _, held_points) in enumerate(results):
        # Curves are means over seeds. DDP in black; τ = 12 dashed; the
        # defaults thicker than their ablations.
        if not tau:  # DDP per step: average over 12-step windows, like the rounds
            points = [(points[i + 11][0], sum(l for _, l in points[i:i + 12]) / 12)
                      for i in range(0, len(points) - 11, 12)]
        style = dict(label=name, color="black" if not tau else colors[i % 20],
                     linestyle="--" if tau and tau >= 12 else "-",
                     linewidth=2 if "," not in name else 1)
        left.plot([s * tokens_per_step for s, _ in points], [l for _, l in points], **style)
        right.plot([s * tokens_per_step for s, _ in held_points],
                   [l for _, l in held_points], **style)
    left.set_ylabel("training loss (mean over ranks)")
    right.set_ylabel("held-out loss every 48 steps (CO2: the anchor)")
    for ax in (left, right):
        ax.set_xlabel("samples (tokens, both ranks)")
        ax.set_ylim(top=3.5); ax.grid(alpha=0.3); ax.legend(fontsize=7)
    fig.suptitle(f"GPT on text, 2 ranks: DDP against CO2 (mean of seeds {args.seeds})")
    fig.tight_layout()
    plot = "co2_convergence_sweep.png" if args.runs else "co2_convergence.png"
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    with open(os.path.join(ROOT, "bench", "results", plot.replace(".png", ".json")), "w") as out:
        json.dump({"spec": SPEC, "steps": args.steps, "seeds": seeds, "runs": [
            {"name": name, "local_steps": tau, "training_loss": train, "heldout_loss": held,
             "training_curve": curve, "heldout_curve": held_curve}
            for name, tau, curve, train, held, held_curve in results]}, out)
    plt.savefig(os.path.join(ROOT, "bench", plot))
    if args.record:
        with open(os.path.join(ROOT, "bench", "RESULTS.md"), "a") as out:
            out.write(f"\n### CO2 convergence against DDP, {datetime.date.today()}\n\n")
            out.write(f"`{SPEC}`, 2 local ranks, {args.steps} steps of AdamW "
                      "(lr 3e-3, betas 0.9/0.95, wd 0.1, warmup 20, cosine to 3e-4) on "
                      "the first 90 % of /usr/share/common-licenses (held out: the last "
                      f"10 %), seeds {args.seeds}; for one seed every run sees the same "
                      "initial model and samples. Gaps to DDP are per seed, then "
                      "averaged; the held-out loss is `loom-run --eval` of the final "
                      "model (CO2: the mean of the ranks' local models).\n\n")
            runs_arg = f" --runs '{args.runs}'" if args.runs else ""
            runs_arg += f" --seeds {args.seeds}" if args.seeds != "1,2,3" else ""
            out.write(f"Command: `/usr/bin/python3 bench/co2_convergence.py --steps "
                      f"{args.steps}{runs_arg} --record`\n\n" + table + "\n\n"
                      f"![loss against samples]({plot})\n")


if __name__ == "__main__":
    sys.exit(main())
