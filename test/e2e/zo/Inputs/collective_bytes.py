"""Summarises the collectives of a `loom-run --trace` file: per rank, how
many ran and their sizes in bytes.

usage: collective_bytes.py TRACE
prints "N collectives per rank, all B bytes" when every rank ran N of the
same size B, else each rank's count and sizes.
"""
import json
import sys
from collections import defaultdict

events = json.load(open(sys.argv[1]))["traceEvents"]
sizes = defaultdict(list)
for e in events:
    if e["ph"] == "X" and e.get("cat") == "comm" and "bytes" in e.get("args", {}):
        sizes[e["pid"]].append(e["args"]["bytes"])
counts = {len(v) for v in sizes.values()}
distinct = {b for v in sizes.values() for b in v}
if len(counts) == 1 and len(distinct) == 1:
    print(f"{counts.pop()} collectives per rank, all {distinct.pop()} bytes")
else:
    for rank in sorted(sizes):
        print(f"rank {rank}: {len(sizes[rank])} collectives, sizes "
              f"{sorted(set(sizes[rank]))}")
