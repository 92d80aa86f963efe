"""CO2 convergence against DDP on text: the quickstart GPT and optimizer
(scripts/quickstart.sh) on 2 local ranks for --steps steps, trained with
  - Loom synchronous DDP                            (loomc --dp=2)
  - Loom DDP with a 10 % larger learning rate: how far DDP moves from itself
    under a change that should not matter, the yardstick for the gaps below
  - Loom CO2 with τ = 4 and τ = 12                  (defaults: α 0.8, β 0, λ 2, φ 1)
  - ablations at τ = 4 and 12: no gap penalty, no clip, neither, a clip
    tight enough to bind, and (τ = 4) no gap penalty with the outer step
    uniformly damped instead (α 0.45)
--runs SPEC;SPEC;... replaces the CO2 runs (each a --co2 spec), for sweeps;
the two DDP runs always come first.
--corpus picks the text:
  docstrings  the docstrings of /usr/bin/python3's standard library (1.6 MB
              of English on Python 3.11): 1200 steps read 0.8 of it, so
              training loss measures learning, not memorising (default)
  licenses    /usr/share/common-licenses (0.3 MB, the quickstart's text):
              1200 steps read it 4.5 times and the 120k-parameter model
              starts memorising it at a seed-dependent step, which makes
              the final training loss chaotic (bench/RESULTS.md)
Each run is repeated for every seed of --seeds (default 1,2,3,4,5). For one
seed every run sees the same initial model and samples (2 ranks x batch 8
per step, the same windows of the corpus). The training loss of a step is
the mean over ranks (DDP: per step; CO2: per round, as round_loss). Reports
the mean loss over the last 100 steps and its gap to DDP, and the held-out
loss of the final model (loom-run --eval over the last tenth of the corpus,
which no run trains on; for CO2 the mean of the ranks' final local models),
writes bench/co2_convergence[_licenses][_sweep].png (and its numbers to
bench/results/); --record appends to bench/RESULTS.md; --replot redraws
the plot from those numbers without training.

Usage: /usr/bin/python3 bench/co2_convergence.py [--steps 1200] [--corpus docstrings|licenses]
           [--runs SPECS] [--seeds 1,2,3,4,5] [--record | --replot]"""
import argparse
import ast
import glob
import json
import os
import sys
import sysconfig
import tempfile

from clusterlib import BIN, ROOT, loomc, results_section, sh

SPEC = "gpt:vocab=256,seq=64,dim=64,heads=4,layers=2,batch=8"


def docstrings():
    """The docstrings (over 40 characters) of the Python standard library,
    in file order: English prose about programs, the same on every machine
    with the same Python."""
    stdlib = sysconfig.get_paths()["stdlib"]
    texts = []
    for path in sorted(glob.glob(os.path.join(stdlib, "**", "*.py"), recursive=True)):
        if "/test" in path or "-packages" in path:
            continue
        try:
            tree = ast.parse(open(path, encoding="utf-8").read())
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                 ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node)
                if doc and len(doc) > 40:
                    texts.append(doc.strip())
    return "\n\n".join(texts).encode("ascii", "ignore")


def licenses():
    return b"".join(open(path, "rb").read()
                    for path in sorted(glob.glob("/usr/share/common-licenses/*"))
                    if os.path.isfile(path))


CORPORA = {"docstrings": (docstrings, "the docstrings of the Python standard library "
                          f"(Python {sys.version_info[0]}.{sys.version_info[1]})"),
           "licenses": (licenses, "/usr/share/common-licenses")}


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


WINDOW = 48


def windowed(points):
    """[(last step, mean loss)] over windows of WINDOW steps: DDP's per-step
    and CO2's per-round losses on one readable scale (τ divides WINDOW)."""
    windows = {}
    for step, loss in points:
        windows.setdefault((step - 1) // WINDOW, []).append((step, loss))
    return [(max(s for s, _ in w), sum(l for _, l in w) / len(w))
            for _, w in sorted(windows.items())]


def report(results, seeds, plot):
    """Prints the table of `results` and draws bench/PLOT; returns the table."""
    mean = lambda xs: sum(xs) / len(xs)
    ddp_train, ddp_held = results[0][3], results[0][4]

    def gaps(values, ref):
        return [100 * (v - r) / r for v, r in zip(values, ref)]

    lines = ["| run | training loss, last 100 steps | vs DDP (per seed) "
             "| held-out loss, final model | vs DDP (per seed) |",
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
        # Curves are means over seeds. DDP in black (against itself: grey);
        # τ = 12 dashed; the defaults thicker than their ablations.
        points = windowed(points)
        style = dict(label=name, color=("grey" if i else "black") if not tau
                     else colors[i % 20],
                     linestyle="--" if tau and tau >= 12 else "-",
                     linewidth=2 if "," not in name else 1)
        left.plot([s * tokens_per_step for s, _ in points], [l for _, l in points], **style)
        right.plot([s * tokens_per_step for s, _ in held_points],
                   [l for _, l in held_points], **style)
    left.set_ylabel(f"training loss (mean over ranks and {WINDOW} steps)")
    right.set_ylabel("held-out loss every 48 steps (CO2: the anchor)")
    for ax in (left, right):
        ax.set_xlabel("samples (tokens, both ranks)")
        ax.set_ylim(top=3.5); ax.grid(alpha=0.3); ax.legend(fontsize=7)
    fig.suptitle(f"GPT on text, 2 ranks: DDP against CO2 (mean of seeds {seeds})")
    fig.tight_layout()
    plt.savefig(os.path.join(ROOT, "bench", plot))
    return table


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=1200)
    ap.add_argument("--record", action="store_true")
    ap.add_argument("--seeds", default="1,2,3,4,5",
                    help="every run is repeated with each seed (init and data order "
                         "are the same across runs for one seed); gaps are per seed, "
                         "then averaged")
    ap.add_argument("--corpus", choices=sorted(CORPORA), default="docstrings")
    ap.add_argument("--runs", help="CO2 specs separated by ';' instead of the default set")
    ap.add_argument("--replot", action="store_true",
                    help="redraw the plot (and print the table) from the numbers the last "
                         "run with the same --corpus and --runs saved under bench/results/, "
                         "without training")
    args = ap.parse_args()
    plot = ("co2_convergence" + ("_licenses" if args.corpus == "licenses" else "")
            + ("_sweep" if args.runs else "") + ".png")
    saved = os.path.join(ROOT, "bench", "results", plot.replace(".png", ".json"))
    if args.replot:
        if not os.path.exists(saved):
            sys.exit(f"co2_convergence: nothing saved at {saved}: run once without --replot")
        data = json.load(open(saved))
        results = [(r["name"], r["local_steps"], r["training_curve"], r["training_loss"],
                    r["heldout_loss"], r["heldout_curve"]) for r in data["runs"]]
        report(results, ",".join(map(str, data["seeds"])), plot)
        return 0
    # (name, tau, --co2 spec, learning rate)
    lr = "3e-3"
    runs = [("DDP", 0, None, lr), ("DDP, lr 3.3e-3 (DDP against itself)", 0, None, "3.3e-3")]
    if args.runs:
        for spec in args.runs.split(";"):
            tau = int(dict(f.split("=") for f in spec.split(",")).get("local-steps", 12))
            runs.append((f"CO2 {spec}", tau, spec, lr))
    else:
        for tau in (4, 12):
            t = f"local-steps={tau}"
            runs += [(f"CO2 τ={tau}", tau, t, lr),
                     (f"CO2 τ={tau}, no gap penalty", tau, t + ",gap-penalty=0", lr)]
            if tau == 4:
                runs.append((f"CO2 τ={tau}, no gap penalty, α 0.45", tau,
                             t + ",gap-penalty=0,outer-lr=0.45", lr))
            runs += [(f"CO2 τ={tau}, no clip", tau, t + ",clip=0", lr),
                     (f"CO2 τ={tau}, neither", tau, t + ",gap-penalty=0,clip=0", lr),
                     (f"CO2 τ={tau}, clip 0.002 (binds)", tau, t + ",clip=0.002", lr)]
    optimizer = lambda lr: [f"--optimizer=adamw:lr={lr},beta1=0.9,beta2=0.95,wd=0.1",
                            "--warmup-steps=20", f"--decay-steps={args.steps}",
                            "--min-lr=3e-4"]
    seeds = [int(x) for x in args.seeds.split(",")]
    # (name, tau, mean training curve, [training loss], [held-out loss],
    #  mean held-out curve) per run
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        corpus = os.path.join(tmp, "corpus.txt")
        heldout = os.path.join(tmp, "heldout.txt")
        make, corpus_name = CORPORA[args.corpus]
        text = make()
        passes = args.steps * 2 * 8 * 64 / (len(text) * 9 // 10)
        print(f"corpus: {corpus_name}, {len(text)} bytes; {args.steps} steps read "
              f"{passes:.2f} times its training part", flush=True)
        split = len(text) * 9 // 10
        with open(corpus, "wb") as out:
            out.write(text[:split])
        with open(heldout, "wb") as out:
            out.write(text[split:])
        for name, tau, co2, run_lr in runs:
            art = os.path.join(tmp, "a")
            flags = ["--dp=2", *optimizer(run_lr)] + ([f"--co2={co2}"] if co2 else [])
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
    table = report(results, args.seeds, plot)
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    with open(saved, "w") as out:
        json.dump({"spec": SPEC, "steps": args.steps, "seeds": seeds,
                   "corpus": args.corpus, "corpus_bytes": len(text), "runs": [
            {"name": name, "local_steps": tau, "training_loss": train, "heldout_loss": held,
             "training_curve": curve, "heldout_curve": held_curve}
            for name, tau, curve, train, held, held_curve in results]}, out)
    if args.record:
        with results_section("CO2 convergence against DDP") as out:
            out.write(f"`{SPEC}`, 2 local ranks, {args.steps} steps of AdamW "
                      "(lr 3e-3, betas 0.9/0.95, wd 0.1, warmup 20, cosine to 3e-4) on "
                      f"the first 90 % of {corpus_name} ({len(text) / 1e6:.2f} MB; the "
                      f"run reads its training part {passes:.2f} times; held out: the "
                      f"last 10 %), seeds {args.seeds}; for one seed every run sees the "
                      "same initial model and samples. Gaps to DDP are per seed, then "
                      "averaged; the held-out loss is `loom-run --eval` of the final "
                      "model (CO2: the mean of the ranks' local models).\n\n")
            runs_arg = f" --corpus {args.corpus}" if args.corpus != "docstrings" else ""
            runs_arg += f" --runs '{args.runs}'" if args.runs else ""
            runs_arg += f" --seeds {args.seeds}" if args.seeds != "1,2,3,4,5" else ""
            out.write(f"Command: `/usr/bin/python3 bench/co2_convergence.py --steps "
                      f"{args.steps}{runs_arg} --record`\n\n" + table + "\n\n"
                      f"![loss against samples]({plot})\n")


if __name__ == "__main__":
    sys.exit(main())
