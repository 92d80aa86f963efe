"""Starts a multi-rank job, waits until rank 0 has taken some steps, then
lists the TCP sockets that the job's processes (the launcher, mpiexec, its
daemons and the ranks) listen on, and stops the job. Prints one line per
process name and listening address, as "NAME listen ADDRESS:*" (the port
left out), sorted and without repeats, then "listeners: N".

usage: listeners.py --metrics FILE [--after-steps K] [--timeout S] -- COMMAND...

FILE is the --metrics path the job writes. Reads /proc/net/tcp{,6} and the
processes' socket inodes (/proc/PID/fd), so it needs neither ss nor root
beyond what reading one's own processes takes.
"""
import argparse
import ipaddress
import os
import signal
import struct
import subprocess
import sys
import time

from jobprocs import comm, descendants, steps_done

ap = argparse.ArgumentParser()
ap.add_argument("--metrics", required=True)
ap.add_argument("--after-steps", type=int, default=3)
ap.add_argument("--timeout", type=float, default=60)
ap.add_argument("command", nargs=argparse.REMAINDER)
args = ap.parse_args()
command = args.command[1:] if args.command[:1] == ["--"] else args.command


def socket_inodes(pids):
    """socket inode -> the name of a process that holds it."""
    inodes = {}
    for pid in pids:
        name = comm(pid)
        if not name:
            continue
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                try:
                    target = os.readlink(f"/proc/{pid}/fd/{fd}")
                except OSError:
                    continue
                if target.startswith("socket:["):
                    inodes[target[8:-1]] = name
        except OSError:
            pass
    return inodes


def address(hex_addr, v6):
    raw = bytes.fromhex(hex_addr)
    if v6:  # four little-endian 32-bit words
        raw = b"".join(struct.pack("<I", struct.unpack(">I", raw[i:i + 4])[0])
                       for i in range(0, 16, 4))
        return str(ipaddress.IPv6Address(raw))
    return str(ipaddress.IPv4Address(struct.pack("<I", int(hex_addr, 16))))


def listening(inodes):
    found = set()
    for name, v6 in (("tcp", False), ("tcp6", True)):
        try:
            lines = open(f"/proc/net/{name}").read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            if state == "0A" and inode in inodes:  # TCP_LISTEN
                found.add(f"{inodes[inode]} listen {address(local.split(':')[0], v6)}:*")
    return found


job = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       start_new_session=True)
deadline = time.time() + args.timeout
while steps_done(args.metrics) < args.after_steps:
    if job.poll() is not None or time.time() > deadline:
        os.killpg(job.pid, signal.SIGKILL)
        sys.exit(f"the job ended or timed out before {args.after_steps} steps")
    time.sleep(0.1)
addresses = listening(socket_inodes({job.pid} | descendants(job.pid)))
os.killpg(job.pid, signal.SIGTERM)
try:
    job.wait(timeout=20)
except subprocess.TimeoutExpired:
    os.killpg(job.pid, signal.SIGKILL)
for line in sorted(addresses):
    print(line)
print(f"listeners: {len(addresses)}")
