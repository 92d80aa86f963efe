"""Data-parallel zeroth-order training on a slow link: 4 emulated hosts
(bench/cluster.sh, one rank each) at 10 Mbit/s, the same GPT and per-rank
batch trained by ZO (loomc --dp=4 --zo=mezo: two scalar all-reduces a
step) and by gradient DDP (an all-reduce of every gradient a step), all in
this run.

The 4 ranks share this machine's cores, so each one computes more slowly
than alone; the ceiling of a rank's step is measured the same way, with 4
independent one-rank runs of the one-rank artifact at once and no
communication ("side by side", clusterlib.loom_side_by_side). Scaling
efficiency = that step time / the cluster's step time: 1.0 when the
communication costs nothing.

Prints a Markdown table; --record appends it and the command to
bench/RESULTS.md.

Usage: python3 bench/zo_cluster.py [--spec gpt:...] [--rate 10mbit]
       [--steps 30] [--warmup 5] [--record]
(run as root from the repository root after building)"""
import argparse
import math
import os
import tempfile

from clusterlib import loom, loom_side_by_side, loomc, results_section


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spec", default="gpt:vocab=256,seq=64,dim=128,heads=4,layers=2,batch=8")
    ap.add_argument("--rate", default="10mbit")
    ap.add_argument("--hosts", type=int, default=4)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--ddp-steps", type=int, default=6)
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()
    n = args.hosts
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, flags, steps in [("ZO (MeZO)", ["--zo=mezo:eps=1e-3,lr=1e-4"], args.steps),
                                   ("gradient DDP (AdamW)", [], args.ddp_steps)]:
            one = os.path.join(tmp, "one")
            many = os.path.join(tmp, "many")
            manifest = loomc(args.spec, one, *flags)
            loomc(args.spec, many, f"--dp={n}", *flags)
            params = sum(4 * math.prod(p["shape"]) for p in manifest["params"])
            side = loom_side_by_side(one, n, steps, args.warmup, tmp)
            run = loom(many, args.rate, steps, args.warmup, tmp, hosts=n,
                       extra=["--trace", os.path.join(tmp, "t.json")])
            rows.append((name, params, side, run["mean"], side / run["mean"]))
            print(name, f"side by side {side * 1e3:.1f} ms, cluster "
                  f"{run['mean'] * 1e3:.1f} ms, efficiency {side / run['mean']:.3f}",
                  flush=True)
    table = "\n".join(
        [f"| {n} ranks at {args.rate} | model bytes | step, {n} one-rank runs side by side (ms) "
         f"| step on the cluster (ms) | scaling efficiency |", "|---|---|---|---|---|"] +
        [f"| {name} | {params / 2**20:.2f} MiB | {side * 1e3:.1f} | {run * 1e3:.1f} | {eff:.3f} |"
         for name, params, side, run, eff in rows])
    print(table)
    if args.record:
        with results_section("Zeroth-order data parallelism on a slow link") as out:
            cmd = (f"python3 bench/zo_cluster.py --spec {args.spec} --rate {args.rate} "
                   f"--hosts {n} --steps {args.steps} --warmup {args.warmup} "
                   f"--ddp-steps {args.ddp_steps}")
            out.write(f"`{cmd} --record`\n\n{table}\n")


if __name__ == "__main__":
    main()
