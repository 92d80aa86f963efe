"""Draws a few steps of a `loom-run --trace` file as a PNG timeline: one row
per rank and lane (compute: steps and waits; comm: collectives), so the
overlap can be seen without a trace viewer. The trace itself opens in
https://ui.perfetto.dev or chrome://tracing (docs/overlap.md).

Usage: /usr/bin/python3 bench/plot_trace.py TRACE.json OUT.png [--steps 28:30]"""
import argparse
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("out")
    ap.add_argument("--steps", default=None,
                    help="first:last step to draw (default: the last two)")
    args = ap.parse_args()
    events = json.load(open(args.trace))["traceEvents"]
    # Steps first, so the waits inside them are drawn on top.
    spans = sorted((e for e in events if e.get("ph") == "X"),
                   key=lambda e: not e["name"].startswith("step "))
    steps = sorted({int(e["name"].split()[1]) for e in spans
                    if e["name"].startswith("step ")})
    if not steps:
        sys.exit("plot_trace: no steps in " + args.trace)
    first, last = (map(int, args.steps.split(":")) if args.steps
                   else (max(steps[0], steps[-1] - 1), steps[-1]))
    window = [e for e in spans if e["name"] in (f"step {first}", f"step {last}")
              and e["pid"] == 0]
    t0 = min(e["ts"] for e in window)
    t1 = max(e["ts"] + e["dur"] for e in window)
    ranks = sorted({e["pid"] for e in spans})
    fig, ax = plt.subplots(figsize=(10, 1 + 0.8 * len(ranks) * 2))
    colors = {"step": "#9ecae1", "wait": "#de2d26", "comm": "#31a354"}
    labels, y = [], 0
    for rank in ranks:
        for tid, lane in ((0, "compute"), (1, "comm")):
            for e in spans:
                if e["pid"] != rank or e["tid"] != tid:
                    continue
                if e["ts"] + e["dur"] < t0 or e["ts"] > t1:
                    continue
                kind = ("comm" if tid == 1 else
                        "wait" if e["name"] == "wait" else "step")
                ax.broken_barh([((e["ts"] - t0) / 1e3, e["dur"] / 1e3)],
                               (y - 0.35, 0.7), facecolors=colors[kind],
                               edgecolors="black", linewidth=0.3)
            labels.append(f"rank {rank} {lane}")
            y += 1
    ax.set_yticks(range(len(labels)))
    ax.set_yticklabels(labels)
    ax.invert_yaxis()
    ax.set_xlabel("ms")
    ax.set_title(f"steps {first}-{last}: compute (blue), blocked in a wait "
                 "(red), collectives on the comm thread (green)")
    fig.tight_layout()
    fig.savefig(args.out)


if __name__ == "__main__":
    main()
