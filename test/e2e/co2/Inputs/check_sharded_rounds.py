"""Checks the collectives of a sharded CO2 run (--co2=...,sharded=1) from its
trace: on every rank, the first outer step gathers the first anchor once
(all_gather, synchronous); every later round k is a mean reduce-scatter of
the local models issued at the outer step that ends round k (step k*TAU)
and an all-gather of the new anchor slices, both of SHARD_BYTES per rank,
with the round's stop vote (a sum of one f64, docs/robustness.md) between
them in the queue, and when the run goes on all three finish before the
outer step of round k+1: they span the next round's local steps.

usage: check_sharded_rounds.py TRACE --ranks N --tau TAU --steps S --shard-bytes B"""
import argparse
import json
import sys

ap = argparse.ArgumentParser()
ap.add_argument("trace")
ap.add_argument("--ranks", type=int, required=True)
ap.add_argument("--tau", type=int, required=True)
ap.add_argument("--steps", type=int, required=True)
ap.add_argument("--shard-bytes", type=int, required=True)
args = ap.parse_args()


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


events = [e for e in json.load(open(args.trace))["traceEvents"] if e["ph"] == "X"]
rounds = args.steps // args.tau
for rank in range(args.ranks):
    steps = {int(e["name"].split()[1]): (e["ts"], e["ts"] + e["dur"])
             for e in events if e["pid"] == rank and e["name"].startswith("step ")}
    comm = sorted((e for e in events if e["pid"] == rank and e["tid"] == 1),
                  key=lambda e: e["ts"])
    kinds = [(e["name"], e["args"]["op"], e["args"]["bytes"]) for e in comm]
    expected = [("all_gather", "gather", args.shard_bytes)] + \
        [("reduce_scatter", "mean", args.shard_bytes),
         ("all_reduce", "sum", 8),
         ("all_gather", "gather", args.shard_bytes)] * rounds
    if kinds != expected:
        fail(f"rank {rank}: collectives {kinds}, expected {expected}")
    for k in range(1, rounds + 1):
        rs, ag = comm[3 * k - 2], comm[3 * k]
        if rs["ts"] < steps[k * args.tau][0]:
            fail(f"rank {rank}: round {k}'s reduce-scatter started before step {k * args.tau}")
        later = (k + 1) * args.tau
        if later in steps:
            if ag["ts"] + ag["dur"] > steps[later][1]:
                fail(f"rank {rank}: round {k}'s all-gather outlived step {later}")
            spans = [s for s in range(k * args.tau + 1, later)
                     if ag["ts"] + ag["dur"] > steps[s][0]]
            print(f"rank {rank}: round {k} reduce-scatter and all-gather overlap local steps {spans}")
print(f"{args.ranks} ranks: one gather, then {rounds} rounds of reduce-scatter + stop vote + all-gather")
