"""Memory and time of a zeroth-order step (loomc --zo=mezo, docs/zo.md)
against a forward-only step and first-order AdamW training of the same
model and batch, all in this run, one process at a time:

- peak resident memory (`/usr/bin/time`'s maximum RSS) of 20 ZO steps,
  of 20 forward-only evaluations of the same artifact's loss on the same
  batch size (`loom-run --eval`), and of 20 AdamW steps;
- the ZO step's time, and the forward pass's (each from the difference
  between a long and a short run, so that start-up does not count);
- perturbation and update alone: the same model with one token per step
  (seq=1, batch=1), whose forward passes cost next to nothing while the
  perturbations and the update still touch every parameter: its ZO step
  minus its two forward passes.

Prints a Markdown table; --record appends it and the command to
bench/RESULTS.md.

Usage: python3 bench/zo_step.py [--spec gpt:...] [--short 10] [--long 60]
       [--threads 1] [--record]
(run from the repository root after building)"""
import argparse
import os
import subprocess
import tempfile
import time

from clusterlib import BIN, results_section, sh, spec_fields

MIB = 2.0 ** 20


def timed(cmd):
    """(wall seconds, peak RSS bytes) of one command."""
    start = time.perf_counter()
    done = subprocess.run(["/usr/bin/time", "-f", "maxrss %M", *cmd],
                          text=True, capture_output=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(" ".join(cmd) + "\n" + done.stderr[-2000:])
    rss = [l for l in done.stderr.splitlines() if l.startswith("maxrss ")]
    return wall, int(rss[-1].split()[1]) * 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spec", default="gpt:vocab=4096,seq=256,dim=512,heads=8,layers=4,batch=8")
    ap.add_argument("--short", type=int, default=10)
    ap.add_argument("--long", type=int, default=60)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()
    run = os.path.join(BIN, "loom-run")
    with tempfile.TemporaryDirectory() as tmp:
        zo, adamw = os.path.join(tmp, "zo"), os.path.join(tmp, "adamw")
        sh([os.path.join(BIN, "loomc"), f"--model={args.spec}",
            "--zo=mezo:eps=1e-3,lr=1e-5", "-o", zo])
        sh([os.path.join(BIN, "loomc"), f"--model={args.spec}", "-o", adamw])
        common = ["--seed", "1", "--threads", str(args.threads)]

        def train(artifact, steps):
            return timed([run, artifact, "--steps", str(steps), "--log-every", "0",
                          *common])

        tiny = os.path.join(tmp, "tiny")
        fields = spec_fields(args.spec)
        fields.update(seq="1", batch="1")
        sh([os.path.join(BIN, "loomc"),
            "--model=gpt:" + ",".join(f"{k}={v}" for k, v in fields.items()),
            "--zo=mezo:eps=1e-3,lr=1e-5", "-o", tiny])

        def forward_of(artifact):
            return lambda n: timed([run, artifact, "--eval", "--eval-batches", str(n),
                                    *common])

        forward = forward_of(zo)

        results = {}
        for name, fn in [("zo", lambda n: train(zo, n)), ("forward", forward),
                         ("adamw", lambda n: train(adamw, n)),
                         ("zo-tiny", lambda n: train(tiny, n)),
                         ("forward-tiny", forward_of(tiny))]:
            short, _ = fn(args.short)
            long, rss = fn(args.long)
            results[name] = ((long - short) / (args.long - args.short), rss)
            print(name, f"{results[name][0] * 1e3:.1f} ms", f"{rss / MIB:.0f} MiB",
                  flush=True)

    zo_t, zo_rss = results["zo"]
    fwd_t, fwd_rss = results["forward"]
    ad_t, ad_rss = results["adamw"]
    share = (zo_t - 2 * fwd_t) / zo_t
    perturb_t = results["zo-tiny"][0] - 2 * results["forward-tiny"][0]
    table = "\n".join([
        "| step | time (ms) | peak RSS (MiB) | ZO's peak RSS / this |",
        "|---|---|---|---|",
        f"| ZO (two forward passes, perturbations, update) | {zo_t * 1e3:.1f} | {zo_rss / MIB:.0f} | 1.00 |",
        f"| forward only (`--eval`, same batch) | {fwd_t * 1e3:.1f} | {fwd_rss / MIB:.0f} | {zo_rss / fwd_rss:.2f} |",
        f"| AdamW (forward, backward, update) | {ad_t * 1e3:.1f} | {ad_rss / MIB:.0f} | {zo_rss / ad_rss:.2f} |",
        "",
        f"Perturbation and update alone (one token per step: ZO step "
        f"{results['zo-tiny'][0] * 1e3:.1f} ms, forward "
        f"{results['forward-tiny'][0] * 1e3:.1f} ms): {perturb_t * 1e3:.1f} ms, "
        f"{perturb_t / zo_t * 100:.1f} % of the ZO step. The ZO step's time beyond "
        f"two `--eval` forward passes: {share * 100:.1f} %."])
    print(table)
    if args.record:
        with results_section("Zeroth-order step: memory and time", host=True) as out:
            cmd = "python3 bench/zo_step.py " + " ".join(
                f"--{k} {v}" for k, v in [("spec", args.spec), ("short", args.short),
                                         ("long", args.long), ("threads", args.threads)])
            out.write(f"`{cmd} --record`\n\n{table}\n")


if __name__ == "__main__":
    main()
