"""No layout loomc --plan proposes runs out of memory under a per-rank limit.

Every rank of the job runs under `ulimit -d` of LIMIT MiB (RLIMIT_DATA:
the heap and private mappings, where the tensors and the step's arena
live). What a rank needs besides its model (MPI, OpenBLAS's buffers, the
runtime) is measured first: the smallest limit, to 8 MiB, under which a
tiny GPT runs on the same ranks (BASE). The planner is then told
`memory=LIMIT - BASE` per rank; every layout it marks as fitting is
compiled and run (3 steps) under the limit, and must finish; the --refused
layouts it marks as not fitting that need the least are run too, to show
where the limit bites (a run out of memory can spin in OpenBLAS until the
timeout).

Usage (from the repository root, after building):
  python3 bench/plan_memory_limit.py [--spec gpt:...] [--ranks 4]
      [--limit-mib 600] [--refused 3] [--record]"""
import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clusterlib import BIN, results_section, sh  # noqa: E402
from plan_cluster import layout_flags  # noqa: E402

TINY = "gpt:vocab=32,seq=8,dim=16,heads=2,layers=2,batch=8"


def runs_under(artifact, ranks, limit_mib, timeout=120):
    """Whether 3 steps of `artifact` finish on `ranks` ranks, each under
    `ulimit -d` of `limit_mib` MiB. A run that runs out of memory fails (or,
    with OpenBLAS, can spin: the timeout kills its process group)."""
    cmd = ["bash", "-c", f"ulimit -d {int(limit_mib * 1024)} && exec \"$@\"",
           "plan_memory_limit", os.path.join(BIN, "loom-run"), artifact,
           "--ranks", str(ranks), "--steps", "3", "--log-every", "0"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        return proc.wait(timeout=timeout) == 0
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return False


def base_mib(ranks, tmp):
    """The smallest limit (to 8 MiB) a tiny GPT runs under on `ranks`."""
    out = os.path.join(tmp, "tiny")
    sh([os.path.join(BIN, "loomc"), f"--model={TINY}", f"--dp={ranks}",
        "-o", out])
    low, high = 8, 1024
    if not runs_under(out, ranks, high):
        sys.exit(f"a tiny GPT does not run on {ranks} ranks under {high} MiB")
    while high - low > 8:
        mid = (low + high) // 2
        if runs_under(out, ranks, mid, timeout=60):
            high = mid
        else:
            low = mid
    return high


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spec",
                    default="gpt:vocab=256,seq=64,dim=512,heads=8,layers=8,batch=8")
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--limit-mib", type=float, default=600)
    ap.add_argument("--refused", type=int, default=3)
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = base_mib(args.ranks, tmp)
        budget = args.limit_mib - base
        print(f"base {base} MiB per rank; the planner's memory: "
              f"{budget:.0f} MiB", flush=True)
        cluster = (f"nodes={args.ranks // 2},ranks-per-node=2,"
                   f"memory={budget:.0f}MiB")
        plan = sh([os.path.join(BIN, "loomc"), f"--model={args.spec}", "--plan",
                   f"--cluster={cluster}"]).stdout
        planned = []
        for line in plan.splitlines():
            m = re.match(r"(dp=\S+(?: x pp=\d+)?(?: x tp=\d+)?(?: m=\d+)?"
                         r"(?: zero=\d)?(?: overlap)?)\s+.*?(yes|no \((.*) MiB\))$",
                         line)
            if m:
                planned.append((m.group(1), m.group(2),
                                float(m.group(3)) if m.group(3) else 0.0))
        refused = sorted((p for p in planned if p[1] != "yes"),
                         key=lambda p: p[2])[:args.refused]
        rows = []
        for name, verdict, _ in [p for p in planned if p[1] == "yes"] + refused:
            out = os.path.join(tmp, "a")
            sh(["rm", "-rf", out])
            sh([os.path.join(BIN, "loomc"), *layout_flags(name, args.spec),
                "-o", out])
            ran = runs_under(out, args.ranks, args.limit_mib)
            rows.append((name, verdict, ran))
            print(f"{name}: planned {verdict}, under {args.limit_mib:g} MiB "
                  f"{'ran' if ran else 'failed'}", flush=True)
    proposed = [r for r in rows if r[1] == "yes"]
    failed = [r for r in proposed if not r[2]]
    table = ["| layout | the plan says it fits | ran under the limit |",
             "|---|---|---|"]
    table += [f"| {n} | {v} | {'yes' if ran else 'no'} |" for n, v, ran in rows]
    summary = (f"{args.spec} on {args.ranks} ranks, `ulimit -d` "
               f"{args.limit_mib:g} MiB per rank, base {base} MiB, planned "
               f"with memory={budget:.0f}MiB: {len(proposed)} layouts proposed, "
               f"{len(proposed) - len(failed)} ran, {len(failed)} ran out; "
               f"{sum(1 for r in rows if r[1] != 'yes' and r[2])} of "
               f"{len(rows) - len(proposed)} refused ones ran anyway")
    print("\n".join(table) + "\n\n" + summary)
    if args.record:
        with results_section("The planner's proposals under a per-rank memory "
                             "limit") as f:
            f.write(f"`python3 bench/plan_memory_limit.py --spec {args.spec} "
                    f"--ranks {args.ranks} --limit-mib {args.limit_mib:g}`\n\n"
                    + "\n".join(table) + "\n\n" + summary + ".\n")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
