"""Starts a multi-rank job, waits until rank R has taken some steps, then
signals that rank (SIGKILL by default) and measures how long the job takes
to end. Prints the job's exit status, the time, whether any rank outlived
the job, and the job's stderr.

usage: kill_rank.py --rank R --metrics FILE [--after-steps K]
                    [--signal KILL|STOP] [--launcher] [--timeout S] -- COMMAND...

With --launcher, the job's own process (loom-run --ranks, or mpirun) is
signalled once rank R has taken its steps, and the ranks and the launcher's
other descendants must end by themselves.

FILE is the --metrics path the job writes (rank R's file is FILE.rank<R>
for R > 0); the rank's process is found by its OMPI_COMM_WORLD_RANK among
the job's descendants. After --timeout seconds everything is killed and the
script exits 1.
"""
import argparse
import os
import signal
import subprocess
import sys
import time

from jobprocs import alive, descendants, kill_all, rank_of, steps_done

ap = argparse.ArgumentParser()
ap.add_argument("--rank", type=int, required=True)
ap.add_argument("--metrics", required=True)
ap.add_argument("--after-steps", type=int, default=3)
ap.add_argument("--signal", default="KILL")
ap.add_argument("--launcher", action="store_true")
ap.add_argument("--timeout", type=float, default=90)
ap.add_argument("command", nargs=argparse.REMAINDER)
args = ap.parse_args()
command = args.command[1:] if args.command[:1] == ["--"] else args.command


stderr_path = args.metrics + ".stderr"
with open(stderr_path, "w") as err:
    job = subprocess.Popen(command, stderr=err, start_new_session=True)
deadline = time.time() + args.timeout
metrics = args.metrics + (f".rank{args.rank}" if args.rank else "")
victim = None
try:
    while victim is None:
        if time.time() > deadline or job.poll() is not None:
            raise RuntimeError("the job ended or hung before rank %d took %d "
                               "steps" % (args.rank, args.after_steps))
        if steps_done(metrics) >= args.after_steps:
            ranks = {p: rank_of(p) for p in descendants(job.pid)}
            victim = next((p for p, r in ranks.items() if r == args.rank), None)
        time.sleep(0.05)
    job_ranks = [p for p in descendants(job.pid) if rank_of(p) is not None]
    if args.launcher:
        # Everything under the launcher (mpiexec too) must go.
        job_ranks = sorted(descendants(job.pid))
        victim = job.pid
    os.kill(victim, getattr(signal, "SIG" + args.signal))
    start = time.time()
    status = job.wait(timeout=max(1.0, deadline - time.time()))
    while args.launcher and any(alive(p) for p in job_ranks):
        if time.time() > deadline:
            break
        time.sleep(0.05)
    elapsed = time.time() - start
except (RuntimeError, subprocess.TimeoutExpired) as e:
    os.killpg(job.pid, signal.SIGKILL)
    print(f"FAILED: {e}")
    print(open(stderr_path).read())
    sys.exit(1)
time.sleep(0.5)
survivors = [p for p in job_ranks if alive(p)]
print(f"signalled {'the launcher' if args.launcher else 'rank %d' % args.rank}"
      f" with SIG{args.signal}")
print(f"exit status {status}")
print(f"all ranks ended within 60 s: {'yes' if elapsed < 60 else 'NO'}"
      f" ({elapsed:.1f} s)")
print(f"survivors: {survivors if survivors else 'none'}")
sys.stdout.write(open(stderr_path).read())
kill_all(survivors)
