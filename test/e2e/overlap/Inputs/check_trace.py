"""Checks a `loom-run --trace` file: Chrome trace JSON with "compute" (tid 0)
and "comm" (tid 1) lanes named for every rank, comm events that carry bytes
and op, and, on some rank, a collective that ran while that rank computed
(inside a step and not covered by the rank's waits).

usage: check_trace.py TRACE --ranks N
"""
import argparse
import json
import sys

ap = argparse.ArgumentParser()
ap.add_argument("trace")
ap.add_argument("--ranks", type=int, required=True)
args = ap.parse_args()

with open(args.trace) as f:
    events = json.load(f)["traceEvents"]


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
         if e["ph"] == "M" and e["name"] == "thread_name"}
complete = [e for e in events if e["ph"] == "X"]
for rank in range(args.ranks):
    if names.get((rank, 0)) != "compute" or names.get((rank, 1)) != "comm":
        fail(f"rank {rank} lacks the compute/comm thread names: {names}")
    for tid in (0, 1):
        if not any(e["pid"] == rank and e["tid"] == tid for e in complete):
            fail(f"rank {rank} has no events in lane {tid}")
comm = [e for e in complete if e["tid"] == 1]
for e in comm:
    if not isinstance(e.get("args", {}).get("bytes"), int) or \
            e["args"]["bytes"] <= 0 or not e["args"].get("op"):
        fail(f"comm event without bytes/op: {e}")
    if e["dur"] < 0 or e["ts"] < 0:
        fail(f"bad times: {e}")
print(f"ranks {args.ranks}, {len(comm)} comm events, "
      f"{len(complete) - len(comm)} compute events")


def hidden(rank):
    """Microseconds of comm that ran inside a step outside every wait."""
    steps = [(e["ts"], e["ts"] + e["dur"]) for e in complete
             if e["pid"] == rank and e["tid"] == 0 and
             e["name"].startswith("step")]
    waits = sorted((e["ts"], e["ts"] + e["dur"]) for e in complete
                   if e["pid"] == rank and e["tid"] == 0 and
                   e["name"] == "wait")
    total = 0.0
    for e in comm:
        if e["pid"] != rank:
            continue
        a, b = e["ts"], e["ts"] + e["dur"]
        for s0, s1 in steps:
            lo, hi = max(a, s0), min(b, s1)
            if hi <= lo:
                continue
            covered = sum(max(0.0, min(hi, w1) - max(lo, w0))
                          for w0, w1 in waits)
            total += (hi - lo) - covered
    return total


best = max(hidden(r) for r in range(args.ranks))
if best <= 0:
    fail("no collective overlaps compute on any rank")
print("comm overlaps compute: yes")
