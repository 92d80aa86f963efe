"""What checkpointing costs the training: the same GPT, batch, AdamW and
steps, trained without saves and with a save every K steps, for Loom
(`--save-every K`: temporary directory, sha256 of each file, fsync, atomic
swap), Loom with `--save-async` (rank 0 copies the state and a thread writes
it while the next steps run) and PyTorch 1.13 eager with the usual
`torch.save({"model": ..., "optimizer": ...})` every K steps (no fsync, no
hash; PyTorch 1.13 has no asynchronous save), all measured in this run. For
each: the training's wall time without and with saves, the time the saves
added per save, and that as a share of the training.

Loom's time is the wall time of `loom-run` (artifact loading and
initialisation included, the same with and without saves); PyTorch's is its
training loop's, and what its saves add is the time spent in `torch.save`
(which blocks the loop), timed directly rather than as the difference of
two runs, which the noise of this shared machine can swamp. The median of
--repeats runs of each.

With --co2: a CO2 job (`--dp=2 --co2=local-steps=4`) on 2 local ranks, whose
ranks each write their own model and AdamW state into a per-rank checkpoint
and half of the outer state all ranks hold alike (anchor, previous anchor,
outer momentum, round buffer: four copies of the params in all), and rank 0
the consensus model, synchronously or with `--save-async` (a writer thread
on every rank); the peer is two PyTorch processes training at once, each
`torch.save`-ing every K steps its own model, AdamW state and two more
copies of the params: the same bytes as Loom's ranks less the consensus
model (the longer of the two loops).

Usage: python3 bench/checkpoint_overhead.py [--spec gpt:...] [--steps 40]
       [--every 5] [--repeats 3] [--co2] [--record]
(run from the repository root after building; needs Debian's python3-torch)"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from clusterlib import results_section

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "bin")
TORCH_PY = "/usr/bin/python3"

# The PyTorch peer, run as `python3 -c TORCH_WORKER root fields steps every
# path outer`: the nanoGPT of the numerical tests; prints the training
# loop's seconds and the seconds of it spent in torch.save.
TORCH_WORKER = r"""
import json, os, sys, time
import torch
sys.path.insert(0, os.path.join(sys.argv[1], "test", "e2e", "torch"))
from nanogpt import GPT, random_step
f = json.loads(sys.argv[2]); steps = int(sys.argv[3]); every = int(sys.argv[4])
path = sys.argv[5]; outer = int(sys.argv[6])
torch.set_num_threads(1)
torch.manual_seed(0)
model = GPT(f["vocab"], f["seq"], f["dim"], f["heads"], f["layers"])
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
# CO2's state beyond the model and AdamW's (anchor, previous anchor, outer
# momentum, the round's buffer: `outer` copies of the params), so that both
# sides save the same bytes.
extra = {f"{n}.{k}": p.detach().clone() for n, p in model.named_parameters()
         for k in range(outer)}
g = torch.Generator().manual_seed(0)
start = time.perf_counter()
saving = 0.0
for step in range(1, steps + 1):
    random_step(model, opt, f, g)
    if every and step % every == 0:
        t = time.perf_counter()
        torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(),
                    "outer": extra}, path)
        saving += time.perf_counter() - t
print(time.perf_counter() - start, saving)
"""


def fields(spec):
    kind, _, rest = spec.partition(":")
    assert kind == "gpt", "only gpt:... specs"
    return {k: int(v) for k, v in (kv.split("=") for kv in rest.split(","))}


def loom_seconds(artifact, steps, flags, ranks):
    cmd = [os.path.join(BIN, "loom-run"), artifact, "--steps", str(steps),
           "--log-every", "0"] + flags + (["--ranks", str(ranks)] if ranks > 1 else [])
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def torch_seconds(f, steps, every, path, ranks, outer):
    """The longest training loop of `ranks` PyTorch processes run at once,
    each saving to a file of its own with `outer` copies of the params, and
    the longest time one of them spent in torch.save."""
    procs = [subprocess.Popen([TORCH_PY, "-c", TORCH_WORKER, ROOT, json.dumps(f), str(steps),
                               str(every), f"{path}.{r}", str(outer)],
                              stdout=subprocess.PIPE, text=True)
             for r in range(ranks)]
    loops, saving = [], []
    for p in procs:
        out, _ = p.communicate()
        if p.returncode:
            sys.exit(f"the PyTorch peer failed (exit status {p.returncode})")
        loop, save = out.strip().splitlines()[-1].split()
        loops.append(float(loop))
        saving.append(float(save))
    return max(loops), max(saving)


def checkpoint_bytes(path):
    return sum(os.path.getsize(os.path.join(d, n)) for d, _, names in os.walk(path)
               for n in names)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spec", default="gpt:vocab=256,seq=64,dim=512,heads=8,layers=8,batch=2")
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--every", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--co2", action="store_true",
                    help="a 2-rank CO2 job and its per-rank checkpoints")
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()
    f = fields(args.spec)
    saves = args.steps // args.every
    ranks = 2 if args.co2 else 1
    parallel = ["--dp=2", "--co2=local-steps=4"] if args.co2 else []
    outer = 2 if args.co2 else 0  # each rank's half of the four
    with tempfile.TemporaryDirectory() as tmp:
        artifact = os.path.join(tmp, "a")
        subprocess.run([os.path.join(BIN, "loomc"), f"--model={args.spec}",
                        "--optimizer=adamw:lr=1e-3", "-o", artifact] + parallel, check=True)
        ck = os.path.join(tmp, "ck")
        runs = {"loom": [], "loom sync": [], "loom async": [],
                "torch": [], "torch save": [], "torch.save": []}
        # Each repeat runs every configuration once, so drifts of a shared
        # machine touch all of them alike.
        for r in range(args.repeats):
            print(f"repeat {r + 1}/{args.repeats}", file=sys.stderr)
            runs["loom"].append(loom_seconds(artifact, args.steps, [], ranks))
            runs["loom sync"].append(loom_seconds(
                artifact, args.steps, ["--save", ck, "--save-every", str(args.every)], ranks))
            runs["loom async"].append(loom_seconds(
                artifact, args.steps,
                ["--save", ck + "a", "--save-every", str(args.every), "--save-async"], ranks))
            runs["torch"].append(torch_seconds(f, args.steps, 0, os.path.join(tmp, "t.pt"),
                                               ranks, outer)[0])
            loop, saving = torch_seconds(f, args.steps, args.every, os.path.join(tmp, "t.pt"),
                                         ranks, outer)
            runs["torch save"].append(loop)
            runs["torch.save"].append(saving)
        size = checkpoint_bytes(ck)
        med = {k: statistics.median(v) for k, v in runs.items()}
    rows = [("Loom, synchronous save", med["loom"], med["loom sync"]),
            ("Loom, --save-async", med["loom"], med["loom async"]),
            ("PyTorch 1.13 eager, torch.save" + (" on each of 2 processes" if args.co2 else ""),
             med["torch"], med["torch save"])]
    if args.co2:
        rows = [(name.replace("Loom", "Loom CO2, 2 ranks"), a, b) if name.startswith("Loom")
                else (name, a, b) for name, a, b in rows]
    # torch.save blocks the loop, so the time in it is what it adds: timed
    # directly, it is not lost in the noise of two runs' difference.
    peer = med["torch.save"] / saves
    lines = ["| run | training without saves (s) | with a save every "
             f"{args.every} steps (s) | added per save (s) | added / training | "
             "added per save / PyTorch's |",
             "|---|---|---|---|---|---|"]
    for name, without, with_ in rows:
        added = (with_ - without) / saves if name.startswith("Loom") else peer
        lines.append(f"| {name} | {without:.2f} | {with_:.2f} | {added:.3f} | "
                     f"{added * saves / without * 100:.1f}% | {added / peer:.2f} |")
    table = "\n".join(lines)
    print(table)
    if args.record:
        title = "CO2's per-rank checkpoints" if args.co2 else "checkpointing"
        with results_section(f"What {title} costs the training") as out:
            job = ("2 local ranks of `--dp=2 --co2=local-steps=4`, one thread each"
                   if args.co2 else "one thread, one rank")
            what = ("every rank's model and optimizer state, once the outer state "
                    "every rank holds alike, and the consensus model"
                    if args.co2 else "model and optimizer state")
            out.write(f"`{args.spec}`, AdamW, {job}, {args.steps} steps, "
                      f"{saves} saves of {size / 2**20:.0f} MiB ({what}); "
                      f"median of {args.repeats} runs each.\n\n")
            cmd = "python3 bench/checkpoint_overhead.py" + (
                "" if args.spec == ap.get_default("spec") else f" --spec {args.spec}") + (
                "" if args.steps == 40 else f" --steps {args.steps}") + (
                "" if args.every == 5 else f" --every {args.every}") + (
                "" if args.repeats == 3 else f" --repeats {args.repeats}") + (
                " --co2" if args.co2 else "") + " --record"
            out.write(f"Command: `{cmd}`\n\n")
            out.write(table + "\n")


if __name__ == "__main__":
    sys.exit(main())
