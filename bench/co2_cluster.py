"""CO2 on the emulated bandwidth-limited cluster (bench/cluster.sh): for each
link rate, the same GPT and per-rank batch on 2 hosts with
  - Loom CO2 at a fixed local-steps TAU            (loomc --co2=local-steps=TAU)
  - Loom CO2 with local-steps=auto                 (from loom-run --calibrate on that link)
  - Loom synchronous and overlapped DDP            (loomc --dp=2 [--overlap])
  - PyTorch 1.13 post-local SGD at the same TAU    (post_localSGD_hook + PeriodicModelAverager)
  - the no-communication ideal: 2 x the throughput of one Loom rank alone,
    and, as this machine's real ceiling, 2 independent one-rank runs at once
    (they share the cores' caches and memory bandwidth)
and reports tokens/s from the mean step time (which counts the outer
steps), CO2's share of both ideals, its speed-up over synchronous DDP, the
share of its communication hidden (from the trace), and its speed over PyTorch. Writes a
Markdown table and bench/co2_cluster.png; --record appends to
bench/RESULTS.md.

Usage (root, after building, on an otherwise idle machine):
  /usr/bin/python3 bench/co2_cluster.py [--rates 1gbit,100mbit,30mbit,10mbit] [--tau 12] [--record]"""
import argparse
import json
import os
import sys
import tempfile

from clusterlib import (ROOT, calibrate, loom, loom_side_by_side, loomc, mbit,
                        results_section, spec_fields, torch)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spec", default="gpt:vocab=256,seq=64,dim=64,heads=4,layers=2,batch=8")
    ap.add_argument("--rates", default="1gbit,100mbit,30mbit,10mbit")
    ap.add_argument("--tau", type=int, default=12)
    ap.add_argument("--rounds", type=int, default=4, help="timed outer rounds")
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()
    f = spec_fields(args.spec)
    tokens = 2 * int(f["batch"]) * int(f["seq"])
    steps, warmup = args.rounds * args.tau, args.tau
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        art = lambda name: os.path.join(tmp, name)
        loomc(args.spec, art("one"))
        loomc(args.spec, art("sync"), "--dp=2")
        loomc(args.spec, art("co2"), "--dp=2", f"--co2=local-steps={args.tau}")
        loomc(args.spec, art("co2s"), "--dp=2", f"--co2=local-steps={args.tau},sharded=1")
        alone = loom(art("one"), None, steps, warmup, tmp, hosts=1)
        ideal = tokens / alone["mean"]  # 2 ranks x one rank's tokens/s
        ceiling = tokens / loom_side_by_side(art("one"), 2, steps, warmup, tmp)
        for rate in args.rates.split(","):
            calib = art("calib.json")
            calibrate(rate, calib)
            loomc(args.spec, art("over"), "--dp=2", "--overlap", "--calibration=" + calib)
            auto = loomc(args.spec, art("auto"), "--dp=2", "--co2=local-steps=auto",
                         "--calibration=" + calib)
            tau_auto = auto["co2"]["local_steps"]
            r = {"rate": rate, "tau_auto": tau_auto, "reason": auto["co2"]["local_steps_reason"]}
            r["co2"] = loom(art("co2"), rate, steps, warmup, tmp, trace=True)
            r["sharded"] = loom(art("co2s"), rate, steps, warmup, tmp, trace=True)
            r["auto"] = loom(art("auto"), rate, max(args.rounds * tau_auto, steps),
                             tau_auto, tmp, trace=True)
            r["sync"] = loom(art("sync"), rate, min(steps, 24), 3, tmp)
            r["over"] = loom(art("over"), rate, min(steps, 24), 3, tmp)
            r["torch"] = torch(args.spec, rate, steps, warmup, local_sgd=args.tau)
            rows.append(r)
            print(rate, json.dumps(r), flush=True)
    tput = lambda run: tokens / run["mean"]
    head = ("| link | sync DDP comm / compute | Loom sync DDP | Loom overlapped DDP | "
            f"PyTorch post-local SGD (τ={args.tau}) | Loom CO2 (τ={args.tau}) | "
            f"CO2 / ideal (/ ceiling) | CO2 / sync DDP | CO2 hidden, trace (runtime) | "
            "CO2 / PyTorch | Loom CO2 (auto τ) | auto / ideal (/ ceiling) | auto hidden, trace | "
            f"Loom CO2 sharded (τ={args.tau}) | sharded / ideal | sharded hidden, trace |")
    lines = [f"No-communication ideal: {ideal:,.0f} tokens/s (2 x one Loom rank alone, "
             f"{alone['mean'] * 1e3:.1f} ms/step); this machine's ceiling, 2 independent "
             f"one-rank runs at once: {ceiling:,.0f} tokens/s ({ceiling / ideal:.2f} of the "
             "ideal). Throughputs in tokens/s. Hidden: the share of the communication "
             "no step waited for, from the run's Chrome trace (the lowest over ranks; "
             "in parentheses the runtime's own accounting).", "", head, "|" + "---|" * 16]
    for r in rows:
        s = r["sync"]
        ratio = s["comm"] / max(s["mean"] - s["comm"], 1e-9)
        lines.append(
            f"| {r['rate']} | {ratio:.2f} | {tput(s):,.0f} | {tput(r['over']):,.0f} | "
            f"{tput(r['torch']):,.0f} | {tput(r['co2']):,.0f} | "
            f"{tput(r['co2']) / ideal:.2f} ({tput(r['co2']) / ceiling:.2f}) | "
            f"{tput(r['co2']) / tput(s):.2f}x | {r['co2']['hidden_trace']:.1f}% "
            f"({r['co2']['hidden']:.0f}%) | "
            f"{tput(r['co2']) / tput(r['torch']):.2f}x | {tput(r['auto']):,.0f} (τ={r['tau_auto']}) | "
            f"{tput(r['auto']) / ideal:.2f} ({tput(r['auto']) / ceiling:.2f}) | "
            f"{r['auto']['hidden_trace']:.1f}% | "
            f"{tput(r['sharded']):,.0f} | {tput(r['sharded']) / ideal:.2f} | "
            f"{r['sharded']['hidden_trace']:.1f}% |")
    table = "\n".join(lines)
    print(table)
    png = os.path.join(ROOT, "bench", "co2_cluster.png")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    xs = [mbit(r["rate"]) for r in rows]
    plt.figure(figsize=(6.5, 4.2))
    for key, name in (("sync", "Loom sync DDP"), ("over", "Loom overlapped DDP"),
                      ("torch", f"PyTorch post-local SGD τ={args.tau}"),
                      ("co2", f"Loom CO2 τ={args.tau}"), ("auto", "Loom CO2 τ=auto"),
                      ("sharded", f"Loom CO2 sharded τ={args.tau}")):
        plt.plot(xs, [tput(r[key]) for r in rows], marker="o", label=name)
    plt.axhline(ideal, color="gray", linestyle="--", label="ideal: 2 x one rank alone")
    plt.axhline(ceiling, color="gray", linestyle=":", label="2 one-rank runs at once")
    plt.xscale("log"); plt.yscale("log"); plt.grid(True, which="both", alpha=0.3)
    plt.xlabel("link rate per host (Mbit/s)"); plt.ylabel("tokens/s (2 hosts)")
    plt.title("CO2 on 2 emulated hosts"); plt.legend(fontsize=8); plt.tight_layout()
    plt.savefig(png)
    if args.record:
        with results_section("CO2 on the emulated cluster") as out:
            out.write(f"`{args.spec}`, 2 hosts (network namespaces, tbf-shaped links); "
                      f"mean step time over {args.rounds} rounds of τ={args.tau} after one "
                      "(DDP: 24 steps after 3); CO2 with its default outer hyperparameters (they "
                      "do not change the step time); "
                      "the auto and overlapped artifacts compiled with `--calibration` from "
                      "`loom-run --calibrate` on the same link.\n\n")
            out.write(f"Command: `/usr/bin/python3 bench/co2_cluster.py --rates {args.rates} "
                      f"--tau {args.tau} --record`\n\n" + table + "\n\n")
            for r in rows:
                out.write(f"- {r['rate']}, auto: {r['reason']}\n")
            out.write("\n![CO2 throughput against bandwidth](co2_cluster.png)\n")


if __name__ == "__main__":
    sys.exit(main())
