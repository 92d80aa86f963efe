"""Compares two per-rank (CO2) checkpoints bit for bit, whatever their
format version: for every rank, the tensors it resumes from (those of its
rank-<r>/{model,optimizer,co2}.safetensors, and from version 2 every rank's
share of the outer state, rank-*/outer.safetensors), by name, dtype, shape
and raw bytes; and the consensus model.safetensors. Prints MATCH, or
MISMATCH and the first difference (exit 1).

usage: compare_checkpoints.py A B"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Inputs"))
from safetensors_file import read_raw as read  # noqa: E402


def rank_tensors(ckpt, rank, ranks):
    tensors = {}
    files = [os.path.join(ckpt, f"rank-{rank}", name) for name in
             ("model.safetensors", "optimizer.safetensors", "co2.safetensors")]
    files += [os.path.join(ckpt, f"rank-{r}", "outer.safetensors") for r in range(ranks)]
    for path in files:
        if not os.path.exists(path):
            continue
        for name, tensor in read(path).items():
            if name in tensors:
                sys.exit(f"MISMATCH: {ckpt}: rank {rank} has tensor {name} twice")
            tensors[name] = tensor
    return tensors


def first_difference(a, b):
    if sorted(a) != sorted(b):
        return f"tensor names differ: {sorted(set(a) ^ set(b))}"
    for name in sorted(a):
        if a[name] != b[name]:
            return f"tensor {name} differs"
    return None


a_dir, b_dir = sys.argv[1], sys.argv[2]
ranks = json.load(open(os.path.join(a_dir, "trainer.json")))["ranks"]
other = json.load(open(os.path.join(b_dir, "trainer.json")))["ranks"]
if ranks != other:
    print(f"MISMATCH: {ranks} ranks vs {other}")
    sys.exit(1)
count = 0
for rank in range(ranks):
    a, b = rank_tensors(a_dir, rank, ranks), rank_tensors(b_dir, rank, ranks)
    problem = first_difference(a, b)
    if problem:
        print(f"MISMATCH: rank {rank}: {problem}")
        sys.exit(1)
    count = len(a)
problem = first_difference(read(os.path.join(a_dir, "model.safetensors")),
                           read(os.path.join(b_dir, "model.safetensors")))
if problem:
    print(f"MISMATCH: consensus model: {problem}")
    sys.exit(1)
print(f"{ranks} ranks, {count} tensors each, and the consensus model")
print("MATCH")
