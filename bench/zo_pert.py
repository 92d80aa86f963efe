"""Perturbation parallelism (loomc --zo=mezo:pert=2, DistZO2): the two
forward passes of a zeroth-order step on two local ranks, one each, against
one rank computing both, same model and batch, in this run. Both ranks of
the pair have a core of their own on a 2-core machine, so the ideal is
2.0x one rank's step rate. Also the losses: bit-identical by construction
(test/e2e/zo/perturbation-parallel.test), checked here again.

Prints a Markdown table; --record appends it and the command to
bench/RESULTS.md.

Usage: python3 bench/zo_pert.py [--spec gpt:...] [--steps 30] [--warmup 3]
       [--record]
(run from the repository root after building)"""
import argparse
import json
import os
import tempfile

from clusterlib import loom, loomc, results_section


def losses(path):
    return [json.loads(l)["loss"] for l in open(path) if '"summary"' not in l]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spec", default="gpt:vocab=256,seq=128,dim=256,heads=8,layers=4,batch=8")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()
    zo = "--zo=mezo:eps=1e-3,lr=1e-4"
    with tempfile.TemporaryDirectory() as tmp:
        one, pair = os.path.join(tmp, "one"), os.path.join(tmp, "pair")
        loomc(args.spec, one, zo)
        loomc(args.spec, pair, zo + ",pert=2")
        a = loom(one, None, args.steps, args.warmup, tmp, hosts=1)
        la = losses(os.path.join(tmp, "m.jsonl"))
        b = loom(pair, None, args.steps, args.warmup, tmp, hosts=2)
        lb = losses(os.path.join(tmp, "m.jsonl"))
    same = "bit-identical" if la == lb else "DIFFERENT"
    speedup = a["median"] / b["median"]
    table = "\n".join([
        "| run | median step (ms) | step rate vs one rank | losses |",
        "|---|---|---|---|",
        f"| one rank, both forward passes | {a['median'] * 1e3:.1f} | 1.00x | |",
        f"| a pair of ranks, one forward pass each (`pert=2`) | {b['median'] * 1e3:.1f} "
        f"| {speedup:.2f}x | {same} over {args.warmup + args.steps} steps |"])
    print(table)
    if args.record:
        with results_section("Zeroth-order perturbation parallelism", host=True) as out:
            cmd = (f"python3 bench/zo_pert.py --spec {args.spec} --steps {args.steps} "
                   f"--warmup {args.warmup}")
            out.write(f"`{cmd} --record`\n\n{table}\n")


if __name__ == "__main__":
    main()
