"""Runs a training job that saves a checkpoint every step and measures the
resident memory of each of its loom-run processes from /proc
(research/reliability.md, scenario 13: host memory must not grow with the
number of saves).

usage: rss_over_saves.py --metrics FILE [--from S] [--to T] [--max-growth F]
                         -- COMMAND...

COMMAND (a loom-run, or `loom-run --ranks N`, with --metrics FILE and
--save-every 1) runs while every process named loom-run in its tree is
sampled. Each process's resident set when FILE shows S steps is compared
with its resident set when it shows T steps (T - S saves later); prints
"N processes, T-S saves: largest growth X %" and fails if X exceeds F
(default 1) or the job fails.
"""
import argparse
import subprocess
import sys
import time

from jobprocs import descendants, steps_done

ap = argparse.ArgumentParser()
ap.add_argument("--metrics", required=True)
ap.add_argument("--from", dest="start", type=int, default=10)
ap.add_argument("--to", type=int, default=110)
ap.add_argument("--max-growth", type=float, default=1.0, help="percent")
ap.add_argument("command", nargs=argparse.REMAINDER)
args = ap.parse_args()
command = args.command[1:] if args.command[:1] == ["--"] else args.command
page = 4096


def comm(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


def resident(pid):
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * page
    except (OSError, IndexError, ValueError):
        return None


job = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       text=True)
first, last = {}, {}  # pid -> resident bytes at --from and --to steps
while job.poll() is None:
    steps = steps_done(args.metrics)
    if steps >= args.start:
        pids = [p for p in descendants(job.pid) | {job.pid} if comm(p) == "loom-run"]
        for pid in pids:
            rss = resident(pid)
            if rss is None:
                continue
            first.setdefault(pid, rss)
            if steps <= args.to:
                last[pid] = rss
    time.sleep(0.005)
err = job.stderr.read()
if job.returncode != 0:
    sys.exit(f"the job failed (status {job.returncode}):\n{err}")
if steps_done(args.metrics) < args.to or not first:
    sys.exit(f"the job ended before step {args.to} was sampled")
growth = max((last[p] - first[p]) / first[p] * 100 for p in first if p in last)
print(f"{len(first)} processes, {args.to - args.start} saves: largest growth "
      f"{growth:.2f} %")
for pid in sorted(first):
    print(f"  pid {pid}: {first[pid] / 2**20:.1f} MiB -> {last.get(pid, 0) / 2**20:.1f} MiB")
if growth > args.max_growth:
    sys.exit(f"resident memory grew {growth:.2f} % over "
             f"{args.to - args.start} saves (at most {args.max_growth} %)")
