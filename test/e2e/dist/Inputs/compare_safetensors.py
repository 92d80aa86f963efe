"""Compares two safetensors files tensor by tensor (names, shapes, dtypes and
values) with plain json/struct. An element matches when
|a - b| <= rtol * max(|a|, |b|) + atol. Prints the worst relative difference
(over values large enough for rtol to dominate atol) and exits 1 on any
mismatch.

usage: compare_safetensors.py A B [--rtol R] [--atol A] [--exact]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Inputs"))
from safetensors_file import read  # noqa: E402


ap = argparse.ArgumentParser()
ap.add_argument("a")
ap.add_argument("b")
ap.add_argument("--rtol", type=float, default=1e-5)
ap.add_argument("--atol", type=float, default=0.0)
ap.add_argument("--exact", action="store_true", help="bitwise equal values")
args = ap.parse_args()

a, b = read(args.a), read(args.b)
if sorted(a) != sorted(b):
    sys.exit(f"tensor names differ: {sorted(a)} vs {sorted(b)}")
worst, worst_at, bad = 0.0, None, 0
for name in sorted(a):
    (ta, sa, va), (tb, sb, vb) = a[name], b[name]
    if (ta, sa) != (tb, sb):
        sys.exit(f"{name}: {ta}{sa} vs {tb}{sb}")
    for i, (x, y) in enumerate(zip(va, vb)):
        diff = abs(x - y)
        scale = max(abs(x), abs(y))
        rel = diff / scale if scale else 0.0
        # Values too small for rtol to matter are compared by atol only.
        significant = args.exact or scale * args.rtol > args.atol
        if significant and rel > worst:
            worst, worst_at = rel, f"{name}[{i}]: {x!r} vs {y!r}"
        if (x != y) if args.exact else (diff > args.rtol * scale + args.atol):
            bad += 1
count = sum(len(v[2]) for v in a.values())
print(f"{len(a)} tensors, {count} values, max rel diff {worst:.3g}"
      + (f" at {worst_at}" if worst_at else ""))
if bad:
    print(f"MISMATCH: {bad} values differ beyond tolerance")
    sys.exit(1)
print("MATCH")
