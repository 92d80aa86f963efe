"""Compares the per-step losses of two loom-run metrics files (JSON lines):
every step of A must be in B with |a - b| <= rtol * |a|. Prints the worst
relative difference; exits 1 on a mismatch.

usage: compare_losses.py A.jsonl B.jsonl --rtol R"""
import argparse
import json
import sys

ap = argparse.ArgumentParser()
ap.add_argument("a")
ap.add_argument("b")
ap.add_argument("--rtol", type=float, required=True)
args = ap.parse_args()


def losses(path):
    return {r["step"]: r["loss"] for r in map(json.loads, open(path)) if "step" in r}


a, b = losses(args.a), losses(args.b)
if not a or sorted(a) != sorted(b):
    sys.exit(f"steps differ: {sorted(a)} vs {sorted(b)}")
worst = max(abs(a[s] - b[s]) / abs(a[s]) for s in a)
for s in sorted(a):
    if abs(a[s] - b[s]) > args.rtol * abs(a[s]):
        sys.exit(f"step {s}: loss {a[s]!r} vs {b[s]!r} (relative {abs(a[s] - b[s]) / abs(a[s]):.3g})")
print(f"{len(a)} steps, losses within {args.rtol:g} (worst relative difference {worst:.3g})")
