"""Every rank's --metrics summary of a run: the file rank 0 wrote (PATH)
and the other ranks' (PATH.rank<r>, runtime/src/train/Metrics.cpp)."""
import json
import os


def read_summary(path):
    """The summary record of one rank's metrics file, or None."""
    with open(path) as f:
        for line in f:
            record = json.loads(line)
            if "summary" in record:
                return record["summary"]
    return None


def rank_summaries(path):
    """The summaries of rank 0, 1, ... in order (None where one is missing)."""
    summaries = [read_summary(path)]
    rank = 1
    while os.path.exists(f"{path}.rank{rank}"):
        summaries.append(read_summary(f"{path}.rank{rank}"))
        rank += 1
    return summaries
