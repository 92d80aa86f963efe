"""Overlap on an emulated bandwidth-limited cluster (bench/cluster.sh): for
each link rate, the same GPT and per-rank batch on 2 hosts with
  - Loom synchronous DDP     (loomc --dp=2)
  - Loom overlapped DDP      (loomc --dp=2 --overlap)
  - PyTorch 1.13 DDP (gloo)  (bench/torch_gpt_ddp.py)
and reports the median step time, tokens/s, and Loom's own communication
figures (communication per step, % hidden). At each rate the overlapped
artifact is compiled for the measured link: `loom-run --calibrate` runs on
the two hosts first and `loomc --calibration=FILE` reads it (the bucket size
follows the link). Writes a Markdown table and a PNG plot of throughput
against bandwidth (bench/overlap_cluster.png; needs python3-matplotlib,
`scripts/install-deps.sh --bench`); --record appends both to
bench/RESULTS.md.

Usage (root, after building, on an otherwise idle machine):
  /usr/bin/python3 bench/overlap_cluster.py [--rates 10gbit,1gbit,100mbit,10mbit] [--record]"""
import argparse
import json
import os
import sys
import tempfile

from clusterlib import (BIN, ROOT, calibrate, loom as run_loom, mbit,
                        results_section, sh, spec_fields)
from clusterlib import torch as run_torch


def loom(artifact, rate, steps, warmup, tmp):
    r = run_loom(artifact, rate, steps, warmup, tmp)
    return r["median"], r["comm"], r["hidden"]


def torch(spec, rate, steps, warmup):
    return run_torch(spec, rate, steps, warmup)["median"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spec", default="gpt:vocab=256,seq=64,dim=64,heads=4,layers=2,batch=8")
    ap.add_argument("--rates", default="10gbit,1gbit,100mbit,10mbit")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()
    tokens = 2 * int(spec_fields(args.spec)["batch"]) * int(spec_fields(args.spec)["seq"])
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        sync = os.path.join(tmp, "sync")
        sh([os.path.join(BIN, "loomc"), f"--model={args.spec}", "--dp=2", "-o", sync])
        for rate in args.rates.split(","):
            calib = calibrate(rate, os.path.join(tmp, "calib.json"))
            over = os.path.join(tmp, "over-" + rate)
            sh([os.path.join(BIN, "loomc"), f"--model={args.spec}", "--dp=2", "--overlap",
                "--calibration=" + os.path.join(tmp, "calib.json"), "-o", over])
            bucket = json.load(open(os.path.join(over, "manifest.json")))["cost_model"]["bucket_mib"]
            s = loom(sync, rate, args.steps, args.warmup, tmp)
            o = loom(over, rate, args.steps, args.warmup, tmp)
            t = torch(args.spec, rate, args.steps, args.warmup)
            rows.append((rate, s, o, t, calib, bucket))
            print(rate, s, o, t, calib.get("link_gbps"), bucket, flush=True)
    head = ("| link | calibrated all-reduce bw (Gbit/s) | bucket (KiB) | Loom sync step (ms) | "
            "sync comm / compute | Loom overlap step (ms) | overlap / sync | hidden (overlap) | "
            "PyTorch DDP step (ms) | Loom best / PyTorch throughput |")
    lines = [head, "|---|---|---|---|---|---|---|---|---|---|"]
    for rate, s, o, t, calib, bucket in rows:
        best = min(s[0], o[0])
        ratio = s[1] / max(s[0] - s[1], 1e-9)
        lines.append(f"| {rate} | {calib.get('link_gbps', float('nan')):.3g} | {bucket*1024:.0f} | "
                     f"{s[0]*1e3:.1f} | {ratio:.2f} | {o[0]*1e3:.1f} | {o[0]/s[0]:.2f} | "
                     f"{o[2]:.0f}% | {t*1e3:.1f} | {t/best:.2f}x |")
    table = "\n".join(lines)
    print(table)
    png = os.path.join(ROOT, "bench", "overlap_cluster.png")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        xs = [mbit(r[0]) for r in rows]
        plt.figure(figsize=(6, 4))
        for i, name in ((1, "Loom sync DDP"), (2, "Loom overlapped DDP")):
            plt.plot(xs, [tokens / r[i][0] for r in rows], marker="o", label=name)
        plt.plot(xs, [tokens / r[3] for r in rows], marker="o", label="PyTorch 1.13 DDP (gloo)")
        plt.xlabel("link rate per host (Mbit/s)"); plt.ylabel("tokens/s (2 hosts)")
        plt.xscale("log"); plt.yscale("log"); plt.grid(True, which="both", alpha=0.3)
        plt.title("GPT on 2 emulated hosts: throughput against bandwidth")
        plt.legend(); plt.tight_layout(); plt.savefig(png)
    except ImportError:
        png = None
    if args.record:
        with results_section("Overlap on the emulated cluster") as f:
            f.write(f"`{args.spec}`, 2 hosts (network namespaces, tbf-shaped links), "
                    f"median of {args.steps} steps after {args.warmup}; the overlapped artifact "
                    "compiled with `--calibration` from `loom-run --calibrate` on the same link.\n\n")
            f.write(f"Command: `/usr/bin/python3 bench/overlap_cluster.py --rates {args.rates} "
                    "--record`\n\n" + table + "\n")
            if png:
                f.write("\n![throughput against bandwidth](overlap_cluster.png)\n")


if __name__ == "__main__":
    sys.exit(main())
