"""What the test drivers of a running job (kill_rank.py, listeners.py,
partition.py, rss_over_saves.py, stop_job.py) read from /proc: the job's
processes, their names, ranks and states, and how many steps a rank has
taken; and how they leave none of a job's processes behind."""
import os
import signal


def descendants(root):
    """Every process below `root` (not `root` itself)."""
    table = {}  # pid -> ppid
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    table[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError):
                pass
    found, frontier = set(), {root}
    while frontier:
        frontier = {p for p, pp in table.items() if pp in frontier} - found
        found |= frontier
    return found


def comm(pid):
    """The process's name (/proc/PID/comm), "" if it is gone."""
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


def steps_done(path):
    """Step lines in the --metrics file `path` so far."""
    try:
        with open(path) as f:
            return sum(1 for line in f if '"step"' in line)
    except OSError:
        return 0


def rank_of(pid):
    """The MPI rank of process `pid` (its OMPI_COMM_WORLD_RANK), or None."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            for item in f.read().split(b"\0"):
                if item.startswith(b"OMPI_COMM_WORLD_RANK="):
                    return int(item.split(b"=", 1)[1])
    except OSError:
        pass
    return None


def state(pid):
    """The process's state letter (R, S, T, Z, ...), "" if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return ""


def alive(pid):
    """A process that exists and is not a zombie."""
    return state(pid) not in ("", "Z", "X")


def kill_all(pids):
    """SIGKILL each of `pids` still there: no orphaned job is left behind a
    failing check."""
    for p in pids:
        try:
            os.kill(p, signal.SIGKILL)
        except OSError:
            pass
