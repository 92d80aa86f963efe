"""Documents placed on the ranks by the per-step planner (loomc
--partition-sequences, docs/sequences.md) against packed data parallelism
(each rank reads its rows of the document stream), same model, same global
tokens per step, same data, in this run, alternating the two `--rounds`
times. For each: the median step time (the median over rounds of each run's
median over the timed steps), the communication per step, the attention
pairs the masks leave (of the dense causal rows') and the per-rank
max/mean of those pairs, from loom-run's `documents` record. The
partitioned model is compiled twice: with the documents cut every `seq`
tokens as the packed rows cut them (about the same pairs: a like-for-like
step), and with `context=C` (documents attended whole up to C tokens:
more pairs, the point of the feature).

With R ranks on this 2-core machine the ranks share the cores when R > 2,
so wall time then understates what balance buys; the pairs and their
balance are counts, not times.

Prints a Markdown table; --record appends it and the command to
bench/RESULTS.md.

Usage: python3 bench/sequence_partition.py [--spec gpt:...] [--ranks 2]
       [--sigmas 1.0,1.5] [--median 128] [--context 2048] [--steps 30]
       [--warmup 5] [--rounds 3] [--record]
(run from the repository root after building)"""
import argparse
import json
import os
import statistics
import tempfile

from clusterlib import loom, loomc, results_section


def documents_record(path):
    for line in open(path):
        record = json.loads(line)
        if "documents" in record:
            return record["documents"]
    raise SystemExit(f"{path}: no documents record")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spec", default="gpt:vocab=256,seq=256,dim=64,heads=4,layers=2,batch=8,docs=1")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--sigmas", default="1.0,1.5")
    ap.add_argument("--median", type=int, default=128)
    ap.add_argument("--context", type=int, default=2048)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()
    dp = f"--dp={args.ranks}"
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        arts = {
            "packed rows": (args.spec, [dp]),
            "partitioned, cut every seq": (args.spec, [dp, "--partition-sequences"]),
            f"partitioned, context={args.context}":
                (f"{args.spec},context={args.context}", [dp, "--partition-sequences"]),
        }
        paths = {}
        for i, (name, (spec, flags)) in enumerate(arts.items()):
            paths[name] = os.path.join(tmp, f"a{i}")
            loomc(spec, paths[name], *flags)
        for sigma in args.sigmas.split(","):
            data = f"synthetic-docs:median={args.median},sigma={sigma},count=4000"
            times = {n: [] for n in arts}
            comm = {n: [] for n in arts}
            docs = {}
            for _ in range(args.rounds):
                for name in arts:
                    r = loom(paths[name], None, args.steps, args.warmup, tmp,
                             hosts=args.ranks, data=data)
                    times[name].append(r["median"])
                    comm[name].append(r["comm"])
                    docs[name] = documents_record(os.path.join(tmp, "m.jsonl"))
            base = statistics.median(times["packed rows"])
            for name in arts:
                t = statistics.median(times[name])
                d = docs[name]
                rows.append(
                    f"| {sigma} | {name} | {t * 1e3:.1f} | {base / t:.2f}x "
                    f"| {statistics.median(comm[name]) * 1e3:.1f} "
                    f"| {100 * d['pairs_fraction']:.0f} % "
                    f"| {d['load_max_over_mean']:.3f} ({d['load_max_over_mean_worst']:.3f}) |")
    table = "\n".join([
        "| σ | run | median step (ms) | step rate vs packed | communication (ms/step) "
        "| attention pairs vs dense rows | per-rank pairs max/mean (worst step) |",
        "|---|---|---|---|---|---|---|", *rows])
    print(table)
    if args.record:
        with results_section("Documents placed by the planner against packed rows",
                             host=True) as out:
            cmd = (f"python3 bench/sequence_partition.py --spec {args.spec} --ranks {args.ranks} "
                   f"--sigmas {args.sigmas} --median {args.median} --context {args.context} "
                   f"--steps {args.steps} --warmup {args.warmup} --rounds {args.rounds}")
            out.write(f"`{cmd} --record`\n\n{table}\n")


if __name__ == "__main__":
    main()
