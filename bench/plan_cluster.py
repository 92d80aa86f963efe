"""loomc --plan against measurement on the emulated 2-host cluster
(bench/cluster.sh --hosts 2 --ranks-per-node 2: 4 ranks, two per host on
the host's loopback, the hosts joined by a tbf-shaped link). For each model:
  1. calibrate the cost model where the job runs: `loom-run --calibrate`
     on 2 emulated hosts (the link between hosts), on 2 local ranks (the
     loopback inside a host) and on 4 local ranks (the compute rate of a
     rank while all four compute on this machine's cores);
  2. `loomc --plan` with that --cluster: every layout's predicted step;
  3. compile every layout, run each (20 timed steps, synthetic data) in
     each of --rounds rounds, the rounds one after the other over all
     layouts (so that a slow minute of this shared machine hits one round
     of many layouts, not all rounds of one), and take the median over the
     rounds of each run's median step time.
Reports per layout predicted and measured time, Spearman's rank correlation
over all layouts of all models, and how far the planner's pick is from the
fastest measured layout. --record appends the table and the command to
bench/RESULTS.md.

Usage (root, after building, on an otherwise idle machine):
  /usr/bin/python3 bench/plan_cluster.py [--rate 1gbit] [--rounds 3] [--record]"""
import argparse
import os
import re
import statistics
import tempfile

from clusterlib import BIN, CLUSTER, calibrate, results_section, sh, spec_fields
from clusterlib import step_rows

MODELS = ["gpt:vocab=256,seq=64,dim=128,heads=4,layers=2,batch=8",
          "gpt:vocab=256,seq=128,dim=256,heads=4,layers=2,batch=8"]


def layout_flags(name, spec):
    """The loomc flags of a layout row's name ("dp=2 x tp=2 zero=1
    overlap", "dp=1 x pp=2 x tp=2 m=8"), the spec's global batch divided
    over dp."""
    dp = int(re.search(r"dp=(\d+)", name).group(1))
    tp = re.search(r"tp=(\d+)", name)
    pp = re.search(r"pp=(\d+)", name)
    micro = re.search(r" m=(\d+)", name)
    zero = re.search(r"zero=(\d+)", name)
    f = spec_fields(spec)
    f["batch"] = str(int(f["batch"]) // dp)
    model = "gpt:" + ",".join(f"{k}={v}" for k, v in f.items())
    flags = [f"--model={model}", f"--dp={dp}"]
    if tp:
        flags.append(f"--tp={tp.group(1)}")
    if pp:
        flags += [f"--pp={pp.group(1)}", f"--micro-batches={micro.group(1)}"]
    if zero:
        flags.append(f"--zero={zero.group(1)}")
    if "overlap" in name:
        flags.append("--overlap")
    return flags


def plan(spec, cluster):
    out = sh([os.path.join(BIN, "loomc"), f"--model={spec}", "--plan",
              f"--cluster={cluster}"]).stdout
    rows = {}
    for line in out.splitlines():
        m = re.match(r"(dp=\S+(?: x pp=\d+)?(?: x tp=\d+)?(?: m=\d+)?"
                     r"(?: zero=\d)?(?: overlap)?)\s+([0-9.]+)", line)
        if m:
            rows[m.group(1)] = float(m.group(2)) / 1e3
    winner = re.search(r"^winner: (.+?):", out, re.M).group(1)
    return rows, winner


def measure(artifact, rate, steps, warmup, tmp, overlap):
    metrics = os.path.join(tmp, "m.jsonl")
    run = [os.path.join(BIN, "loom-run"), artifact, "--steps", str(warmup + steps),
           "--seed", "1", "--log-every", "0", "--metrics", metrics]
    if overlap:
        run += ["--async-collectives", "on"]
    sh([CLUSTER, "--hosts", "2", "--ranks-per-node", "2", "--rate", rate, "--", *run])
    return statistics.median(r["step_time_s"] for r in step_rows(metrics)[warmup:])


def spearman(xs, ys):
    def ranks(v):
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
                j += 1
            for k in range(i, j + 1):
                r[order[k]] = (i + j) / 2
            i = j + 1
        return r
    rx, ry = ranks(xs), ranks(ys)
    mx, my = statistics.mean(rx), statistics.mean(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    return cov / (sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry)) ** 0.5


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rate", default="1gbit")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        # The link between two hosts, the loopback inside one, and the
        # compute rate of a rank while all four ranks compute.
        inter = calibrate(args.rate, os.path.join(tmp, "inter.json"), hosts=2)
        intra = calibrate(None, os.path.join(tmp, "intra.json"), hosts=2)
        busy = calibrate(None, os.path.join(tmp, "busy.json"), hosts=4)
        cluster = (f"nodes=2,ranks-per-node=2,gflops={busy['gemm_gflops']:.3f},"
                   f"inter-bw={inter['link_gbps']:.4f},inter-lat={inter['link_latency_us']:.1f},"
                   f"intra-bw={intra['link_gbps']:.4f},intra-lat={intra['link_latency_us']:.1f},"
                   f"comm-cpu={busy.get('comm_cpu_fraction', 0.2):.3f}")
        print("cluster:", cluster, flush=True)
        plans, artifacts = {}, {}
        for spec in MODELS:
            plans[spec] = plan(spec, cluster)
            for name in plans[spec][0]:
                out = os.path.join(tmp, f"a{len(artifacts)}")
                sh([os.path.join(BIN, "loomc"), *layout_flags(name, spec), "-o", out])
                artifacts[(spec, name)] = out
        times = {key: [] for key in artifacts}
        for round_ in range(args.rounds):
            for (spec, name), out in artifacts.items():
                times[(spec, name)].append(measure(out, args.rate, args.steps,
                                                   args.warmup, tmp, "overlap" in name))
                print(f"round {round_ + 1} {spec} {name}: predicted "
                      f"{plans[spec][0][name] * 1e3:.1f} ms, measured "
                      f"{times[(spec, name)][-1] * 1e3:.1f} ms", flush=True)
        for spec in MODELS:
            predicted, winner = plans[spec]
            measured = {name: statistics.median(times[(spec, name)]) for name in predicted}
            best = min(measured, key=measured.get)
            results.append((spec, predicted, measured, winner, best))
    xs = [p[n] for _, p, m, _, _ in results for n in p]
    ys = [m[n] for _, p, m, _, _ in results for n in p]
    rho = spearman(xs, ys)
    lines = [f"cluster: `{cluster}` (calibrated with loom-run --calibrate), "
             f"{args.rate} between the hosts; measured: the median over "
             f"{args.rounds} rounds of each run's median step", "",
             "| model | layout | predicted ms | measured ms |", "|---|---|---|---|"]
    for spec, p, m, winner, best in results:
        for n in sorted(p, key=p.get):
            mark = " (plan)" if n == winner else ""
            mark += " (fastest)" if n == best else ""
            lines.append(f"| {spec} | {n}{mark} | {p[n] * 1e3:.1f} | {m[n] * 1e3:.1f} |")
    lines.append("")
    lines.append(f"Spearman rho over {len(xs)} layouts: {rho:.3f}")
    for spec, p, m, winner, best in results:
        lines.append(f"{spec}: the plan's pick {winner} measured {m[winner] * 1e3:.1f} ms, "
                     f"{m[winner] / m[best]:.3f}x the fastest ({best}, {m[best] * 1e3:.1f} ms)")
    print("\n".join(lines))
    if args.record:
        with results_section("Layout planner against measurement on the emulated cluster") as f:
            f.write("Command: `/usr/bin/python3 bench/plan_cluster.py"
                    f" --rate {args.rate} --rounds {args.rounds} --record`\n\n"
                    + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
