"""What the test drivers of a running job (kill_rank.py, listeners.py,
partition.py, rss_over_saves.py) read from /proc: the job's processes, their
names, and how many steps a rank has taken."""
import os


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
