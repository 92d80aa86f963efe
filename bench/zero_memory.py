"""Memory per rank under ZeRO: the same GPT (25 M parameters by default) on
N = 2 and 4 local ranks, plain data parallelism (DDP) against ZeRO stages
1, 2 and 3, a few AdamW steps each, all in this run. For each: what rank 0
reports in its metrics summary (loom-run --metrics) -- the bytes of
parameters, gradients and optimizer state it keeps, the peak of the
step's temporaries and the process's peak resident memory -- and each
sharded quantity against total / N (the ideal; the padding of the last
slices is what exceeds it).

Also the check that a model whose DDP training does not fit a per-rank
memory limit trains with ZeRO-3: with --limit-mib M every rank runs under
`ulimit -d` of M MiB (RLIMIT_DATA: the heap and private mappings, where
the tensors live; MPI's private mappings count too, so M is above what the
tensors alone need).

Prints a Markdown table; --record appends it and the command to
bench/RESULTS.md.

Usage: python3 bench/zero_memory.py [--spec gpt:...] [--ranks 2,4]
       [--steps 3] [--limit-mib M] [--record]
(run from the repository root after building; ranks share this machine)"""
import argparse
import json
import os
import subprocess
import tempfile

from clusterlib import BIN, results_section, sh

MIB = 2.0 ** 20
STAGES = [("ddp", []), ("zero1", ["--zero=1"]), ("zero2", ["--zero=2"]),
          ("zero3", ["--zero=3"])]


def summary(metrics):
    for line in open(metrics):
        record = json.loads(line)
        if "summary" in record:
            return record["summary"]
    raise RuntimeError(f"{metrics}: no summary record")


def run(artifact, ranks, steps, tmp, limit_mib=None):
    """Rank 0's metrics summary, or None when the run failed (with the
    limit: ran out of memory)."""
    metrics = os.path.join(tmp, "m.jsonl")
    if os.path.exists(metrics):
        os.remove(metrics)
    cmd = [os.path.join(BIN, "loom-run"), artifact, "--ranks", str(ranks),
           "--steps", str(steps), "--seed", "1", "--log-every", "0",
           "--metrics", metrics]
    if limit_mib:
        cmd = ["bash", "-c", f"ulimit -d {int(limit_mib * 1024)} && exec \"$@\"",
               "zero_memory", *cmd]
    done = subprocess.run(cmd, text=True, capture_output=True)
    if done.returncode != 0:
        if limit_mib:
            return None
        raise RuntimeError(done.stderr[-2000:])
    return summary(metrics)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spec", default="gpt:vocab=256,seq=64,dim=512,heads=8,layers=8,batch=2")
    ap.add_argument("--ranks", default="2,4")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--limit-mib", type=float, default=0)
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()
    rows, limit_rows = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(r) for r in args.ranks.split(",")):
            base = None
            for name, flags in STAGES:
                out = os.path.join(tmp, f"{name}-{n}")
                sh([os.path.join(BIN, "loomc"), f"--model={args.spec}", f"--dp={n}",
                    *flags, "-o", out])
                s = run(out, n, args.steps, tmp)
                base = base or s
                rows.append((n, name, s, base))
                print(n, name, {k: s.get(k) for k in ("param_bytes", "grad_bytes",
                      "optimizer_state_bytes", "peak_temp_bytes", "peak_rss_bytes")},
                      flush=True)
                # At the largest rank count only: under RLIMIT_DATA, OpenBLAS
                # spins forever when its buffer allocation fails.
                if args.limit_mib and name in ("ddp", "zero3") and n == max(
                        int(r) for r in args.ranks.split(",")):
                    fits = run(out, n, args.steps, tmp, args.limit_mib) is not None
                    limit_rows.append((n, name, fits))
    header = ("| ranks | run | params (MiB) | grads (MiB) | optimizer state (MiB) |"
              " / total/N (params, grads, state) | temporaries peak (MiB) |"
              " peak RSS (MiB) | RSS / DDP's |")
    lines = [header, "|" + "---|" * (header.count("|") - 1)]
    for n, name, s, base in rows:
        ratio = lambda key: s[key] / (base[key] / n)
        lines.append(
            f"| {n} | {name} | {s['param_bytes'] / MIB:.1f} | {s['grad_bytes'] / MIB:.1f} |"
            f" {s['optimizer_state_bytes'] / MIB:.1f} |"
            f" {ratio('param_bytes'):.3f}, {ratio('grad_bytes'):.3f},"
            f" {ratio('optimizer_state_bytes'):.3f} |"
            f" {s['peak_temp_bytes'] / MIB:.1f} | {s['peak_rss_bytes'] / MIB:.1f} |"
            f" {s['peak_rss_bytes'] / base['peak_rss_bytes']:.2f} |")
    table = "\n".join(lines)
    if limit_rows:
        table += "\n\nUnder `ulimit -d` of %.0f MiB per rank: " % args.limit_mib + ", ".join(
            f"{name} on {n} ranks {'trains' if fits else 'fails'}"
            for n, name, fits in limit_rows) + "."
    print(table)
    if args.record:
        with results_section("Memory per rank under ZeRO") as out:
            cmd = f"python3 bench/zero_memory.py --spec {args.spec} --ranks {args.ranks} --steps {args.steps}"
            if args.limit_mib:
                cmd += f" --limit-mib {args.limit_mib:g}"
            out.write(f"`{cmd} --record`\n\n{table}\n")


if __name__ == "__main__":
    main()
