"""Checks that a per-rank (CO2) checkpoint's model.safetensors is the mean
over ranks of the rank-<r>/model.safetensors files, element by element
(relative 1e-6: the runtime averages in the parameters' dtype).

usage: check_consensus.py CHECKPOINT_DIR"""
import glob
import json
import os
import struct
import sys

FORMATS = {"F32": "f", "F64": "d"}


def read(path):
    data = open(path, "rb").read()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + length])
    header.pop("__metadata__", None)
    body = data[8 + length:]
    out = {}
    for name, info in header.items():
        start, end = info["data_offsets"]
        fmt = FORMATS[info["dtype"]]
        out[name] = struct.unpack(f"<{(end - start) // struct.calcsize(fmt)}{fmt}",
                                  body[start:end])
    return out


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
