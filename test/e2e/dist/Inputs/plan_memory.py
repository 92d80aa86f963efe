"""Compares the memory per rank loomc --plan predicted for its winner (the
"winner memory per rank: key=value ..." line of its output) with what
loom-run reported in its --metrics summary under the same keys.

usage: plan_memory.py PLAN_OUTPUT METRICS
"""
import json
import sys

plan_path, metrics_path = sys.argv[1:3]
planned = {}
with open(plan_path) as f:
    for line in f:
        if line.startswith("winner memory per rank:"):
            for item in line.split(":", 1)[1].split():
                key, value = item.split("=")
                planned[key] = int(value)
summary = None
with open(metrics_path) as f:
    for line in f:
        record = json.loads(line)
        if "summary" in record:
            summary = record["summary"]
if not planned or summary is None:
    sys.exit("no plan line or no metrics summary")
for key in ("param_bytes", "grad_bytes", "optimizer_state_bytes"):
    reported = summary.get(key)
    verdict = "equal" if reported == planned[key] else "DIFFERENT"
    print(f"{key}: planned {planned[key]}, reported {reported}: {verdict}")
