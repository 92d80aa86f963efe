"""Data-parallel throughput: Loom on 1 and 2 ranks next to PyTorch 1.13
(DDP over gloo for 2 ranks) on the same GPT, per-rank batch, AdamW and one
thread per rank, all measured in this run. Prints a Markdown table; with
--record, appends it and the command to bench/RESULTS.md.

Usage: python3 bench/dp_throughput.py [--steps 60] [--record]
(run from the repository root after building; needs Debian's python3-torch)"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

from clusterlib import results_section

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "bin")
TORCH_PY = "/usr/bin/python3"


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, capture_output=True, **kw)


def loom(ranks, spec, steps, warmup, tmp):
    out = os.path.join(tmp, f"gpt-dp{ranks}")
    run([os.path.join(BIN, "loomc"), f"--model={spec}", f"--dp={ranks}", "-o", out])
    metrics = os.path.join(tmp, f"m{ranks}.jsonl")
    cmd = [os.path.join(BIN, "loom-run"), out, "--steps", str(warmup + steps),
           "--data", "synthetic", "--seed", "1", "--threads", "1",
           "--metrics", metrics, "--log-every", "0"]
    if ranks > 1:
        cmd += ["--ranks", str(ranks)]
    run(cmd)
    rows = [json.loads(l) for l in open(metrics)]
    times = [r["step_time_s"] for r in rows
             if "summary" not in r and r.get("rank", 0) == 0][warmup:]
    return statistics.median(times)


def torch(ranks, fields, steps, warmup):
    cmd = [TORCH_PY, os.path.join(ROOT, "bench", "torch_gpt_ddp.py"),
           "--ranks", str(ranks), "--steps", str(steps), "--warmup", str(warmup)]
    for k in ("vocab", "seq", "dim", "heads", "layers", "batch"):
        cmd += [f"--{k}", str(fields[k])]
    line = run(cmd).stdout.strip().splitlines()[-1]
    return float(line.split("step_time_s=")[1].split()[0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spec", default="gpt:vocab=256,seq=64,dim=64,heads=4,layers=2,batch=8")
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()
    fields = {k: int(v) for k, v in (kv.split("=") for kv in args.spec.split(":")[1].split(","))}
    tokens = fields["batch"] * fields["seq"]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for ranks in (1, 2):
            lt = loom(ranks, args.spec, args.steps, args.warmup, tmp)
            tt = torch(ranks, fields, args.steps, args.warmup)
            rows.append((ranks, lt, tt))
    lines = ["| ranks | Loom step (ms) | Loom tokens/s | PyTorch step (ms) | PyTorch tokens/s | Loom / PyTorch throughput |",
             "|---|---|---|---|---|---|"]
    for ranks, lt, tt in rows:
        lines.append(f"| {ranks} | {lt*1e3:.1f} | {ranks*tokens/lt:,.0f} | {tt*1e3:.1f} | "
                     f"{ranks*tokens/tt:,.0f} | {tt/lt:.2f}x |")
    table = "\n".join(lines)
    print(table)
    if args.record:
        with results_section("Data-parallel throughput", host=True) as f:
            f.write(f"`{args.spec}`, per-rank batch {fields['batch']}, AdamW, 1 thread per rank, "
                    f"median of {args.steps} steps after {args.warmup} warmup; PyTorch 1.13 "
                    f"(Debian, OpenBLAS), DDP over gloo for 2 ranks; Loom over OpenMPI.\n\n")
            f.write("Command: `python3 bench/dp_throughput.py --record`\n\n")
            f.write(table + "\n")


if __name__ == "__main__":
    sys.exit(main())
