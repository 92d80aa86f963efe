"""Overlap without calibration, and never a loss: for each link rate of
the emulated 2-host cluster (bench/cluster.sh), the same GPT (the
quickstart's) and per-rank batch, uncalibrated, measured in the same run:
  - synchronous DDP            (loomc --dp=2)
  - overlapped DDP, always on  (loomc --dp=2 --overlap; loom-run
                                --async-collectives on)
  - overlapped DDP, auto       (the same artifact, loom-run's default: 4
                                steps each way after 2, then the faster)
and the same three for ZeRO-3 (--zero=3, prefetch with --overlap). Reports
median step times after the tuner's 10 steps, what auto chose, auto over
synchronous, and for DDP the limit max(compute, communication): compute
as two one-rank runs side by side measure it, communication as the
synchronous run's collectives take.

Usage (root, after building, on an otherwise idle machine):
  /usr/bin/python3 bench/overlap_auto.py [--rates 10gbit,1gbit,250mbit,100mbit] [--record]"""
import argparse
import os
import re
import sys
import tempfile

from clusterlib import BIN, loom, loom_side_by_side, results_section, sh

WARMUP = 10  # the tuner's 2 + 4 + 4 steps


def compile_all(spec, tmp):
    paths = {}
    for name, flags in [("ddp", []), ("ddp+overlap", ["--overlap"]),
                        ("zero3", ["--zero=3"]), ("zero3+overlap", ["--zero=3", "--overlap"])]:
        paths[name] = os.path.join(tmp, name)
        sh([os.path.join(BIN, "loomc"), f"--model={spec}", "--dp=2", *flags, "-o",
            paths[name]])
    paths["one"] = os.path.join(tmp, "one")
    sh([os.path.join(BIN, "loomc"), f"--model={spec}", "-o", paths["one"]])
    return paths


def measure(paths, rate, steps, tmp):
    """Median step times (s) and what auto chose, for DDP and ZeRO-3."""
    row = {}
    for kind in ("ddp", "zero3"):
        sync = loom(paths[kind], rate, steps, WARMUP, tmp)
        on = loom(paths[kind + "+overlap"], rate, steps, WARMUP, tmp,
                  extra=["--async-collectives", "on"])
        auto = loom(paths[kind + "+overlap"], rate, steps, WARMUP, tmp)
        m = re.search(r"collectives: (.*) \(--async-collectives auto\)", auto["log"])
        chose = re.search(r": (\w+) from step", m.group(1)).group(1) if m else "?"
        row[kind] = {"sync": sync["median"], "comm": sync["comm"], "on": on["median"],
                     "auto": auto["median"], "chose": chose,
                     "probe": m.group(1).split(" (")[0] if m else ""}
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spec", default="gpt:vocab=256,seq=64,dim=64,heads=4,layers=2,batch=8")
    ap.add_argument("--rates", default="10gbit,1gbit,250mbit,100mbit")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        paths = compile_all(args.spec, tmp)
        compute = loom_side_by_side(paths["one"], 2, args.steps, 3, tmp)
        for rate in args.rates.split(","):
            rows.append((rate, measure(paths, rate, args.steps, tmp)))
            print(rate, rows[-1][1], flush=True)
    lines = ["| link | what | sync step (ms) | overlap on (ms) | auto (ms) | auto chose |"
             " on / sync | auto / sync | auto / max(compute, comm) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for rate, row in rows:
        for kind, r in row.items():
            limit = max(compute, r["comm"]) if kind == "ddp" else float("nan")
            lines.append(f"| {rate} | {kind} | {r['sync'] * 1e3:.1f} | {r['on'] * 1e3:.1f} |"
                         f" {r['auto'] * 1e3:.1f} | {r['chose']} ({r['probe']}) |"
                         f" {r['on'] / r['sync']:.2f} | {r['auto'] / r['sync']:.2f} |"
                         f" {r['auto'] / limit:.2f} |")
    table = "\n".join(lines)
    note = (f"Compute (two one-rank runs side by side): {compute * 1e3:.1f} ms/step. "
            "Ratios of step times: below 1 is faster than synchronous.")
    print(table + "\n\n" + note)
    if args.record:
        with results_section("Overlap, uncalibrated, with --async-collectives auto") as out:
            out.write(f"`/usr/bin/python3 bench/overlap_auto.py --spec {args.spec} --rates "
                      f"{args.rates} --steps {args.steps} --record`\n\n{table}\n\n{note}\n")


if __name__ == "__main__":
    sys.exit(main())
