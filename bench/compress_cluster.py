"""Time to a target loss with gradient compression on the emulated 2-host
cluster (bench/cluster.sh, one rank per host, the link shaped to each rate
of --rates), for bench/compress_bytes.py's GPT:
  - Loom DDP, fp32 all-reduce, and DDP sending bf16 gradients (--compress=bf16)
  - Loom uniform PowerSGD rank 4 (--compress=powersgd:rank=4)
  - Loom L-GreCo within rank 4's relative and absolute error, fewest bytes
    (--compress=lgreco:rank=4,objective=bytes,error=..., as in
    compress_bytes.py)
  - the peer: PyTorch 1.13 DDP over gloo, plain and with its PowerSGD
    communication hook at rank 4 (bench/torch_gpt_ddp.py --powersgd 4)
Step time: the median of --steps timed steps after --warmup (L-GreCo's
plan is chosen at the last warm-up step, so the timed steps run it).
Steps to the target loss come from bench/results/compress_bytes.json (the
same model, data and ranks; the loss does not depend on the link): the
first step at which a run's training loss, averaged over seeds and over a
window of 50 steps, is at or below --target (default: the highest final
window loss of the runs, so that every run reaches it). Time to target =
steps x step time; PyTorch's runs take the steps of Loom's run of the same
method (DDP's, uniform PowerSGD's).
Then, unthrottled (2 local ranks, no shaping): L-GreCo with the time
objective on the link loom-run --calibrate measured there, against Loom's
plain DDP: the plan's step time, and the cost of its measurement steps
(one every --every steps) spread over the steps.

Usage (root, after compress_bytes.py): /usr/bin/python3 bench/compress_cluster.py
       [--rates 100mbit,300mbit] [--steps 12] [--warmup 4] [--every 200] [--record]"""
import argparse
import json
import os
import re
import statistics
import subprocess
import tempfile

from clusterlib import ROOT, calibrate, loom, loomc, results_section, step_rows, torch

WINDOW = 50


def steps_to(curve, target):
    for i in range(WINDOW, len(curve) + 1):
        if sum(curve[i - WINDOW:i]) / WINDOW <= target:
            return i
    return None


def final_window(curve):
    return sum(curve[-WINDOW:]) / WINDOW


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rates", default="100mbit,300mbit")
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--warmup", type=int, default=4)
    ap.add_argument("--every", type=int, default=200)
    ap.add_argument("--target", type=float)
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()
    saved = json.load(open(os.path.join(ROOT, "bench", "results", "compress_bytes.json")))
    spec = saved["spec"]
    curves = {r["name"]: r["curve"] for r in saved["runs"]}
    # DDP, bf16, uniform PowerSGD, then the L-GreCo runs (relative and
    # absolute error).
    names = list(curves)
    target = args.target or max(final_window(c) for c in curves.values())
    steps = {n: steps_to(c, target) for n, c in curves.items()}
    print("target", round(target, 4), "steps", steps, flush=True)
    w = args.warmup
    # The runs' own flags, with the warm-up of the timed runs (bf16 and
    # uniform PowerSGD none; L-GreCo chooses at its last step and keeps
    # that plan through the timed steps).
    timed = lambda flags, warm, every="": [
        re.sub(r"warmup=\d+", f"warmup={warm}", re.sub(r"every=\d+", f"every={every}", f))
        if every else re.sub(r"warmup=\d+", f"warmup={warm}", f) for f in flags]
    loom_runs = [(r["name"], timed(r["flags"], w, "100000") if "lgreco" in " ".join(r["flags"])
                  else timed(r["flags"], 0)) for r in saved["runs"]]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        art = os.path.join(tmp, "a")
        for rate in args.rates.split(","):
            times = {}
            for name, flags in loom_runs:
                loomc(spec, art, "--dp=2", *flags)
                times["Loom " + name] = (loom(art, rate, args.steps, w, tmp)["median"], steps[name])
                print(rate, name, times["Loom " + name], flush=True)
            for name, extra, like in [("PyTorch DDP (gloo)", [], names[0]),
                                      ("PyTorch DDP + PowerSGD hook rank 4", ["--powersgd", "4"],
                                       names[2])]:
                times[name] = (peer(spec, rate, args.steps, w, extra)["median"], steps[like])
                print(rate, name, times[name], flush=True)
            rows.append((rate, times))
        # Unthrottled: the cost rule on the link measured here.
        cal = os.path.join(tmp, "local-calibration.json")
        calibrate(None, cal)
        loomc(spec, art, "--dp=2")
        plain = loom(art, None, args.steps, w, tmp)["median"]
        loomc(spec, art, "--dp=2", f"--calibration={cal}",
              f"--compress=lgreco:rank=4,warmup={w},every={args.every}")
        loom(art, None, args.every + w, w, tmp)
        lg_rows = step_rows(os.path.join(tmp, "m.jsonl"))
        lg = statistics.median(r["step_time_s"] for r in lg_rows[w:])
        plan = [json.loads(l)["compression"] for l in open(os.path.join(tmp, "m.jsonl"))
                if '"compression"' in l]
        measured = [r["step_time_s"] for r in lg_rows if r["step"] in (w, w + args.every)]
        overhead = sum(m - lg for m in measured) / (args.every * len(measured))
        compressed = sum(l["method"] != "fp32" for l in plan[0]["layers"])
        print("unthrottled", plain, lg, overhead, compressed, flush=True)

    lines = [f"| {spec}, 2 emulated hosts | rate | step (ms) | steps to loss {target:.3f} "
             "| time to target (s) | vs Loom bf16 DDP | vs Loom uniform PowerSGD "
             "| vs PyTorch PowerSGD hook |", "|---|---|---|---|---|---|---|---|"]
    for rate, times in rows:
        ref = {k: t * s for k, (t, s) in times.items()}
        for name, (t, s) in times.items():
            total = t * s
            lines.append(f"| {name} | {rate} | {t * 1e3:.0f} | {s} | {total:.0f} | "
                         f"{ref['Loom ' + names[1]] / total:.2f}x | "
                         f"{ref['Loom ' + names[2]] / total:.2f}x | "
                         f"{ref['PyTorch DDP + PowerSGD hook rank 4'] / total:.2f}x |")
    lines += ["", "| unthrottled, 2 local ranks | step (ms) | vs Loom DDP |", "|---|---|---|",
              f"| Loom DDP | {plain * 1e3:.1f} | 1.000 |",
              f"| Loom L-GreCo, objective time (plan: {compressed} of "
              f"{len(plan[0]['layers'])} layers compressed) | {lg * 1e3:.1f} | "
              f"{lg / plain:.3f} |",
              f"| + its measurement steps, one per {args.every} steps | "
              f"{(lg + overhead) * 1e3:.1f} | {(lg + overhead) / plain:.3f} |"]
    table = "\n".join(lines)
    print(table)
    if args.record:
        with results_section("Gradient compression on the emulated cluster: time to a "
                             "target loss") as out:
            out.write(f"`/usr/bin/python3 bench/compress_cluster.py --rates {args.rates} "
                      f"--steps {args.steps} --warmup {args.warmup} --every {args.every}` "
                      "(after `bench/compress_bytes.py`)\n\n" + table + "\n")


def peer(spec, rate, steps, warmup, extra):
    """clusterlib.torch, tried twice: gloo's rendezvous on the emulated
    hosts once aborted at start (a rerun of the same command passed)."""
    try:
        return torch(spec, rate, steps, warmup, extra=extra)
    except subprocess.CalledProcessError as e:
        print("PyTorch peer failed, retrying:", e.returncode, flush=True)
        return torch(spec, rate, steps, warmup, extra=extra)


if __name__ == "__main__":
    main()
