"""Compares what each rank of a pipelined run holds (its --metrics
summary: param_bytes, optimizer_state_bytes) with a one-rank run of the
whole model: every stage holds less, and the stages together hold the
whole (a tied embedding held by two stages counted twice, so at least it).

usage: pipeline_memory.py ONE_METRICS PIPELINED_METRICS (rank 0's path;
the other ranks' are PATH.rank<r>)
"""
import json
import os
import sys


def summary(path):
    with open(path) as f:
        for line in f:
            record = json.loads(line)
            if "summary" in record:
                return record["summary"]
    sys.exit(f"{path}: no metrics summary")


one_path, staged_path = sys.argv[1:3]
whole = summary(one_path)
stages = [summary(staged_path)]
rank = 1
while os.path.exists(f"{staged_path}.rank{rank}"):
    stages.append(summary(f"{staged_path}.rank{rank}"))
    rank += 1
for key in ("param_bytes", "optimizer_state_bytes"):
    held = [s[key] for s in stages]
    print(f"{key}: whole {whole[key]}, stages {held}")
below = all(s[k] < whole[k] for s in stages
            for k in ("param_bytes", "optimizer_state_bytes"))
covered = sum(s["param_bytes"] for s in stages) >= whole["param_bytes"]
print(f"stage params below the whole model's: {below and covered}")
