"""Cuts the network link of one host of an emulated cluster (bench/cluster.sh)
while a job trains on it, and reports how long its ranks take to stop
(docs/reliability.md, scenario 4).

usage: partition.py --metrics FILE --cluster CLUSTER_SH [--hosts N]
                    [--cut-host K] [--after-steps S] [--deadline D] -- COMMAND...

Starts `CLUSTER_SH --hosts N -- COMMAND...` (COMMAND writes --metrics FILE),
waits until it has logged S steps, takes host K's eth0 down, then waits up
to D seconds for every loom-run process in the cluster's namespaces to end.
Prints "ranks stopped within D s after the cut" or "ranks still running D s
after the cut", then "launcher exited by itself" or "launcher still running
after the ranks stopped": Open MPI 4.1's mpirun waits for the unreachable
daemon's answer forever, so then this kills every process left in the
namespaces (mpirun, the far daemon) and cluster.sh tears the namespaces
down. The job's stderr follows the report, after a "stderr:" line.
"""
import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time

from jobprocs import comm, steps_done

ap = argparse.ArgumentParser()
ap.add_argument("--metrics", required=True)
ap.add_argument("--cluster", required=True)
ap.add_argument("--hosts", type=int, default=2)
ap.add_argument("--cut-host", type=int, default=2)
ap.add_argument("--after-steps", type=int, default=5)
ap.add_argument("--deadline", type=float, default=30)
ap.add_argument("--timeout", type=float, default=120,
                help="seconds to wait for the job to start training")
ap.add_argument("command", nargs=argparse.REMAINDER)
args = ap.parse_args()
command = args.command[1:] if args.command[:1] == ["--"] else args.command


def namespace_pids(name):
    p = subprocess.run(["ip", "netns", "pids", name], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True)
    return [int(pid) for pid in p.stdout.split()]


err = tempfile.TemporaryFile(mode="w+")
job = subprocess.Popen([args.cluster, "--hosts", str(args.hosts), "--"] + command,
                       stdout=subprocess.DEVNULL, stderr=err,
                       start_new_session=True)
# cluster.sh names its namespaces after its own pid.
hosts = [f"lm{job.pid}h{i}" for i in range(1, args.hosts + 1)]
start = time.time()
while steps_done(args.metrics) < args.after_steps:
    if job.poll() is not None or time.time() - start > args.timeout:
        err.seek(0)
        sys.stdout.write("the job did not train (status %s)\nstderr:\n%s" %
                         (job.poll(), err.read()))
        os.killpg(job.pid, signal.SIGKILL)
        sys.exit(1)
    time.sleep(0.1)

cut = hosts[args.cut_host - 1]
subprocess.run(["ip", "-n", cut, "link", "set", "eth0", "down"], check=True)
cut_at = time.time()


def ranks():
    return [p for h in hosts for p in namespace_pids(h) if comm(p) == "loom-run"]


while ranks() and time.time() - cut_at < args.deadline:
    time.sleep(0.2)
stopped = not ranks()
took = time.time() - cut_at
print("ranks %s %g s after the cut (%.1f s)" % (
    "stopped within" if stopped else "still running", args.deadline, took))
# The launcher gets a few seconds more to notice on its own.
while job.poll() is None and time.time() - cut_at < args.deadline + 5:
    time.sleep(0.2)
if job.poll() is None:
    print("launcher still running after the ranks stopped"
          if stopped else "launcher still running")
    for h in hosts:
        for pid in namespace_pids(h):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    try:
        job.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(job.pid, signal.SIGKILL)
        job.wait()
else:
    print("launcher exited by itself")
left = [h for h in hosts if subprocess.run(
    ["ip", "netns", "pids", h], stdout=subprocess.DEVNULL,
    stderr=subprocess.DEVNULL).returncode == 0]
print("namespaces left: %d" % len(left))
err.seek(0)
sys.stdout.write("stderr:\n" + err.read())
sys.exit(0 if stopped else 1)
