#!/usr/bin/env python3
"""Repeats scenario 1 of docs/reliability.md: kill one rank of a running
multi-rank job, many times, and count the runs where the job ended cleanly.

usage: scripts/kill-stress.py [--runs 50] [--ranks 4] [--seed 1]
                              [--loom-run build/bin/loom-run]
                              [--loomc build/bin/loomc]

Each run trains a small data-parallel MLP on --ranks local ranks and, after
a random number of steps (1-40), sends a random rank a random one of
SIGKILL, SIGTERM, SIGSEGV, SIGABRT (test/e2e/dist/Inputs/kill_rank.py). A
run passes when loom-run exits non-zero, every rank has ended within 60 s,
no process of the job survives, and loom-run's error names the signalled
rank. Prints one line per run and a table per signal; exits 1 if any run
failed.
"""
import os
import re
import shutil
import subprocess
import sys

import repeat_runs

args = repeat_runs.options(50, ranks=4)
rng, work, artifact = repeat_runs.setup(args, "kill-stress",
                                        "mlp:in=16,hidden=32,out=4,layers=2,batch=8",
                                        f"--dp={args.ranks}")
root = repeat_runs.root
kill_rank = os.path.join(root, "test/e2e/dist/Inputs/kill_rank.py")
signals = ["KILL", "TERM", "SEGV", "ABRT"]
results = {s: [] for s in signals}
failed = 0
for run in range(1, args.runs + 1):
    sig, rank, after = rng.choice(signals), rng.randrange(args.ranks), rng.randint(1, 40)
    metrics = os.path.join(work, f"m{run}.jsonl")
    out = subprocess.run(
        [sys.executable, kill_rank, "--rank", str(rank), "--metrics", metrics,
         "--after-steps", str(after), "--signal", sig, "--timeout", "90", "--",
         args.loom_run, artifact, "--ranks", str(args.ranks), "--steps",
         "100000000", "--log-every", "100000", "--metrics", metrics],
        capture_output=True, text=True).stdout
    status = re.search(r"^exit status (-?\d+)", out, re.M)
    ended = re.search(r"^all ranks ended within 60 s: yes \(([\d.]+) s\)", out, re.M)
    names = re.search(rf"loom-run: error: .*rank {rank}\b", out)
    ok = (status and int(status.group(1)) != 0 and ended and
          "survivors: none" in out and names)
    seconds = float(ended.group(1)) if ended else float("nan")
    results[sig].append((bool(ok), seconds))
    failed += not ok
    print(f"run {run:3d}: SIG{sig:<4} rank {rank} after {after:2d} steps: "
          f"{'ok' if ok else 'FAILED'} "
          f"(status {status.group(1) if status else '?'}, ended in {seconds:.1f} s)",
          flush=True)
    if not ok:
        print("    " + out.replace("\n", "\n    "))
print(f"\n| signal | runs | clean | slowest end (s) |\n|---|---|---|---|")
for sig in signals:
    rows = results[sig]
    if rows:
        print(f"| SIG{sig} | {len(rows)} | {sum(ok for ok, _ in rows)} | "
              f"{max(s for _, s in rows):.1f} |")
print(f"\n{args.runs - failed} of {args.runs} runs clean ({args.ranks} ranks)")
if not failed:
    shutil.rmtree(work)
sys.exit(1 if failed else 0)
