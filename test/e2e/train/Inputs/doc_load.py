"""Recomputes loom-run's "documents" metrics record from the documents
themselves: the rows each rank read in order (global row g = (k*R + r)*B + i
reads window g mod W, W = (n - 1) // T), each row's runs of one document, the
causal pairs L(L+1)/2 of each run, per rank and step, and their max/mean over
ranks. Prints "documents load matches" when the record agrees (rel 1e-9)."""
import json
import os
import sys

docs_dir, metrics, ranks, batch, seq = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:6])
doc_of = []
for i, name in enumerate(sorted(os.listdir(docs_dir))):
    doc_of += [i] * os.path.getsize(os.path.join(docs_dir, name))
windows = (len(doc_of) - 1) // seq
record = next(json.loads(l)["documents"] for l in open(metrics) if '"documents"' in l)
steps = record["steps"]


def pairs(row):
    total, t = 0, 0
    while t < seq:
        end = t + 1
        while end < seq and row[end] == row[t]:
            end += 1
        total += (end - t) * (end - t + 1) // 2
        t = end
    return total


ratios, runs, all_pairs = [], 0, 0
for k in range(steps):
    load = []
    for r in range(ranks):
        p = 0
        for i in range(batch):
            w = ((k * ranks + r) * batch + i) % windows
            row = doc_of[w * seq:(w + 1) * seq]
            p += pairs(row)
            runs += 1 + sum(row[j] != row[j - 1] for j in range(1, seq))
        load.append(p)
    ratios.append(max(load) / (sum(load) / ranks))
    all_pairs += sum(load)
rows = ranks * batch * steps
want = {"per_row": runs / rows, "pairs_fraction": all_pairs / (rows * seq * (seq + 1) / 2),
        "load_max_over_mean": sum(ratios) / steps, "load_max_over_mean_worst": max(ratios)}
bad = {k: (record[k], v) for k, v in want.items() if abs(record[k] - v) > 1e-5 * abs(v)}
print("documents load matches" if not bad else f"documents load DIFFERS: {bad}")
sys.exit(1 if bad else 0)
