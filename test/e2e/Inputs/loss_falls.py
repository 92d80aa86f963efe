"""Reads loom-run --metrics JSON lines and checks that training made progress:
the mean loss of the last tenth of the steps is below FRACTION times the mean
of the first tenth, and (with --steady) that no window of a tenth of the run
has a mean loss above the previous window's by more than 10 %."""
import argparse
import json
import sys

ap = argparse.ArgumentParser()
ap.add_argument("metrics")
ap.add_argument("--fraction", type=float, required=True)
ap.add_argument("--steady", action="store_true")
args = ap.parse_args()

# Step lines only (not the summary, evaluations or compression plans).
losses = [r["loss"] for r in (json.loads(l) for l in open(args.metrics)
                              if l.strip()) if "step" in r and "loss" in r]
if len(losses) < 20:
    sys.exit(f"only {len(losses)} steps in {args.metrics}")
w = len(losses) // 10
means = [sum(losses[i:i + w]) / w for i in range(0, w * 10, w)]
print("window means: " + " ".join(f"{m:.3f}" for m in means))
ok = means[-1] < args.fraction * means[0]
if args.steady:
    ok &= all(b <= a * 1.10 for a, b in zip(means, means[1:]))
print(f"loss falls: {means[0]:.3f} -> {means[-1]:.3f}" if ok else
      f"loss does NOT fall enough: {means[0]:.3f} -> {means[-1]:.3f}")
sys.exit(0 if ok else 1)
