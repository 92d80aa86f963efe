"""Runs a training job that saves a checkpoint every step and measures the
resident memory, threads and open files of each of its loom-run processes
from /proc (docs/reliability.md, scenarios 13 and 5: host memory must
not grow with the number of saves, nor must threads or file descriptors).

usage: rss_over_saves.py --metrics FILE [--from S] [--to T] [--max-growth F]
                         -- COMMAND...

COMMAND (a loom-run, or `loom-run --ranks N`, with --metrics FILE and
--save-every 1) runs while every process named loom-run in its tree is
sampled. Each process's resident set when FILE shows S steps is compared
with its resident set when it shows T steps (T - S saves later); prints
"N processes, T-S saves: largest growth X %" and fails if X exceeds F
(default 1) or the job fails. Threads and open files are compared by their
fewest in the first and in the last 10 steps (a background save in flight
holds a thread and files for a while; a leak raises the floor): fails if
the floor rose by more than a save in flight holds.
"""
import argparse
import os
import subprocess
import sys
import time

from jobprocs import comm, descendants, steps_done

ap = argparse.ArgumentParser()
ap.add_argument("--metrics", required=True)
ap.add_argument("--from", dest="start", type=int, default=10)
ap.add_argument("--to", type=int, default=110)
ap.add_argument("--max-growth", type=float, default=1.0, help="percent")
ap.add_argument("command", nargs=argparse.REMAINDER)
args = ap.parse_args()
command = args.command[1:] if args.command[:1] == ["--"] else args.command
page = 4096
# On a loaded machine a save may be in flight through all of the last 10
# steps and none of the first: its writer thread and the files it holds
# (a checkpoint file, its directory, the MPI writers' communicator). A leak
# of one per save grows by the number of saves.
SLACK_THREADS, SLACK_FILES = 2, 4


def threads_and_files(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            threads = next(int(l.split()[1]) for l in f if l.startswith("Threads:"))
        return threads, len(os.listdir(f"/proc/{pid}/fd"))
    except (OSError, StopIteration, ValueError):
        return None


def resident(pid):
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * page
    except (OSError, IndexError, ValueError):
        return None


job = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       text=True)
first, last = {}, {}  # pid -> resident bytes at --from and --to steps
early, late = {}, {}  # pid -> fewest (threads, files) in the first/last 10 steps
while job.poll() is None:
    steps = steps_done(args.metrics)
    if steps >= args.start:
        pids = [p for p in descendants(job.pid) | {job.pid} if comm(p) == "loom-run"]
        for pid in pids:
            rss, counts = resident(pid), threads_and_files(pid)
            if rss is None or counts is None:
                continue
            first.setdefault(pid, rss)
            if steps <= args.to:
                last[pid] = rss
            window = (early if steps < args.start + 10 else
                      late if args.to - 10 < steps <= args.to else None)
            if window is not None:
                old = window.get(pid, counts)
                window[pid] = (min(old[0], counts[0]), min(old[1], counts[1]))
    time.sleep(0.005)
err = job.stderr.read()
if job.returncode != 0:
    sys.exit(f"the job failed (status {job.returncode}):\n{err}")
if steps_done(args.metrics) < args.to or not first:
    sys.exit(f"the job ended before step {args.to} was sampled")
growth = max((last[p] - first[p]) / first[p] * 100 for p in first if p in last)
print(f"{len(first)} processes, {args.to - args.start} saves: largest growth "
      f"{growth:.2f} %")
rose = []
for pid in sorted(first):
    print(f"  pid {pid}: {first[pid] / 2**20:.1f} MiB -> {last.get(pid, 0) / 2**20:.1f} MiB", end="")
    if pid in early and pid in late:
        (t0, f0), (t1, f1) = early[pid], late[pid]
        print(f"; threads {t0} -> {t1}, open files {f0} -> {f1}", end="")
        if t1 > t0 + SLACK_THREADS or f1 > f0 + SLACK_FILES:
            rose.append(pid)
    print()
if rose:
    sys.exit(f"threads or open files grew over the saves in pid {rose}")
if growth > args.max_growth:
    sys.exit(f"resident memory grew {growth:.2f} % over "
             f"{args.to - args.start} saves (at most {args.max_growth} %)")
