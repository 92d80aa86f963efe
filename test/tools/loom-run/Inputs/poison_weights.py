"""Writes a copy of a safetensors file with one value of a tensor set to
NaN or infinity: poison_weights.py IN OUT TENSOR VALUE (nan, inf, -inf)."""

import json
import struct
import sys

src, dst, name, value = sys.argv[1:5]
data = open(src, "rb").read()
(length,) = struct.unpack("<Q", data[:8])
header = json.loads(data[8 : 8 + length])
entry = header[name]
offset = 8 + length + entry["data_offsets"][0] + 4 * 3  # its fourth value
assert entry["dtype"] == "F32"
body = bytearray(data)
body[offset : offset + 4] = struct.pack("<f", float(value))
open(dst, "wb").write(bytes(body))
