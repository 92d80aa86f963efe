"""Checks the L-GreCo plans a loom-run --metrics file records (its
{"compression": ...} lines): chosen after the given steps, each within its
error budget, sending no more bytes than the uniform baseline, at least one
layer compressed. Prints one line per plan.

usage: check_plans.py METRICS --steps 3,13,23"""
import argparse
import json
import sys

ap = argparse.ArgumentParser()
ap.add_argument("metrics")
ap.add_argument("--steps", required=True)
args = ap.parse_args()

plans = [r["compression"] for r in (json.loads(l) for l in open(args.metrics)
                                    if l.strip()) if "compression" in r]
want = [int(s) for s in args.steps.split(",")]
got = [p["step"] for p in plans]
if got != want:
    sys.exit(f"plans chosen after steps {got}, expected {want}")
for p in plans:
    if p["error"] > p["budget"] * (1 + 1e-12):
        sys.exit(f"step {p['step']}: error {p['error']} over budget {p['budget']}")
    if p["bytes_per_step"] > p["baseline_bytes_per_step"]:
        sys.exit(f"step {p['step']}: {p['bytes_per_step']} bytes, more than "
                 f"the baseline's {p['baseline_bytes_per_step']}")
    methods = [layer["method"] for layer in p["layers"]]
    if all(m == "fp32" for m in methods):
        sys.exit(f"step {p['step']}: nothing compressed")
    print(f"step {p['step']}: {p['baseline_bytes_per_step'] / p['bytes_per_step']:.2f}x "
          f"fewer bytes than the baseline, within budget")
