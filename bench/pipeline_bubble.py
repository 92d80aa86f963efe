"""The pipeline bubble of loomc --pp, measured from loom-run's Chrome trace
against the 1F1B schedule's (P-1)/(M+P-1).

A GPT of 8 layers (4 per stage: the embedding and the head are a small
part of a stage) runs on P = 2 ranks with M micro-batches of 2 rows each
(the step's batch 2M), for STEPS steps, --trace. On a rank, the time a
step waits is the time in its receives (a stage waiting for its
neighbour's activation or gradient) and in the collectives at the step's
end (the loss summed over the stages; the last stage waits there while the
first finishes its cool-down backwards). The measured bubble is that
waiting over the step's time; the median over the ranks and the steps
after the first two. 2 ranks on this machine's 2 cores: one core each, and a
rank that waits sleeps between polls (MpiCommunicator::complete) rather
than taking its neighbour's core.

usage: python3 bench/pipeline_bubble.py [--steps N] [--micro 1,2,4,8,16]
       [--record]   (appends the table to bench/RESULTS.md)
"""
import argparse
import json
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clusterlib import BIN, loomc, results_section, sh  # noqa: E402

SPEC = "gpt:vocab=64,seq=64,dim=128,heads=4,layers=8,batch={batch}"
STAGES = 2
WAITS = {"recv", "all_reduce"}


def step_bubbles(trace_path):
    """Per rank, per step after the first two: waiting / step time."""
    with open(trace_path) as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    bubbles = []
    for pid in sorted({e["pid"] for e in events if "pid" in e}):
        steps = sorted((e for e in events if e.get("pid") == pid and
                        e.get("name", "").startswith("step ")),
                       key=lambda e: e["ts"])[2:]
        for step in steps:
            begin, end = step["ts"], step["ts"] + step["dur"]
            waited = sum(e["dur"] for e in events
                         if e.get("pid") == pid and e.get("name") in WAITS
                         and begin <= e["ts"] < end)
            bubbles.append(waited / step["dur"])
    return bubbles


def measure(micro, steps, work):
    out = os.path.join(work, f"m{micro}")
    loomc(SPEC.format(batch=2 * micro), out, f"--pp={STAGES}",
          f"--micro-batches={micro}")
    trace = os.path.join(work, f"m{micro}.json")
    sh([os.path.join(BIN, "loom-run"), out, "--ranks", str(STAGES), "--steps",
        str(steps), "--trace", trace])
    bubbles = step_bubbles(trace)
    # The median: a step of a 2-core machine is now and then stretched by
    # whatever else runs (a rank descheduled while its neighbour waits).
    quartiles = statistics.quantiles(bubbles, n=4)
    return statistics.median(bubbles), (quartiles[2] - quartiles[0]) / 2


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--micro", default="1,2,4,8,16")
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for micro in [int(m) for m in args.micro.split(",")]:
            bubble, spread = measure(micro, args.steps, work)
            ideal = (STAGES - 1) / (micro + STAGES - 1)
            rows.append((micro, ideal, bubble, spread, bubble / ideal))
            print(f"M={micro}: bubble {bubble:.3f} (median; half the "
                  f"interquartile range {spread:.3f}), "
                  f"(P-1)/(M+P-1) = {ideal:.3f}, ratio {bubble / ideal:.2f}",
                  flush=True)
    table = ["| M | (P-1)/(M+P-1) | measured bubble (median ± half IQR) "
             "| ratio |",
             "|---|---|---|---|"]
    table += [f"| {m} | {i:.3f} | {b:.3f} ± {s:.3f} | {r:.2f} |"
              for m, i, b, s, r in rows]
    print("\n".join(table))
    if args.record:
        with results_section("Pipeline bubble against 1F1B's (P-1)/(M+P-1)",
                             host=True) as out:
            out.write(f"`python3 bench/pipeline_bubble.py --steps "
                      f"{args.steps} --micro {args.micro}`: "
                      f"{SPEC.format(batch='2M')}, --pp={STAGES}, 2 ranks on "
                      f"2 cores; waiting (receives and the step's closing "
                      f"collectives) over step time, median over steps "
                      f"3..{args.steps} of both ranks.\n\n" + "\n".join(table) + "\n")


if __name__ == "__main__":
    main()
