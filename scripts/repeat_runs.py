"""What scripts/kill-stress.py and scripts/save-torture.py share: their
common options, a work directory, and the artifact they train."""
import argparse
import os
import random
import subprocess
import tempfile

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def options(runs, **extra):
    """--runs (default `runs`), --seed, --loom-run, --loomc, and one more
    integer option per keyword (name=default), parsed."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=runs)
    for name, default in extra.items():
        ap.add_argument("--" + name, type=int, default=default)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--loom-run", default=os.path.join(root, "build/bin/loom-run"))
    ap.add_argument("--loomc", default=os.path.join(root, "build/bin/loomc"))
    return ap.parse_args()


def setup(args, name, model, *loomc_flags):
    """(random generator, work directory, artifact of `model`)."""
    work = tempfile.mkdtemp(prefix=f"loom-{name}-")
    artifact = os.path.join(work, "mlp")
    subprocess.run([args.loomc, f"--model={model}", *loomc_flags, "-o", artifact],
                   check=True, stdout=subprocess.DEVNULL)
    return random.Random(args.seed), work, artifact
