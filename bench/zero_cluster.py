"""ZeRO on the emulated 2-host cluster (bench/cluster.sh): for each link
rate, the same GPT and per-rank batch, AdamW, measured in the same run:
  - Loom DDP                        (loomc --dp=2)
  - Loom ZeRO-1, ZeRO-2             (loomc --dp=2 --zero=1|2)
  - Loom ZeRO-2 overlapped          (loomc --dp=2 --zero=2 --overlap)
  - Loom ZeRO-3, without and with prefetch (--zero=3 [--overlap])
  - PyTorch 1.13 DDP (gloo)         (bench/torch_gpt_ddp.py)
  - PyTorch ZeroRedundancyOptimizer (bench/torch_gpt_ddp.py --zero 1)
  - PyTorch FSDP                    (--zero 3; 1.13 cannot run it on CPU:
                                     its error is recorded)
Reports each one's median step time and tokens/s, ZeRO's throughput
relative to Loom's DDP, and Loom's best against PyTorch's ZeRO. --record
appends the table and the command to bench/RESULTS.md.

Usage (root, after building, on an otherwise idle machine):
  /usr/bin/python3 bench/zero_cluster.py [--rates 10gbit,1gbit] [--record]"""
import argparse
import os
import shutil
import subprocess
import tempfile

from clusterlib import CLUSTER, ROOT, loom, results_section, sh, spec_fields
from clusterlib import torch as run_torch

VARIANTS = [("ddp", []), ("zero1", ["--zero=1"]), ("zero2", ["--zero=2"]),
            ("zero2+overlap", ["--zero=2", "--overlap"]), ("zero3", ["--zero=3"]),
            ("zero3+prefetch", ["--zero=3", "--overlap"])]


def torch_step(spec, rate, steps, warmup, zero=0):
    """PyTorch's median step time; one retry, as gloo's rendezvous now and
    then aborts when a job starts right after the previous one."""
    try:
        return run_torch(spec, rate, steps, warmup, zero=zero)["median"]
    except subprocess.CalledProcessError:
        return run_torch(spec, rate, steps, warmup, zero=zero)["median"]


def torch_error(spec, rate):
    """What PyTorch 1.13's FSDP says on the CPU cluster."""
    f = spec_fields(spec)
    cmd = [CLUSTER, "--hosts", "2", "--rate", rate, "--", "/usr/bin/python3",
           os.path.join(ROOT, "bench", "torch_gpt_ddp.py"), "--zero", "3",
           "--steps", "2", "--warmup", "0"]
    for k in ("vocab", "seq", "dim", "heads", "layers", "batch"):
        cmd += [f"--{k}", f[k]]
    out = subprocess.run(cmd, text=True, capture_output=True).stdout
    lines = [l for l in out.splitlines() if l.startswith("torch ")]
    return lines[-1] if lines else "no output"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spec", default="gpt:vocab=256,seq=64,dim=128,heads=4,layers=4,batch=8")
    ap.add_argument("--rates", default="10gbit,1gbit")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()
    f = spec_fields(args.spec)
    tokens = 2 * int(f["batch"]) * int(f["seq"])
    rows = []
    hidden = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, flags in VARIANTS:
            sh([os.path.join(ROOT, "build", "bin", "loomc"), f"--model={args.spec}",
                "--dp=2", *flags, "-o", os.path.join(tmp, name)])
        for rate in args.rates.split(","):
            t = {}
            for name, _ in VARIANTS:
                traced = name == "zero3+prefetch"
                # The overlapped ones as compiled (not switched to synchronous
                # collectives by loom-run's default --async-collectives auto).
                extra = ["--async-collectives", "on"] if "+" in name else []
                r = loom(os.path.join(tmp, name), rate, args.steps, args.warmup, tmp,
                         trace=traced, extra=extra)
                t[name] = r["median"]
                if traced:
                    # The trace that shows each bucket's gather running while
                    # the step computes (kept beside the results).
                    hidden[rate] = r["hidden_trace"]
                    shutil.copy(os.path.join(tmp, "trace.json"), os.path.join(
                        ROOT, "bench", "results", f"zero3-prefetch-{rate}.trace.json"))
            t["torch ddp"] = torch_step(args.spec, rate, args.steps, args.warmup)
            t["torch zero"] = torch_step(args.spec, rate, args.steps, args.warmup, zero=1)
            rows.append((rate, t))
            print(rate, t, flush=True)
        fsdp = torch_error(args.spec, args.rates.split(",")[0])
    header = ("| link | " + " | ".join(f"{n} step (ms)" for n in rows[0][1]) +
              " | zero1 / ddp | zero2 / ddp | zero2+overlap / ddp |"
              " zero3+prefetch / zero3 | zero3+prefetch gathers hidden |"
              " Loom best ZeRO / PyTorch ZeRO |")
    lines = [header, "|" + "---|" * (header.count("|") - 1)]
    for rate, t in rows:
        rel = lambda n: t["ddp"] / t[n]
        best = min(t["zero1"], t["zero2"], t["zero2+overlap"])
        lines.append(f"| {rate} | " + " | ".join(f"{v * 1e3:.1f}" for v in t.values()) +
                     f" | {rel('zero1'):.2f}x | {rel('zero2'):.2f}x |"
                     f" {rel('zero2+overlap'):.2f}x | {t['zero3'] / t['zero3+prefetch']:.2f}x |"
                     f" {hidden[rate]:.0f} % |"
                     f" {t['torch zero'] / best:.2f}x |")
    table = "\n".join(lines)
    note = (f"Throughput ratios are DDP's step time over ZeRO's (higher: ZeRO "
            f"faster); {tokens} tokens per step over both ranks. PyTorch FSDP "
            f"on this cluster: `{fsdp}`. Hidden: the share of the "
            f"communication of ZeRO-3 with prefetch that no step waited for, "
            f"from its Chrome trace (bench/results/zero3-prefetch-RATE.trace.json).")
    print(table + "\n\n" + note)
    if args.record:
        with results_section("ZeRO on the emulated cluster") as out:
            out.write(f"`/usr/bin/python3 bench/zero_cluster.py --spec {args.spec} "
                      f"--rates {args.rates} --steps {args.steps} --record`\n\n")
            out.write(table + "\n\n" + note + "\n")


if __name__ == "__main__":
    main()
