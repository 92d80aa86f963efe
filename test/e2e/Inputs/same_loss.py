"""Compares one loss from each of two loom-run --metrics files (JSON lines):
A and B are FILE:step=N (the loss of training step N), FILE:eval (the
--eval result) or FILE:eval=N (the --eval-data evaluation after step N). Prints "same loss" when |a - b| <= rtol * |a|, else exits 1
with both values.

usage: same_loss.py A B --rtol R"""
import argparse
import json
import sys


def pick(spec):
    path, _, what = spec.rpartition(":")
    rows = [json.loads(l) for l in open(path) if l.strip()]
    if what == "eval":
        found = [r["eval"]["loss"] for r in rows if "eval" in r]
    elif what.startswith("eval="):
        found = [r["eval"]["loss"] for r in rows
                 if r.get("eval", {}).get("step") == int(what[5:])]
    elif what.startswith("step="):
        found = [r["loss"] for r in rows if r.get("step") == int(what[5:])]
    else:
        sys.exit(f"{spec}: expected FILE:step=N, FILE:eval or FILE:eval=N")
    if len(found) != 1:
        sys.exit(f"{spec}: {len(found)} matching lines in {path}")
    return found[0]


ap = argparse.ArgumentParser()
ap.add_argument("a")
ap.add_argument("b")
ap.add_argument("--rtol", type=float, required=True)
args = ap.parse_args()
a, b = pick(args.a), pick(args.b)
if abs(a - b) > args.rtol * abs(a):
    sys.exit(f"losses differ: {a!r} vs {b!r} (relative {abs(a - b) / abs(a):.3g})")
print(f"same loss {a:.6f} (relative difference {abs(a - b) / abs(a):.2g})")
