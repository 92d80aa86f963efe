"""loomc's compile time and peak memory against the depth of a GPT, with
the LLVM module built on one thread (--compile-threads=1: the module whole,
as before parallel builds) and on one thread per core (the default: parts of
whole functions, lib/Driver/PartitionModule.h), both in this run on this
machine. Also the step time of the two artifacts of the first depth (the
parts keep the module's code, instruction for instruction: a check, not a
speed benchmark).

Prints a Markdown table; with --record, appends it and the command to
bench/RESULTS.md.

Usage: python3 bench/compile_time.py [--depths 2,12] [--dim 128]
       [--target cpu|cuda] [--record]
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


def compile_once(model, out, threads, target):
    """(seconds, peak resident MiB) of one loomc run."""
    cmd = [os.path.join(BIN, "loomc"), f"--model={model}", "-o", out,
           f"--compile-threads={threads}", f"--target={target}"]
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--depths", default="2,12")
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--target", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()
    depths = [int(d) for d in args.depths.split(",")]
    cores = os.cpu_count()
    rows, first = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for depth in depths:
            model = spec(depth, args.dim)
            one = compile_once(model, os.path.join(tmp, f"one{depth}"), 1,
                               args.target)
            par = compile_once(model, os.path.join(tmp, f"par{depth}"), 0,
                               args.target)
            first.setdefault("one", one[0])
            rows.append((depth, one, par))
            print(f"layers={depth}: 1 thread {one[0]:.1f} s {one[1]:.0f} MiB;"
                  f" {cores} threads {par[0]:.1f} s {par[1]:.0f} MiB",
                  file=sys.stderr)
        d0 = depths[0]
        steps = None
        # Alternated, three runs each: the machine is shared and noisy.
        runs = {"one": [], "par": []}
        for _ in range(3 if args.target == "cpu" else 0):
            for kind in runs:
                runs[kind].append(step_ms(os.path.join(tmp, f"{kind}{d0}")))
        if runs["one"]:
            steps = (statistics.median(runs["one"]),
                     statistics.median(runs["par"]))
    table = ["| layers | 1 thread: time | peak | vs first depth | "
             f"{cores} threads: time | peak | speed-up |",
             "|---|---|---|---|---|---|---|"]
    for depth, one, par in rows:
        table.append(f"| {depth} | {one[0]:.1f} s | {one[1]:.0f} MiB | "
                     f"{one[0] / first['one']:.1f}x | {par[0]:.1f} s | "
                     f"{par[1]:.0f} MiB | {one[0] / par[0]:.2f}x |")
    note = "" if not steps else (
        f"Step time of the {d0}-layer artifacts (the median of three "
        f"alternated runs' medians of 19 steps, one BLAS thread): "
        f"{steps[0]:.2f} ms built whole, {steps[1]:.2f} ms built in parts "
        f"({steps[1] / steps[0]:.2f}x).")
    text = "\n".join(table) + "\n" + (f"\n{note}\n" if note else "")
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
