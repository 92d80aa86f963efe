"""CO2 with a model whose outer all-reduce is large, on 2 local ranks (no
emulated link: the cost of the collective itself, not of the wire). The
same GPT, per-rank batch, AdamW and τ for
  - Loom CO2                                      (--co2=local-steps=TAU)
  - Loom CO2 with whole messages                  (LOOM_MPI_PIECE_BYTES=0:
    the round's all-reduce in one piece, as Loom did before it split large
    all-reduces and reduce-scatters into 8 MiB pieces)
  - the same two with the outer state sharded     (sharded=1: a
    reduce-scatter and an all-gather per round)
  - Loom synchronous DDP                          (--dp=2)
  - PyTorch 1.13 post-local SGD at the same τ     (post_localSGD_hook +
    PeriodicModelAverager, gloo)
  - PyTorch 1.13 DDP                              (gloo)
  - the no-communication ceiling of this machine: 2 one-rank Loom runs at once
and reports the mean step time (which counts the outer steps), tokens/s,
and each run's throughput against PyTorch post-local SGD and against the
ceiling. The median of --repeats runs of each; every repeat runs every
configuration once, so the drift of a shared machine touches them alike.
--record appends the table to bench/RESULTS.md.

Usage (after building; needs Debian's python3-torch):
  python3 bench/co2_local.py [--spec gpt:...] [--tau 4] [--repeats 2] [--record]"""
import argparse
import math
import os
import statistics
import sys
import tempfile

from clusterlib import (loom, loom_side_by_side, loomc, results_section,
                        spec_fields, torch)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spec", default="gpt:vocab=256,seq=64,dim=512,heads=8,layers=8,batch=2")
    ap.add_argument("--tau", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=6, help="timed outer rounds")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()
    f = spec_fields(args.spec)
    tokens = 2 * int(f["batch"]) * int(f["seq"])  # per step, both ranks
    steps, warmup = args.rounds * args.tau, args.tau
    runs = {}
    with tempfile.TemporaryDirectory() as tmp:
        art = lambda name: os.path.join(tmp, name)
        optimizer = "--optimizer=adamw:lr=1e-3"
        one = loomc(args.spec, art("one"), optimizer)
        loomc(args.spec, art("co2"), optimizer, "--dp=2", f"--co2=local-steps={args.tau}")
        loomc(args.spec, art("co2s"), optimizer, "--dp=2",
              f"--co2=local-steps={args.tau},sharded=1")
        loomc(args.spec, art("ddp"), optimizer, "--dp=2")
        whole = {"LOOM_MPI_PIECE_BYTES": "0"}
        params = sum(4 * math.prod(p["shape"]) for p in one["params"])
        configs = [
            ("Loom CO2", lambda: loom(art("co2"), None, steps, warmup, tmp)["mean"]),
            ("Loom CO2, whole messages (LOOM_MPI_PIECE_BYTES=0)",
             lambda: loom(art("co2"), None, steps, warmup, tmp, env=whole)["mean"]),
            ("Loom CO2, sharded", lambda: loom(art("co2s"), None, steps, warmup, tmp)["mean"]),
            ("Loom CO2, sharded, whole messages",
             lambda: loom(art("co2s"), None, steps, warmup, tmp, env=whole)["mean"]),
            ("Loom synchronous DDP", lambda: loom(art("ddp"), None, steps, warmup, tmp)["mean"]),
            ("PyTorch 1.13 post-local SGD",
             lambda: torch(args.spec, None, steps, warmup, local_sgd=args.tau)["mean"]),
            ("PyTorch 1.13 DDP", lambda: torch(args.spec, None, steps, warmup)["mean"]),
            ("ceiling: 2 one-rank Loom runs at once",
             lambda: loom_side_by_side(art("one"), 2, steps, warmup, tmp)),
        ]
        for r in range(args.repeats):
            for name, run in configs:
                print(f"repeat {r + 1}/{args.repeats}: {name}", file=sys.stderr)
                runs.setdefault(name, []).append(run())
    mean = {name: statistics.median(times) for name, times in runs.items()}
    peer = mean["PyTorch 1.13 post-local SGD"]
    ceiling = mean["ceiling: 2 one-rank Loom runs at once"]
    lines = ["| run | step (ms) | tokens/s | vs PyTorch post-local SGD | of the ceiling |",
             "|---|---|---|---|---|"]
    for name, _ in configs:
        lines.append(f"| {name} | {mean[name] * 1e3:.1f} | {tokens / mean[name]:.0f} | "
                     f"{peer / mean[name]:.2f}x | {ceiling / mean[name]:.2f} |")
    table = "\n".join(lines)
    print(table)
    if args.record:
        with results_section("CO2 with a large model on local ranks") as out:
            out.write(f"`{args.spec}` ({params / 2**20:.0f} MiB of parameters: the "
                      f"size of CO2's outer all-reduce), AdamW, 2 local ranks, one thread "
                      f"each, τ = {args.tau}, {steps} timed steps after {warmup}; mean "
                      f"step time, median of {args.repeats} runs each.\n\n")
            cmd = "python3 bench/co2_local.py" + (
                "" if args.spec == ap.get_default("spec") else f" --spec {args.spec}") + (
                "" if args.tau == 4 else f" --tau {args.tau}") + (
                "" if args.repeats == 2 else f" --repeats {args.repeats}") + " --record"
            out.write(f"Command: `{cmd}`\n\n")
            out.write(table + "\n")


if __name__ == "__main__":
    sys.exit(main())
