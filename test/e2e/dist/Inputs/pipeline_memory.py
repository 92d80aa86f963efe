"""Compares what each rank of a pipelined run holds (its --metrics
summary: param_bytes, optimizer_state_bytes) with a one-rank run of the
whole model: every stage holds less, and the stages together hold the
whole (a tied embedding held by two stages counted twice, so at least it).

usage: pipeline_memory.py ONE_METRICS PIPELINED_METRICS (rank 0's path;
the other ranks' are PATH.rank<r>)
"""
import sys

from metrics_summaries import rank_summaries

one_path, staged_path = sys.argv[1:3]
whole = rank_summaries(one_path)[0]
stages = rank_summaries(staged_path)
if whole is None or None in stages:
    sys.exit("a run wrote no metrics summary")
for key in ("param_bytes", "optimizer_state_bytes"):
    held = [s[key] for s in stages]
    print(f"{key}: whole {whole[key]}, stages {held}")
below = all(s[k] < whole[k] for s in stages
            for k in ("param_bytes", "optimizer_state_bytes"))
covered = sum(s["param_bytes"] for s in stages) >= whole["param_bytes"]
print(f"stage params below the whole model's: {below and covered}")
