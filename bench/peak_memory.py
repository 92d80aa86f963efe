"""Peak memory of a training step: Loom as compiled by default (each
temporary freed after its last use, --loom-hoist-deallocs, at an offset of
one arena planned at compile time, --loom-plan-buffers), Loom with one
allocation per temporary (loomc --plan-buffers=false: the runtime's
allocator caches freed blocks by size), Loom with every free at the end of
the step as well (--late-frees, where bufferization puts them), and PyTorch
1.13 eager on the same GPT, batch and AdamW, one thread, all measured in
this run. For each: the process's peak resident memory, its
resident memory before the first step (the interpreter, libraries, model
and optimizer state), and what the steps added; for Loom also its own
count of the temporaries' peak (the metrics summary's peak_temp_bytes).
Prints a Markdown table; with --record, appends it and the command to
bench/RESULTS.md.

Also the median step time after the first step (not a speed benchmark: a
check that a memory change costs no time; few steps, one thread).

Usage: python3 bench/peak_memory.py [--spec gpt:...] [--steps 5] [--record]
(run from the repository root after building; needs Debian's python3-torch)"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

from clusterlib import results_section

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "bin")
TORCH_PY = "/usr/bin/python3"
MIB = 2.0 ** 20

# The PyTorch peer, run as `python3 -c TORCH_WORKER fields steps`: the
# nanoGPT of the numerical tests; prints its resident memory before the
# first step and its peak, in bytes.
TORCH_WORKER = r"""
import json, os, resource, sys
import torch
sys.path.insert(0, os.path.join(sys.argv[1], "test", "e2e", "torch"))
from nanogpt import GPT, random_step
f = json.loads(sys.argv[2]); steps = int(sys.argv[3])
torch.set_num_threads(1)
torch.manual_seed(0)
model = GPT(f["vocab"], f["seq"], f["dim"], f["heads"], f["layers"])
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
# AdamW creates its state at the first step: count it before, as Loom's
# artifact holds its state from the start.
for p in model.parameters():
    opt.state[p]["step"] = torch.tensor(0.0)
    opt.state[p]["exp_avg"] = torch.zeros_like(p)
    opt.state[p]["exp_avg_sq"] = torch.zeros_like(p)
g = torch.Generator().manual_seed(0)
page = os.sysconf("SC_PAGE_SIZE")
before = int(open("/proc/self/statm").read().split()[1]) * page
import time
times = []
for _ in range(steps):
    start = time.perf_counter()
    random_step(model, opt, f, g)
    times.append(time.perf_counter() - start)
print(json.dumps({"before": before, "step": sorted(times[1:])[len(times[1:]) // 2],
                  "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""


def peak_rss(cmd):
    """Runs `cmd` (its output discarded) and returns its peak resident bytes."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        sys.exit(f"{' '.join(cmd)} failed ({proc.returncode})")
    return usage.ru_maxrss * 1024


def loom(spec, steps, name, flags, tmp):
    art = os.path.join(tmp, name)
    cmd = [os.path.join(BIN, "loomc"), f"--model={spec}", "-o", art] + flags
    subprocess.run(cmd, check=True)
    metrics = os.path.join(tmp, f"{name}.jsonl")
    run = [os.path.join(BIN, "loom-run"), art, "--data", "synthetic", "--seed", "1",
           "--threads", "1", "--steps"]
    peak = peak_rss(run + [str(steps), "--metrics", metrics])
    records = [json.loads(l) for l in open(metrics)]
    summary = [r["summary"] for r in records if "summary" in r][0]
    # The median step after the first (which fills the allocator's cache).
    times = sorted(r["step_time_s"] for r in records if "step_time_s" in r and r.get("step", 0) > 1)
    # Before the first step: the same run with no steps.
    before = peak_rss(run + ["0"])
    return {"peak": peak, "before": before, "temps": summary["peak_temp_bytes"],
            "step": times[len(times) // 2]}


def torch(fields, steps):
    out = subprocess.run([TORCH_PY, "-c", TORCH_WORKER, ROOT, json.dumps(fields),
                          str(steps)], check=True, text=True,
                         capture_output=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spec", default="gpt:vocab=256,seq=256,dim=256,heads=8,layers=4,batch=16")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()
    fields = {k: int(v) for k, v in (kv.split("=") for kv in args.spec.split(":")[1].split(","))}
    with tempfile.TemporaryDirectory() as tmp:
        planned = loom(args.spec, args.steps, "planned", [], tmp)
        unplanned = loom(args.spec, args.steps, "unplanned", ["--plan-buffers=false"], tmp)
        late = loom(args.spec, args.steps, "late", ["--late-frees", "--plan-buffers=false"], tmp)
    peer = torch(fields, args.steps)
    rows = [("Loom (default: frees after last uses, planned arena)", planned),
            ("Loom --plan-buffers=false (one allocation per temporary)", unplanned),
            ("Loom --late-frees --plan-buffers=false (frees at the end of the step)", late),
            ("PyTorch 1.13 eager", peer)]
    lines = ["| run | peak RSS (MiB) | RSS before the first step (MiB) | added by the steps (MiB) | temporaries' peak, runtime's count (MiB) | peak RSS / PyTorch | added / PyTorch's | step (ms), median after the first | step / PyTorch's |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, r in rows:
        temps = f"{r['temps'] / MIB:.1f}" if "temps" in r else "-"
        added = r["peak"] - r["before"]
        lines.append(f"| {name} | {r['peak'] / MIB:.0f} | {r['before'] / MIB:.0f} | {added / MIB:.0f} | "
                     f"{temps} | {r['peak'] / peer['peak']:.2f} | "
                     f"{added / (peer['peak'] - peer['before']):.2f} | "
                     f"{r['step'] * 1e3:.0f} | {r['step'] / peer['step']:.2f} |")
    table = "\n".join(lines)
    print(table)
    if args.record:
        with results_section("Peak memory of a training step") as f:
            f.write(f"`{args.spec}`, AdamW, one thread, {args.steps} steps on random tokens; "
                    "resident memory from getrusage (peak) and /proc (PyTorch before its first "
                    "step; Loom: a run of 0 steps, which loads the artifact and initialises "
                    "the model and state).\n\n")
            cmd = "python3 bench/peak_memory.py" + (
                "" if args.spec == ap.get_default("spec") else f" --spec {args.spec}") + (
                "" if args.steps == ap.get_default("steps") else f" --steps {args.steps}") + " --record"
            f.write(f"Command: `{cmd}`\n\n")
            f.write(table + "\n")


if __name__ == "__main__":
    sys.exit(main())
