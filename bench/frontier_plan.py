"""The layout planner on paper: loomc --plan for the Frontier study's GPTs
(Dash et al., "Optimizing Distributed Training on Frontier for Large
Language Models", 2023) on a description of Frontier, next to the layouts
and MFU the study reports.

The models, node counts, global batches and layouts are those of the
study's launch scripts (docs/layouts.md has the table); the vocabulary
(51200) is Megatron-LM's padded GPT-2 one (assumed). The machine, per GCD
(one MI250X is two GCDs, each a "GPU"; 8 per node):

- compute: a sustained rate of `GFLOPS` (half of a GCD's 191.5 TFLOP/s
  bf16 peak: an assumption, not a measurement; a predicted MFU can be at
  most that fraction);
- within a node: Infinity Fabric, 50 GB/s between GCDs (400 Gbit/s),
  10 us per collective;
- between nodes: Slingshot-11, four 200 Gbit/s NICs per node (800 Gbit/s,
  which loomc --plan shares among the node's groups that communicate at
  once: 100 Gbit/s each when all 8 GCDs do), 20 us;
- memory: 64 GiB of HBM per GCD.

MFU is model FLOPs per step (Megatron-LM's count without recomputation:
72 B s L h^2 (1 + s / 6h + V / 16 L h)) over the predicted step time,
the GCDs and their peak. Loom's steps are f32 (the study's bf16/fp16
halves the bytes of every collective and of the parameters) and keep
every activation (the study recomputes them): both make Loom's memory per
GCD larger than the study's. The 175B's and 1T's layouts shard the
optimizer state over their 2 data-parallel ranks (ZeRO-1), as the
planner's rows with zero=1 do.

usage: python3 bench/frontier_plan.py [--models 22B,175B,1T] [--record]
"""
import argparse
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from clusterlib import BIN, results_section  # noqa: E402

PEAK = 191.5e12
GFLOPS = PEAK / 2 / 1e9
LINKS = ("intra-bw=400gbit,intra-lat=10us,inter-bw=800gbit,inter-lat=20us,"
         f"memory=64GiB,gflops={GFLOPS:.0f}")
VOCAB = 51200

# name: (layers, hidden, heads, seq, global batch, nodes, the study's
# layout as loomc --plan describes it, its MFU)
MODELS = {
    "22B": (48, 6144, 48, 2048, 640, 2, "dp=2 x pp=8 m=320", 0.3838),
    "175B": (96, 12288, 96, 4096, 640, 16,
             "dp=2 x pp=16 x tp=4 m=320 zero=1", 0.3614),
    "1T": (128, 25600, 200, 2048, 1024, 128,
           "dp=2 x pp=128 x tp=4 m=512 zero=1", 0.3196),
}


def model_flops(layers, hidden, seq, batch):
    return (72 * batch * seq * layers * hidden ** 2 *
            (1 + seq / (6 * hidden) + VOCAB / (16 * layers * hidden)))


def plan(name):
    layers, hidden, heads, seq, batch, nodes, paper, paper_mfu = MODELS[name]
    spec = (f"gpt:vocab={VOCAB},seq={seq},dim={hidden},heads={heads},"
            f"layers={layers},batch={batch}")
    cluster = f"nodes={nodes},ranks-per-node=8,{LINKS}"
    start = time.time()
    out = subprocess.run([os.path.join(BIN, "loomc"), f"--model={spec}",
                          "--plan", f"--cluster={cluster}"], text=True,
                         capture_output=True)
    seconds = time.time() - start
    if out.returncode and "no layout fits" not in out.stderr:
        sys.exit(f"{name}: loomc --plan failed:\n{out.stderr}")
    rows = {}
    for line in out.stdout.splitlines():
        m = re.match(r"(dp=\S+(?: x pp=\d+)?(?: x tp=\d+)?(?: m=\d+)?"
                     r"(?: zero=\d)?(?: overlap)?)\s+([0-9.]+)\s+.*?"
                     r"(yes|no \([0-9.]+ MiB\)|-)$", line)
        if m:
            rows[m.group(1)] = (float(m.group(2)) / 1e3, m.group(3))
    found = re.search(r"^winner: (.+?):", out.stdout, re.M)
    # None fits: the planner says what the smallest needs.
    winner = found.group(1) if found else None
    nofit = out.stderr.strip().splitlines()[-1] if not found else ""
    flops = model_flops(layers, hidden, seq, batch)
    ranks = 8 * nodes

    def mfu(layout):
        return flops / (rows[layout][0] * ranks * PEAK)

    def fits(layout):
        return rows[layout][1]

    fastest = min(rows, key=lambda layout: rows[layout][0])

    return {"name": name, "spec": spec, "ranks": ranks, "layouts": len(rows),
            "seconds": seconds, "winner": winner,
            "winner_step": rows[winner][0] if winner else None,
            "winner_mfu": mfu(winner) if winner else None, "nofit": nofit,
            "fastest": fastest, "fastest_step": rows[fastest][0],
            "fastest_mfu": mfu(fastest), "fastest_fits": fits(fastest),
            "paper": paper, "paper_mfu": paper_mfu,
            "paper_step": rows[paper][0] if paper in rows else None,
            "paper_pred_mfu": mfu(paper) if paper in rows else None,
            "paper_fits": fits(paper) if paper in rows else "-"}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default="22B,175B,1T")
    parser.add_argument("--record", action="store_true")
    args = parser.parse_args()
    table = ["| model | GCDs | layouts planned (s) | planner's pick within "
             "64 GiB: step, MFU | fastest predicted (memory aside): step, "
             "MFU, fits | the study's layout | Loom's prediction for it: step, "
             "MFU, fits | the study's MFU |",
             "|---|---|---|---|---|---|---|---|"]
    for name in args.models.split(","):
        r = plan(name)
        paper = (f"{r['paper_step']:.2f} s, {100 * r['paper_pred_mfu']:.1f} %, "
                 f"{r['paper_fits']}" if r["paper_step"] else "not planned")
        pick = (f"{r['winner']}: {r['winner_step']:.2f} s, "
                f"{100 * r['winner_mfu']:.1f} %" if r["winner"] else
                "none (" + r["nofit"].replace(
                    "loomc: error: no layout fits in 65536.0 MiB per rank (",
                    "").rstrip(")") + ")")
        pick += (f" | {r['fastest']}: {r['fastest_step']:.2f} s, "
                 f"{100 * r['fastest_mfu']:.1f} %, {r['fastest_fits']}")
        table.append(
            f"| {name} | {r['ranks']} | {r['layouts']} ({r['seconds']:.1f} s) "
            f"| {pick} | {r['paper']} | {paper} | "
            f"{100 * r['paper_mfu']:.2f} % |")
        print(table[-1], flush=True)
    print("\n".join(table))
    if args.record:
        with results_section("The layout planner on paper: the Frontier "
                             "study's GPTs") as out:
            out.write(f"`python3 bench/frontier_plan.py --models "
                      f"{args.models}`: --cluster=nodes=N,ranks-per-node=8,"
                      f"{LINKS} (the script's docstring says where each "
                      f"number comes from).\n\n" + "\n".join(table) + "\n")


if __name__ == "__main__":
    main()
