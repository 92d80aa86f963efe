#!/usr/bin/env python3
"""Repeats scenario 9 of docs/reliability.md: kill a job at random
points while it writes checkpoints, many times, and count the runs where
what is left would load wrong data without saying so.

usage: scripts/save-torture.py [--runs 200] [--seed 1]
                               [--loom-run build/bin/loom-run]
                               [--loomc build/bin/loomc]

Each run trains an MLP whose checkpoint is about 29 MB (model and AdamW
state) with --save PATH --save-every 1, so that it is writing a checkpoint
most of the time (every other run with --save-async, where the writes go
on behind the training), and SIGKILLs it after a random 0.2-2.5 s. Then:

  - `loom-run --load PATH --steps 0` must either load a checkpoint (PATH,
    or PATH.old with a note when the kill fell between the two renames of
    a save) or, if no save had finished, fail with "no checkpoint at";
  - a checkpoint it loads must be the one at the last step the killed job
    said it saved, or the next (a save can finish after its last line was
    printed), and its model and optimizer files must be byte for byte
    those of an uninterrupted run saved at that step;
  - a temporary directory left behind (PATH.tmp) must fail to load unless
    it is complete, and then it too must match the uninterrupted run.

A run that breaks any of these counts as a silent or wrong load. Then,
where a tmpfs can be mounted (root), a full disk: the same job saving into
a 45 MiB tmpfs, room for one checkpoint and a half, synchronously and in
the background, must stop with "No space left on device", and the
checkpoint it saved before must load and match. Prints a line per run, the
phases the kills landed in (what was on disk right after), and exits 1 if
any run failed.
"""
import filecmp
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import repeat_runs

args = repeat_runs.options(200)
rng, work, artifact = repeat_runs.setup(args, "save-torture",
                                        "mlp:in=256,hidden=1024,out=16,layers=4,batch=16")
train = [args.loom_run, artifact, "--data", "synthetic", "--seed", "1",
         "--log-every", "1000000"]
files = ["model.safetensors", "optimizer.safetensors"]
references = {}


def reference(step):
    """An uninterrupted run's checkpoint at `step`."""
    if step not in references:
        path = os.path.join(work, f"ref{step}")
        subprocess.run(train + ["--steps", str(step), "--save", path],
                       check=True, capture_output=True)
        references[step] = path
    return references[step]


def load(path):
    """(step, note, error) of loading `path`."""
    out = subprocess.run(train + ["--steps", "0", "--load", path],
                         capture_output=True, text=True)
    text = out.stdout + out.stderr
    if out.returncode != 0:
        return None, "", text.strip().splitlines()[-1] if text.strip() else "?"
    step = re.search(r"resuming from .* at step (\d+)", text)
    note = "note" if "left by an interrupted save" in text else ""
    return (int(step.group(1)) if step else None), note, ""


def matches(checkpoint, step):
    ref = reference(step)
    return all(filecmp.cmp(os.path.join(checkpoint, f), os.path.join(ref, f),
                           shallow=False) for f in files)


phases = {}
failed = 0
for run in range(1, args.runs + 1):
    dir = os.path.join(work, f"run{run}")
    os.makedirs(dir)
    ck = os.path.join(dir, "ck")
    background = run % 2 == 0
    delay = rng.uniform(0.2, 2.5)
    log = open(os.path.join(dir, "log.txt"), "w+")
    job = subprocess.Popen(train + ["--steps", "1000000", "--save", ck, "--save-every", "1"]
                           + (["--save-async"] if background else []),
                           stdout=log, stderr=subprocess.STDOUT)
    time.sleep(delay)
    job.send_signal(signal.SIGKILL)
    job.wait()
    log.seek(0)
    saved = [int(s) for s in re.findall(r"saved checkpoint .*\(step (\d+)", log.read())]
    last = saved[-1] if saved else 0
    on_disk = tuple(n for n in ("ck", "ck.tmp", "ck.old") if os.path.exists(os.path.join(dir, n)))
    phase = "+".join(on_disk) or "nothing"
    problems = []
    step, note, error = load(ck)
    if step is None:
        if saved or "no checkpoint at" not in error:
            problems.append(f"load failed: {error}")
    else:
        if not last <= step <= last + 1:
            problems.append(f"loaded step {step}, the job last said it saved {last}")
        where = ck if os.path.isdir(ck) else ck + ".old"
        if not matches(where, step):
            problems.append(f"{where} at step {step} differs from the uninterrupted run")
    if os.path.isdir(ck + ".tmp"):
        tmp_step, _, _ = load(ck + ".tmp")
        if tmp_step is not None and not matches(ck + ".tmp", tmp_step):
            problems.append(f"the temporary directory loaded (step {tmp_step}) with wrong data")
        phase += " (tmp loads)" if tmp_step is not None else " (tmp refused)"
    phases[phase] = phases.get(phase, 0) + 1
    ok = not problems
    failed += not ok
    print(f"run {run:3d}: {'async' if background else 'sync '} killed after {delay:.2f} s, "
          f"last saved step {last:3d}, on disk {phase}: "
          f"{'ok' if ok else 'FAILED: ' + '; '.join(problems)}"
          f"{' (loaded PATH.old)' if note else ''}", flush=True)
    if ok:
        shutil.rmtree(dir)
full_disk = []
full_disk_failed = 0
mount = os.path.join(work, "full")
os.makedirs(mount)
if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=45m", "tmpfs", mount],
                  capture_output=True).returncode != 0:
    full_disk.append("skipped: cannot mount a tmpfs (not root?)")
else:
    try:
        for background in (False, True):
            ck = os.path.join(mount, "ck")
            out = subprocess.run(train + ["--steps", "5", "--save", ck, "--save-every", "1"]
                                 + (["--save-async"] if background else []),
                                 capture_output=True, text=True)
            text = out.stdout + out.stderr
            saved = [int(s) for s in re.findall(r"saved checkpoint .*\(step (\d+)", text)]
            step, _, error = load(ck)
            tmp_step = load(ck + ".tmp")[0] if os.path.isdir(ck + ".tmp") else None
            ok = (out.returncode != 0 and "No space left on device" in text and saved
                  and step == saved[-1] and matches(ck, step) and tmp_step is None)
            full_disk_failed += not ok
            full_disk.append(f"{'async' if background else 'sync '}: "
                             f"{'ok' if ok else 'FAILED'} (exit {out.returncode}, saved "
                             f"{saved}, loads step {step}{', ' + error if error else ''})")
            if not ok:
                full_disk.append("    " + text.replace("\n", "\n    "))
            shutil.rmtree(ck, ignore_errors=True)
            shutil.rmtree(ck + ".tmp", ignore_errors=True)
    finally:
        subprocess.run(["umount", mount])
print("\nfull disk (a 45 MiB tmpfs):\n" + "\n".join(full_disk))
print("\n| on disk right after the kill | runs |\n|---|---|")
for phase, count in sorted(phases.items(), key=lambda kv: -kv[1]):
    print(f"| {phase} | {count} |")
print(f"\n{args.runs - failed} of {args.runs} runs without a silent or wrong load "
      f"({len(references)} reference checkpoints)")
if not failed and not full_disk_failed:
    shutil.rmtree(work)
sys.exit(1 if failed or full_disk_failed else 0)
