"""Writes the whole optimizer state of a ZeRO checkpoint (per_rank "zero",
docs/zero.md) as one safetensors file, as plain data parallelism saves it:
each tensor is its ranks' shards one after the other, the padding dropped,
in the whole shape trainer.json records. So the lit tests compare a ZeRO
run's optimizer state with another run's, byte for byte.

usage: zero_state.py CHECKPOINT OUT.safetensors
"""
import json
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Inputs"))
from safetensors_file import read_raw  # noqa: E402

SIZES = {"F32": 4, "F64": 8, "I32": 4, "I64": 8}

checkpoint, out = sys.argv[1], sys.argv[2]
with open(os.path.join(checkpoint, "trainer.json")) as f:
    zero = json.load(f)["zero"]
shards = [read_raw(os.path.join(checkpoint, f"rank-{r}", "optimizer.safetensors"))
          for r in range(zero["ranks"])]
header, body = {}, b""
for name in sorted(shards[0]):
    dtype = shards[0][name][0]
    shape = zero["shapes"][name]
    count = 1
    for size in shape:
        count *= size
    data = b"".join(shard[name][2] for shard in shards)[:count * SIZES[dtype]]
    header[name] = {"dtype": dtype, "shape": shape,
                    "data_offsets": [len(body), len(body) + len(data)]}
    body += data
text = json.dumps(header).encode()
text += b" " * (-len(text) % 8)
with open(out, "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text + body)
