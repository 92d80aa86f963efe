"""Overlap on an emulated bandwidth-limited cluster (bench/cluster.sh): for
each link rate, the same GPT and per-rank batch on 2 hosts with
  - Loom synchronous DDP     (loomc --dp=2)
  - Loom overlapped DDP      (loomc --dp=2 --overlap)
  - PyTorch 1.13 DDP (gloo)  (bench/torch_gpt_ddp.py)
and reports the median step time, tokens/s, and Loom's own communication
figures (communication per step, % hidden). Writes a Markdown table (and a
PNG plot of throughput against bandwidth when matplotlib is available);
--record appends them to bench/RESULTS.md.

Usage (root, after building): python3 bench/overlap_cluster.py [--rates 10gbit,1gbit,100mbit,10mbit] [--record]"""
import argparse
import datetime
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "bin")
CLUSTER = os.path.join(ROOT, "bench", "cluster.sh")


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, capture_output=True, **kw)


def loom(artifact, rate, steps, warmup, tmp):
    metrics = os.path.join(tmp, "m.jsonl")
    out = sh([CLUSTER, "--hosts", "2", "--rate", rate, "--",
              os.path.join(BIN, "loom-run"), artifact, "--steps", str(warmup + steps),
              "--data", "synthetic", "--seed", "1", "--log-every", "0",
              "--metrics", metrics]).stdout
    rows = [json.loads(l) for l in open(metrics) if '"summary"' not in l]
    t = statistics.median(r["step_time_s"] for r in rows[warmup:])
    m = re.search(r"([0-9.]+)% hidden", out)
    comm = statistics.median(r.get("comm_time_s", 0.0) for r in rows[warmup:])
    return t, comm, float(m.group(1)) if m else float("nan")


def torch(spec, rate, steps, warmup):
    f = dict(kv.split("=") for kv in spec.split(":")[1].split(","))
    cmd = [CLUSTER, "--hosts", "2", "--rate", rate, "--", "/usr/bin/python3",
           os.path.join(ROOT, "bench", "torch_gpt_ddp.py"), "--steps", str(steps),
           "--warmup", str(warmup)]
    for k in ("vocab", "seq", "dim", "heads", "layers", "batch"):
        cmd += [f"--{k}", f[k]]
    line = [l for l in sh(cmd).stdout.splitlines() if l.startswith("torch ")][-1]
    return float(line.split("step_time_s=")[1].split()[0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spec", default="gpt:vocab=256,seq=64,dim=64,heads=4,layers=2,batch=8")
    ap.add_argument("--rates", default="10gbit,1gbit,100mbit,10mbit")
    ap.add_argument("--bucket-mib", default="0.25")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()
    tokens = 2 * int(dict(kv.split("=") for kv in args.spec.split(":")[1].split(","))["batch"]) \
        * int(dict(kv.split("=") for kv in args.spec.split(":")[1].split(","))["seq"])
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        sync, over = os.path.join(tmp, "sync"), os.path.join(tmp, "over")
        sh([os.path.join(BIN, "loomc"), f"--model={args.spec}", "--dp=2", "-o", sync])
        sh([os.path.join(BIN, "loomc"), f"--model={args.spec}", "--dp=2", "--overlap",
            f"--bucket-mib={args.bucket_mib}", "-o", over])
        for rate in args.rates.split(","):
            s = loom(sync, rate, args.steps, args.warmup, tmp)
            o = loom(over, rate, args.steps, args.warmup, tmp)
            t = torch(args.spec, rate, args.steps, args.warmup)
            rows.append((rate, s, o, t))
            print(rate, s, o, t, flush=True)
    head = ("| link | Loom sync step (ms) | Loom overlap step (ms) | overlap / sync | "
            "hidden (overlap) | PyTorch DDP step (ms) | Loom best / PyTorch throughput |")
    lines = [head, "|---|---|---|---|---|---|---|"]
    for rate, s, o, t in rows:
        best = min(s[0], o[0])
        lines.append(f"| {rate} | {s[0]*1e3:.1f} | {o[0]*1e3:.1f} | {o[0]/s[0]:.2f} | "
                     f"{o[2]:.0f}% | {t*1e3:.1f} | {t/best:.2f}x |")
    table = "\n".join(lines)
    print(table)
    png = os.path.join(ROOT, "bench", "overlap_cluster.png")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        xs = [r[0] for r in rows]
        plt.figure(figsize=(6, 4))
        for i, name in ((1, "Loom sync DDP"), (2, "Loom overlapped DDP")):
            plt.plot(xs, [tokens / r[i][0] for r in rows], marker="o", label=name)
        plt.plot(xs, [tokens / r[3] for r in rows], marker="o", label="PyTorch 1.13 DDP (gloo)")
        plt.xlabel("link rate"); plt.ylabel("tokens/s (2 hosts)"); plt.yscale("log")
        plt.legend(); plt.tight_layout(); plt.savefig(png)
    except ImportError:
        png = None
    if args.record:
        with open(os.path.join(ROOT, "bench", "RESULTS.md"), "a") as f:
            f.write(f"\n### Overlap on the emulated cluster, {datetime.date.today()}\n\n")
            f.write(f"`{args.spec}`, 2 hosts (network namespaces, tbf-shaped links), "
                    f"median of {args.steps} steps; overlap with --bucket-mib={args.bucket_mib}.\n\n")
            f.write("Command: `python3 bench/overlap_cluster.py --record`\n\n" + table + "\n")
            if png:
                f.write("\n![throughput against bandwidth](overlap_cluster.png)\n")


if __name__ == "__main__":
    sys.exit(main())
