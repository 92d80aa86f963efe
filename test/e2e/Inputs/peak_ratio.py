"""Compares the peak memory of compiled code's temporaries in two loom-run
--metrics files (the summary's peak_temp_bytes): prints A's peak, B's and
A / B; exits 1 if the ratio is above --max or either peak is missing.

usage: peak_ratio.py A.jsonl B.jsonl --max R"""
import argparse
import json
import sys

ap = argparse.ArgumentParser()
ap.add_argument("a")
ap.add_argument("b")
ap.add_argument("--max", type=float, required=True)
args = ap.parse_args()


def peak(path):
    found = [r["summary"]["peak_temp_bytes"] for r in map(json.loads, open(path))
             if "summary" in r]
    if len(found) != 1 or not found[0]:
        sys.exit(f"{path}: expected one summary with a peak_temp_bytes > 0, got {found}")
    return found[0]


a, b = peak(args.a), peak(args.b)
ratio = a / b
print(f"peak temporaries {a / 2**20:.1f} MiB vs {b / 2**20:.1f} MiB: ratio {ratio:.2f}")
if ratio > args.max:
    sys.exit(f"ratio {ratio:.2f} above {args.max}")
