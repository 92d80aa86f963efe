"""Zeroth-order training with offloaded parameters (loomc
--zo=mezo:offload=1, ZO2's schedule, docs/zo.md) on the CPU target, whose
link between host and "device" memory loom-run models
(--offload-bandwidth): in this run, on one model,

- memory: the step's temporaries (the device's share: uploaded and
  perturbed parameters, activations) against the resident parameters plus
  two layers, on a model at least 10x that; the step without offloading
  for scale;
- speed: the offloaded step at link bandwidths chosen so that moving the
  parameters takes 0.5x to 2x the step's compute, against max(compute,
  modelled transfer), where compute is the offloaded step with no link
  model (it includes the copies the CPU target makes for the link) and the
  transfer is one direction's bytes over the bandwidth (the two directions
  are separate links);
- the losses: bit-identical to the step without offloading.

Prints a Markdown table; --record appends it and the command to
bench/RESULTS.md.

Usage: python3 bench/zo_offload.py [--spec gpt:...] [--steps 20] [--warmup 3]
       [--record]
(run from the repository root after building)"""
import argparse
import json
import os
import sys
import tempfile

from clusterlib import loom, loomc, results_section

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "test", "e2e",
                                "zo", "Inputs"))
from offload_check import footprint  # noqa: E402


def losses(path):
    return [json.loads(l)["loss"] for l in open(path) if '"summary"' not in l]


def peak(path):
    return [json.loads(l) for l in open(path) if '"summary"' in l][0]["summary"]["peak_temp_bytes"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spec", default="gpt:vocab=256,seq=32,dim=128,heads=4,layers=24,batch=1")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()
    zo = "--zo=mezo:eps=1e-3,lr=1e-4"
    mib = 1 / 1048576
    with tempfile.TemporaryDirectory() as tmp:
        plain, off = os.path.join(tmp, "plain"), os.path.join(tmp, "off")
        loomc(args.spec, plain, zo)
        loomc(args.spec, off, zo + ",offload=1")
        metrics = os.path.join(tmp, "m.jsonl")
        run = lambda a, *extra: loom(a, None, args.steps, args.warmup, tmp, hosts=1,
                                     extra=extra)
        p = run(plain)
        lp, peak_plain = losses(metrics), peak(metrics)
        c = run(off)
        lc, peak_off = losses(metrics), peak(metrics)
        resident, layer, total = footprint(off)
        bound = resident + 2 * layer
        compute = c["median"]
        rows = []
        for ratio in (0.5, 1.0, 1.5, 2.0):
            gbps = total / (ratio * compute) / 1e9
            r = run(off, "--offload-bandwidth", f"{gbps:.6f}")
            same = losses(metrics) == lp
            ideal = max(compute, total / (gbps * 1e9))
            rows.append(f"| {gbps:.3f} GB/s (transfer {ratio:.1f}x compute) | "
                        f"{r['median'] * 1e3:.1f} | {ideal * 1e3:.1f} | "
                        f"{r['median'] / ideal:.3f}x | {'bit-identical' if same else 'DIFFERENT'} |")
    same = "bit-identical" if lc == lp else "DIFFERENT"
    table = "\n".join([
        f"Model `{args.spec}`: parameters {total * mib:.2f} MiB, resident (no "
        f"numbered layer) {resident * mib:.3f} MiB, one layer {layer * mib:.3f} MiB; "
        f"the model is {total / bound:.1f}x resident + two layers.",
        "",
        "| memory | temporaries peak (MiB) | vs resident + two layers |",
        "|---|---|---|",
        f"| offloaded ZO step | {peak_off * mib:.3f} | {peak_off / bound:.3f}x |",
        f"| ZO step, parameters in place | {peak_plain * mib:.3f} (+ {total * mib:.2f} of parameters) | |",
        "",
        "| link | median step (ms) | max(compute, transfer) (ms) | ratio | losses vs in place |",
        "|---|---|---|---|---|",
        f"| none (compute) | {compute * 1e3:.1f} | {compute * 1e3:.1f} | 1.000x | {same} |",
        *rows,
        "",
        f"In place (no offloading) the step takes {p['median'] * 1e3:.1f} ms; "
        f"offloading with no link model {compute / p['median']:.3f}x that."])
    print(table)
    if args.record:
        with results_section("Zeroth-order training with offloaded parameters",
                             host=True) as out:
            cmd = (f"python3 bench/zo_offload.py --spec {args.spec} --steps {args.steps} "
                   f"--warmup {args.warmup}")
            out.write(f"`{cmd} --record`\n\n{table}\n")


if __name__ == "__main__":
    main()
