"""CO2 with a compressed outer round (loomc --co2 --compress=lgreco) against
CO2 alone, on the GPT and corpus of bench/co2_convergence.py. For each link
rate (2 emulated hosts, bench/cluster.sh):
  1. loom-run --calibrate on that link; both artifacts are compiled with
     --co2=local-steps=auto and that calibration, so loomc chooses each
     one's local steps τ from what its outer round sends;
  2. each runs on the emulated link for --rounds rounds (after one, and
     after the compression's fp32 warm-up rounds): tokens/s and the share
     of its communication hidden;
  3. each trains --steps steps on 2 local ranks for every seed of --seeds
     (the numerics do not depend on the link): the training loss (mean over
     ranks of the rounds of the last 100 steps) at equal samples, and the
     bytes one rank sends per outer round (CO2 alone: the ring all-reduce
     of every parameter; compressed: the plans loom-run writes to the
     metrics, weighted by the rounds each held, plus the plain all-reduce of
     what the compression does not list: vectors and the loss slot).

Usage (root, after building, on an otherwise idle machine):
  /usr/bin/python3 bench/co2_compress.py [--rates 10mbit,30mbit] [--steps 1200]
      [--seeds 1,2,3] [--compress lgreco:rank=4,objective=bytes] [--record]"""
import argparse
import json
import os
import tempfile

from clusterlib import BIN, calibrate, loom, loomc, results_section, sh, spec_fields
from co2_convergence import SPEC, docstrings, losses, tail_mean


def param_bytes(manifest):
    """The parameters' fp32 bytes (the manifest's params)."""
    total = 0
    for p in manifest["params"]:
        n = 1
        for d in p["shape"]:
            n *= d
        total += 4 * n
    return total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rates", default="10mbit,30mbit")
    ap.add_argument("--steps", type=int, default=1200)
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--rounds", type=int, default=4, help="timed outer rounds")
    ap.add_argument("--compress", default="lgreco:rank=4,objective=bytes")
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()
    f = spec_fields(SPEC)
    tokens = 2 * int(f["batch"]) * int(f["seq"])
    seeds = [int(s) for s in args.seeds.split(",")]
    opt = ["--optimizer=adamw:lr=3e-3,beta1=0.9,beta2=0.95,wd=0.1",
           "--warmup-steps=20", f"--decay-steps={args.steps}", "--min-lr=3e-4"]
    lines = [f"| {SPEC}, 2 hosts | link | τ (auto) | bytes/round/rank | vs CO2 alone "
             f"| tokens/s on the link | hidden | training loss, last 100 steps "
             f"({args.steps} steps, seeds {args.seeds}) | vs CO2 alone |",
             "|---|---|---|---|---|---|---|---|---|"]
    reasons = []
    with tempfile.TemporaryDirectory() as tmp:
        text = docstrings()
        corpus = os.path.join(tmp, "train.txt")
        open(corpus, "wb").write(text[:len(text) * 9 // 10])
        for rate in args.rates.split(","):
            calib = os.path.join(tmp, "calib.json")
            calibrate(rate, calib)
            rows = []
            for name, extra in (("CO2 alone", []),
                                (f"CO2 + --compress={args.compress}",
                                 [f"--compress={args.compress}"])):
                art = os.path.join(tmp, "a")
                m = loomc(SPEC, art, "--dp=2", "--co2=local-steps=auto",
                          f"--calibration={calib}", *opt, *extra)
                tau = m["co2"]["local_steps"]
                reasons.append(f"- {rate}, {name}: {m['co2'].get('local_steps_reason', '')}")
                # Timed after the fp32 warm-up rounds and the round whose
                # collective overlaps the first compressed one.
                warm = (m.get("compression", {}).get("warmup_steps", 0) + 1) * tau
                timed = loom(art, rate, args.rounds * tau, warm, tmp)
                train, sent = [], []
                for seed in seeds:
                    metrics = os.path.join(tmp, "m.jsonl")
                    sh([os.path.join(BIN, "loom-run"), art, "--ranks", "2", "--steps",
                        str(args.steps), "--data", "text:" + corpus, "--seed", str(seed),
                        "--log-every", "0", "--metrics", metrics])
                    train.append(tail_mean(losses(metrics, tau), args.steps))
                    sent.append(outer_bytes(m, metrics, param_bytes(m), args.steps // tau))
                    print(rate, name, "τ", tau, "seed", seed, round(train[-1], 4),
                          round(sent[-1]), flush=True)
                rows.append((name, tau, sum(sent) / len(sent), tokens / timed["mean"],
                             timed["hidden"], sum(train) / len(train)))
            base = rows[0]
            for name, tau, sent, tps, hidden, loss in rows:
                lines.append(
                    f"| {name} | {rate} | {tau} | {sent / 1024:.1f} KiB | "
                    f"{base[2] / sent:.2f}x fewer | {tps / 1e3:.1f}k | {hidden:.0f}% | "
                    f"{loss:.4f} | {100 * (loss - base[5]) / base[5]:+.2f}% |")
    table = "\n".join(lines)
    print(table)
    print("\n".join(reasons))
    if args.record:
        with results_section("CO2 with a compressed outer round") as out:
            out.write(f"`/usr/bin/python3 bench/co2_compress.py --rates {args.rates} "
                      f"--steps {args.steps} --seeds {args.seeds} --compress {args.compress}`"
                      f"\n\n{table}\n\nloomc's choices of τ:\n\n" + "\n".join(reasons) + "\n")


def outer_bytes(manifest, metrics, params, rounds, ranks=2):
    """Bytes one rank sends per outer round: CO2 alone, the ring all-reduce
    of every parameter and the loss slot; compressed, the plans after the
    warm-up for the listed parameters (weighted by the rounds each held;
    the warm-up rounds send fp32 and are not counted) plus the plain
    all-reduce of the rest and the loss slot."""
    ring = lambda b: 2 * b * (ranks - 1) / ranks
    comp = manifest.get("compression")
    if not comp:
        return ring(params + 4)
    listed = sum(4 * s["rows"] * s["cols"] for s in comp["slots"])
    plans = [r["compression"] for r in map(json.loads, open(metrics)) if "compression" in r]
    warm = comp["warmup_steps"]
    sent = 0.0
    for i, p in enumerate(plans):
        # A plan chosen after round r holds from round r + 1 (uniform: from
        # the warm-up's end).
        start = max(p["step"] + 1 if "budget" in p else warm, warm)
        end = plans[i + 1]["step"] + 1 if i + 1 < len(plans) else rounds
        sent += p["bytes_per_step"] * max(0, end - start)
    return ring(params - listed + 4) + sent / max(1, rounds - warm)


if __name__ == "__main__":
    main()
