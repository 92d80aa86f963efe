"""loomc's compile time and peak memory against the depth of a GPT, two
ways of compiling each in this run on this machine, and the step time of
the two artifacts of the first depth (alternated, three runs each):

  --compare outline (default): the step's loop nests as one function each,
      the same nests (every layer's) one function (--loom-outline-loop-nests,
      the default) against the step as one function (--outline-nests=false,
      as before); both on one thread per core;
  --compare threads: the LLVM module built on one thread (--compile-threads=1)
      against one thread per core (parts of whole functions,
      lib/Driver/PartitionModule.h);
  --compare segments: each entry cut into functions of at most 2000 ops
      (--segment-ops=2000) against the entries whole (--segment-ops=0),
      both with the nests outlined;
  --compare layers: each entry's repeated runs, a model's layers, compiled
      once (--loom-outline-layers, the default) against every layer's copy
      compiled (--outline-layers=false);
  --compare roll: each entry's runs of layer calls one loop over the layers
      (--loom-roll-layer-calls, the default) against one call per layer
      (--roll-layers=false), both with the layers compiled once.

Prints a Markdown table; with --record, appends it and the command to
bench/RESULTS.md.

Usage: python3 bench/compile_time.py [--depths 2,12] [--dim 128]
       [--target cpu|cuda] [--compare outline|threads|segments|layers|roll]
       [--record]
(cuda: compiles only, through ptxas; no step time without a GPU)
(run from the repository root after building)"""
import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

from clusterlib import results_section

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "bin")


def spec(depth, dim):
    return (f"gpt:vocab=256,seq=128,dim={dim},heads=4,layers={depth},"
            f"batch=8")


def compile_once(model, out, flags, target):
    """(seconds, peak resident MiB) of one loomc run."""
    cmd = [os.path.join(BIN, "loomc"), f"--model={model}", "-o", out,
           f"--target={target}"] + flags
    start = time.monotonic()
    child = subprocess.Popen(cmd)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.monotonic() - start
    if status != 0:
        sys.exit(f"failed: {' '.join(cmd)}")
    return seconds, usage.ru_maxrss / 1024.0


def step_ms(artifact, steps=20):
    """The median step time (ms) after the first, one BLAS thread."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    out = subprocess.run([os.path.join(BIN, "loom-run"), artifact, "--steps",
                          str(steps), "--log-every", "1"], env=env,
                         check=True, text=True, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT).stdout
    times = [float(m) for m in re.findall(r"([0-9.]+) ms/step", out)]
    return statistics.median(times[1:])


def variants(compare, cores):
    """The two ways of compiling compared: (label, loomc flags) each, the
    one before first."""
    if compare == "threads":
        return [("1 thread", ["--compile-threads=1"]),
                (f"{cores} threads", ["--compile-threads=0"])]
    if compare == "segments":
        return [("entries whole", ["--segment-ops=0"]),
                ("entries in segments", ["--segment-ops=2000"])]
    if compare == "roll":
        return [("calls per layer", ["--roll-layers=false"]),
                ("layers a loop", [])]
    if compare == "layers":
        return [("every layer", ["--outline-layers=false"]),
                ("layers once", [])]
    return [("one function", ["--outline-nests=false"]),
            ("nests outlined", [])]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--depths", default="2,12")
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--target", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--compare", default="outline", choices=["outline", "threads", "segments",
                             "layers", "roll"])
    ap.add_argument("--first-up-to", type=int, default=None,
                    help="compile the first way only up to this depth (the "
                         "step as one function takes minutes and gigabytes "
                         "beyond 12 layers)")
    ap.add_argument("--step-model", default=None,
                    help="the model whose two artifacts' step times are "
                         "compared (default: the first depth's)")
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()
    depths = [int(d) for d in args.depths.split(",")]
    cores = os.cpu_count()
    (label_a, flags_a), (label_b, flags_b) = variants(args.compare, cores)
    rows, first = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for depth in depths:
            model = spec(depth, args.dim)
            skip = args.first_up_to is not None and depth > args.first_up_to
            a = None if skip else compile_once(
                model, os.path.join(tmp, f"a{depth}"), flags_a, args.target)
            b = compile_once(model, os.path.join(tmp, f"b{depth}"), flags_b,
                             args.target)
            if a:
                first.setdefault("a", a[0])
            first.setdefault("b", b[0])
            rows.append((depth, a, b))
            print(f"layers={depth}: {label_a} " +
                  (f"{a[0]:.1f} s {a[1]:.0f} MiB" if a else "not compiled") +
                  f"; {label_b} {b[0]:.1f} s {b[1]:.0f} MiB", file=sys.stderr)
        d0 = depths[0]
        steps = None
        step_model = args.step_model or spec(d0, args.dim)
        if args.step_model and args.target == "cpu":
            for kind, flags in (("a", flags_a), ("b", flags_b)):
                compile_once(step_model, os.path.join(tmp, f"{kind}{d0}"),
                             flags, args.target)
        # Alternated, three runs each: the machine is shared and noisy.
        runs = {"a": [], "b": []}
        for _ in range(3 if args.target == "cpu" else 0):
            for kind in runs:
                runs[kind].append(step_ms(os.path.join(tmp, f"{kind}{d0}")))
        if runs["a"]:
            steps = (statistics.median(runs["a"]),
                     statistics.median(runs["b"]))
    table = [f"| layers | {label_a}: time | peak | vs first depth | "
             f"{label_b}: time | peak | vs first depth | speed-up |",
             "|---|---|---|---|---|---|---|---|"]
    for depth, a, b in rows:
        before = (f"{a[0]:.1f} s | {a[1]:.0f} MiB | {a[0] / first['a']:.1f}x"
                  if a else "- | - | -")
        table.append(f"| {depth} | {before} | {b[0]:.1f} s | "
                     f"{b[1]:.0f} MiB | {b[0] / first['b']:.1f}x | " +
                     (f"{a[0] / b[0]:.2f}x |" if a else "- |"))
    by_depth = {depth: (a, b) for depth, a, b in rows}
    if 12 in by_depth and 48 in by_depth:
        ratios = [f"{label}: {by_depth[48][i][0] / by_depth[12][i][0]:.2f}x"
                  for i, label in ((0, label_a), (1, label_b))
                  if by_depth[48][i] and by_depth[12][i]]
        print("48 layers against 12: " + ", ".join(ratios), file=sys.stderr)
        rows_note = "48 layers against 12: " + ", ".join(ratios) + ".\n"
    else:
        rows_note = ""
    note = "" if not steps else (
        f"Step time of `{step_model}` (the median of three "
        f"alternated runs' medians of 19 steps, one BLAS thread): "
        f"{steps[0]:.2f} ms ({label_a}), {steps[1]:.2f} ms ({label_b}) "
        f"({steps[1] / steps[0]:.2f}x).")
    text = "\n".join(table) + "\n" + (f"\n{rows_note}" if rows_note else "") + (
        f"\n{note}\n" if note else "")
    print(text)
    if args.record:
        cmd = "python3 bench/compile_time.py " + " ".join(sys.argv[1:])
        title = "loomc compile time against depth" + (
            " (cuda)" if args.target == "cuda" else "")
        with results_section(title, host=True) as out:
            out.write(f"`{cmd.replace(' --record', '')}` ({spec('N', args.dim)}, "
                      f"{args.target} target, {cores} cores)\n\n{text}")


if __name__ == "__main__":
    main()
