"""Checks the schedule of a CO2 run from its trace and metrics: every rank
runs one mean all-reduce of all trained parameters and the round's loss
(BYTES) per outer round,
issued at the outer step that ends round k (step k*TAU) and, when the run
goes on, finished before the outer step of round k+1: it spans the next
round's TAU local steps. Right after it on the communication thread comes
the round's stop vote (a sum of one f64, docs/robustness.md), and nothing
else: local steps run no collective. The metrics carry round_loss (the
previous round's, which travels with its all-reduce) exactly at outer steps
after the first.

usage: check_rounds.py TRACE METRICS --ranks N --tau TAU --steps S --bytes B"""
import argparse
import json
import sys

ap = argparse.ArgumentParser()
ap.add_argument("trace")
ap.add_argument("metrics")
ap.add_argument("--ranks", type=int, required=True)
ap.add_argument("--tau", type=int, required=True)
ap.add_argument("--steps", type=int, required=True)
ap.add_argument("--bytes", type=int, required=True)
args = ap.parse_args()


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


events = [e for e in json.load(open(args.trace))["traceEvents"] if e["ph"] == "X"]
for rank in range(args.ranks):
    steps = {int(e["name"].split()[1]): (e["ts"], e["ts"] + e["dur"])
             for e in events if e["pid"] == rank and e["name"].startswith("step ")}
    comm = sorted((e for e in events if e["pid"] == rank and e["tid"] == 1),
                  key=lambda e: e["ts"])
    rounds = args.steps // args.tau
    if len(comm) != 2 * rounds:
        fail(f"rank {rank}: {len(comm)} collectives, expected two per round "
             f"({rounds} rounds): the all-reduce and the stop vote")
    for k, (e, vote) in enumerate(zip(comm[0::2], comm[1::2]), start=1):
        if vote["args"] != {"bytes": 8, "op": "sum"} or vote["ts"] + 1 < e["ts"] + e["dur"]:  # us, rounded
            fail(f"rank {rank}: round {k}'s all-reduce is followed by {vote['args']} "
                 f"at {vote['ts']}, expected its stop vote (a sum of 8 bytes) after it")
        if e["args"]["bytes"] != args.bytes or e["args"]["op"] != "mean":
            fail(f"rank {rank}: collective {k} is {e['args']}, expected a mean of {args.bytes} bytes")
        # Issued at the outer step (the communication thread runs it as soon
        # as it is scheduled, which on a loaded machine can be a step later).
        if e["ts"] < steps[k * args.tau][0]:
            fail(f"rank {rank}: round {k}'s all-reduce started before step {k * args.tau}")
        later = (k + 1) * args.tau
        if later in steps:
            # Finished before the next outer step waited for it (waits are
            # timed on the compute lane; the collective ends first).
            if e["ts"] + e["dur"] > steps[later][1]:
                fail(f"rank {rank}: round {k}'s all-reduce outlived step {later}")
            spans = [s for s in range(k * args.tau + 1, later)
                     if e["ts"] + e["dur"] > steps[s][0]]
            print(f"rank {rank}: round {k} all-reduce overlaps local steps {spans}")
lines = [json.loads(l) for l in open(args.metrics) if '"summary"' not in l]
for line in lines:
    # An outer step reports the previous round's loss: none at the first.
    outer = line["step"] % args.tau == 0 and line["step"] > args.tau
    if outer != ("round_loss" in line):
        fail(f"round_loss at step {line['step']}: {'missing' if outer else 'unexpected'}")
print(f"{len(lines)} steps, round_loss at every outer step after the first only")
