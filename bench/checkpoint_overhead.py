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
training loop's. The median of --repeats runs of each.

Usage: python3 bench/checkpoint_overhead.py [--spec gpt:...] [--steps 40]
       [--every 5] [--repeats 3] [--record]
(run from the repository root after building; needs Debian's python3-torch)"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "bin")
TORCH_PY = "/usr/bin/python3"

# The PyTorch peer, run as `python3 -c TORCH_WORKER root fields steps every
# path`: the nanoGPT of the numerical tests; prints the training loop's
# seconds.
TORCH_WORKER = r"""
import json, os, sys, time
import torch
sys.path.insert(0, os.path.join(sys.argv[1], "test", "e2e", "torch"))
from nanogpt import GPT
f = json.loads(sys.argv[2]); steps = int(sys.argv[3]); every = int(sys.argv[4])
path = sys.argv[5]
torch.set_num_threads(1)
torch.manual_seed(0)
model = GPT(f["vocab"], f["seq"], f["dim"], f["heads"], f["layers"])
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
g = torch.Generator().manual_seed(0)
start = time.perf_counter()
for step in range(1, steps + 1):
    x = torch.randint(0, f["vocab"], (f["batch"], f["seq"]), generator=g)
    y = torch.randint(0, f["vocab"], (f["batch"], f["seq"]), generator=g)
    loss = model(x, y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    if every and step % every == 0:
        torch.save({"model": model.state_dict(), "optimizer": opt.state_dict()}, path)
print(time.perf_counter() - start)
"""


def fields(spec):
    kind, _, rest = spec.partition(":")
    assert kind == "gpt", "only gpt:... specs"
    return {k: int(v) for k, v in (kv.split("=") for kv in rest.split(","))}


def loom_seconds(artifact, steps, flags, tmp):
    cmd = [os.path.join(BIN, "loom-run"), artifact, "--steps", str(steps),
           "--log-every", "0"] + flags
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def torch_seconds(f, steps, every, path):
    out = subprocess.run([TORCH_PY, "-c", TORCH_WORKER, ROOT, json.dumps(f), str(steps),
                          str(every), path], check=True, capture_output=True, text=True)
    return float(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spec", default="gpt:vocab=256,seq=64,dim=512,heads=8,layers=8,batch=2")
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--every", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--record", action="store_true")
    args = ap.parse_args()
    f = fields(args.spec)
    saves = args.steps // args.every
    with tempfile.TemporaryDirectory() as tmp:
        artifact = os.path.join(tmp, "a")
        subprocess.run([os.path.join(BIN, "loomc"), f"--model={args.spec}",
                        "--optimizer=adamw:lr=1e-3", "-o", artifact], check=True)
        ck = os.path.join(tmp, "ck")
        runs = {"loom": [], "loom sync": [], "loom async": [],
                "torch": [], "torch save": []}
        # Each repeat runs every configuration once, so drifts of a shared
        # machine touch all of them alike.
        for r in range(args.repeats):
            print(f"repeat {r + 1}/{args.repeats}", file=sys.stderr)
            runs["loom"].append(loom_seconds(artifact, args.steps, [], tmp))
            runs["loom sync"].append(loom_seconds(
                artifact, args.steps, ["--save", ck, "--save-every", str(args.every)], tmp))
            runs["loom async"].append(loom_seconds(
                artifact, args.steps,
                ["--save", ck + "a", "--save-every", str(args.every), "--save-async"], tmp))
            runs["torch"].append(torch_seconds(f, args.steps, 0, os.path.join(tmp, "t.pt")))
            runs["torch save"].append(torch_seconds(f, args.steps, args.every,
                                                    os.path.join(tmp, "t.pt")))
        size = sum(os.path.getsize(os.path.join(ck, n)) for n in os.listdir(ck))
        med = {k: statistics.median(v) for k, v in runs.items()}
    rows = [("Loom, synchronous save", med["loom"], med["loom sync"]),
            ("Loom, --save-async", med["loom"], med["loom async"]),
            ("PyTorch 1.13 eager, torch.save", med["torch"], med["torch save"])]
    peer = (med["torch save"] - med["torch"]) / saves
    lines = ["| run | training without saves (s) | with a save every "
             f"{args.every} steps (s) | added per save (s) | added / training | "
             "added per save / PyTorch's |",
             "|---|---|---|---|---|---|"]
    for name, without, with_ in rows:
        added = (with_ - without) / saves
        lines.append(f"| {name} | {without:.2f} | {with_:.2f} | {added:.3f} | "
                     f"{(with_ - without) / without * 100:.1f}% | {added / peer:.2f} |")
    table = "\n".join(lines)
    print(table)
    if args.record:
        with open(os.path.join(ROOT, "bench", "RESULTS.md"), "a") as out:
            out.write(f"\n### What checkpointing costs the training, {datetime.date.today()}\n\n")
            out.write(f"`{args.spec}`, AdamW, one thread, one rank, {args.steps} steps, "
                      f"{saves} saves of {size / 2**20:.0f} MiB (model and optimizer state); "
                      f"median of {args.repeats} runs each.\n\n")
            cmd = "python3 bench/checkpoint_overhead.py" + (
                "" if args.spec == ap.get_default("spec") else f" --spec {args.spec}") + (
                "" if args.steps == 40 else f" --steps {args.steps}") + (
                "" if args.every == 5 else f" --every {args.every}") + (
                "" if args.repeats == 3 else f" --repeats {args.repeats}") + " --record"
            out.write(f"Command: `{cmd}`\n\n")
            out.write(table + "\n")


if __name__ == "__main__":
    sys.exit(main())
