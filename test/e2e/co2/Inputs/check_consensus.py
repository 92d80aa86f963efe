"""Checks that a per-rank (CO2) checkpoint's model.safetensors is the mean
over ranks of the rank-<r>/model.safetensors files, element by element
(relative 1e-6: the runtime averages in the parameters' dtype).

usage: check_consensus.py CHECKPOINT_DIR"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Inputs"))
from safetensors_file import read as read_tensors  # noqa: E402


def read(path):
    return {name: values for name, (_, _, values) in read_tensors(path).items()}


ckpt = sys.argv[1]
ranks = json.load(open(os.path.join(ckpt, "trainer.json")))["ranks"]
locals_ = [read(os.path.join(ckpt, f"rank-{r}", "model.safetensors")) for r in range(ranks)]
consensus = read(os.path.join(ckpt, "model.safetensors"))
if sorted(consensus) != sorted(locals_[0]):
    sys.exit("consensus has other tensors than the ranks' models")
for name, values in consensus.items():
    for i, v in enumerate(values):
        mean = sum(m[name][i] for m in locals_) / ranks
        if abs(v - mean) > 1e-6 * max(abs(mean), 1e-30) + 1e-12:
            sys.exit(f"{name}[{i}]: consensus {v!r}, mean of ranks {mean!r}")
print(f"consensus is the mean of {ranks} ranks")
