"""Compares the memory per rank loomc --plan predicted for its winner (the
"winner memory per rank: key=value ..." line of its output) with what
loom-run reported in its --metrics summary under the same keys: of the rank
that holds the most (the stages of a pipeline hold different parameters;
the plan gives the largest).

usage: plan_memory.py PLAN_OUTPUT METRICS (rank 0's; the other ranks' are
METRICS.rank<r>)
"""
import sys

from metrics_summaries import rank_summaries

plan_path, metrics_path = sys.argv[1:3]
planned = {}
with open(plan_path) as f:
    for line in f:
        if line.startswith("winner memory per rank:"):
            for item in line.split(":", 1)[1].split():
                key, value = item.split("=")
                planned[key] = int(value)
KEYS = ("param_bytes", "grad_bytes", "optimizer_state_bytes")
summaries = rank_summaries(metrics_path)
summary = None
if all(summaries):
    summary = max(summaries, key=lambda s: sum(s[k] for k in KEYS))
if not planned or summary is None:
    sys.exit("no plan line or no metrics summary")
for key in KEYS:
    reported = summary.get(key)
    verdict = "equal" if reported == planned[key] else "DIFFERENT"
    print(f"{key}: planned {planned[key]}, reported {reported}: {verdict}")
