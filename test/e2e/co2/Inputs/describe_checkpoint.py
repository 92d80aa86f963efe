"""Prints what a per-rank (CO2) checkpoint holds where: its format version,
then for every .safetensors file (relative path, sorted) its tensor count
and how many of them are CO2 outer state (names with .co2_) or round state
(names starting with co2.).

usage: describe_checkpoint.py DIR"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Inputs"))
from safetensors_file import read_raw  # noqa: E402

ckpt = sys.argv[1]
print("format", json.load(open(os.path.join(ckpt, "trainer.json")))["format_version"])
for root, _, files in sorted(os.walk(ckpt)):
    for name in sorted(files):
        if not name.endswith(".safetensors"):
            continue
        path = os.path.join(root, name)
        header = read_raw(path)
        outer = sum(".co2_" in t for t in header)
        rounds = sum(t.startswith("co2.") for t in header)
        print(f"{os.path.relpath(path, ckpt)}: {len(header)} tensors, "
              f"{outer} outer, {rounds} round")
