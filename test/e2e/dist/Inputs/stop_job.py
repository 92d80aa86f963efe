"""Starts a training job, waits until it has taken some steps, then asks it
to stop with a signal, as a user or a scheduler would, and reports how it
ended: its exit status, whether any of its processes outlived it, the last
step in its metrics, the step its checkpoint holds, and its stderr.

usage: stop_job.py --metrics FILE [--after-steps K] [--signal INT]
                   [--group] [--again-after S] [--freeze-rank R]
                   [--suspend] [--checkpoint DIR] [--timeout S] -- COMMAND...

--group signals the job's process group, as the terminal's Ctrl-C does
(the job runs in a session of its own); otherwise its process alone.
--again-after sends the signal a second time S seconds after the first.
--freeze-rank stops rank R (SIGSTOP) before the signal, so the ranks
cannot agree. --suspend first sends SIGTSTP to the group (Ctrl-Z), reports
whether every rank stopped, then SIGCONT (fg) and lets the job go on for
K more steps. FILE is the job's --metrics path (rank 0's). After --timeout
seconds everything is killed and the script exits 1.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import time

from jobprocs import alive, descendants, kill_all, rank_of, state, steps_done

ap = argparse.ArgumentParser()
ap.add_argument("--metrics", required=True)
ap.add_argument("--after-steps", type=int, default=3)
ap.add_argument("--signal", default="INT")
ap.add_argument("--group", action="store_true")
ap.add_argument("--again-after", type=float)
ap.add_argument("--freeze-rank", type=int)
ap.add_argument("--suspend", action="store_true")
ap.add_argument("--checkpoint")
ap.add_argument("--timeout", type=float, default=90)
ap.add_argument("command", nargs=argparse.REMAINDER)
args = ap.parse_args()
command = args.command[1:] if args.command[:1] == ["--"] else args.command
signum = getattr(signal, "SIG" + args.signal)


def send(sig):
    if args.group:
        os.killpg(job.pid, sig)
    else:
        os.kill(job.pid, sig)


def wait_for_steps(count, deadline):
    while steps_done(args.metrics) < count:
        if time.time() > deadline or job.poll() is not None:
            raise RuntimeError(f"the job ended or hung before {count} steps")
        time.sleep(0.05)


def ranks():
    return {p: r for p in descendants(job.pid)
            if (r := rank_of(p)) is not None}


stderr_path = args.metrics + ".stderr"
with open(stderr_path, "w") as err:
    job = subprocess.Popen(command, stderr=err, start_new_session=True)
deadline = time.time() + args.timeout
processes = []
try:
    wait_for_steps(args.after_steps, deadline)
    if args.suspend:
        os.killpg(job.pid, signal.SIGTSTP)
        # The launcher passes it to mpiexec, which passes it to the ranks.
        until = time.time() + 15
        while not (stopped := len(procs := ranks()) > 1 and
                   all(state(p) == "T" for p in procs)):
            if time.time() > until:
                break
            time.sleep(0.1)
        print(f"suspended: {'every rank stopped' if stopped else 'NOT ALL'}")
        os.killpg(job.pid, signal.SIGCONT)
        wait_for_steps(steps_done(args.metrics) + args.after_steps, deadline)
        print("continued: the job goes on")
    if args.freeze_rank is not None:
        victim = next(p for p, r in ranks().items() if r == args.freeze_rank)
        os.kill(victim, signal.SIGSTOP)
    processes = sorted(descendants(job.pid))
    send(signum)
    if args.again_after is not None:
        time.sleep(args.again_after)
        if job.poll() is None:
            send(signum)
    status = job.wait(timeout=max(1.0, deadline - time.time()))
    while any(alive(p) for p in processes) and time.time() < deadline:
        time.sleep(0.05)
except (RuntimeError, subprocess.TimeoutExpired, StopIteration) as e:
    os.killpg(job.pid, signal.SIGKILL)
    kill_all(processes)
    print(f"FAILED: {e!r}")
    print(open(stderr_path).read())
    sys.exit(1)
survivors = [p for p in processes if alive(p)]
print(f"signalled {'the group of ' if args.group else ''}the job with "
      f"SIG{args.signal}{' twice' if args.again_after is not None else ''}")
print(f"exit status {status}")
print(f"survivors: {survivors if survivors else 'none'}")
print(f"last step in metrics: {steps_done(args.metrics)}")
if args.checkpoint:
    with open(os.path.join(args.checkpoint, "trainer.json")) as f:
        print(f"checkpoint step {json.load(f)['step']}")
sys.stdout.write(open(stderr_path).read())
kill_all(survivors)
