"""Reads safetensors files with plain json/struct (the lit tests' Python has
no safetensors or numpy package): the checkers of test/e2e/*/Inputs import
it from here."""
import json
import struct

FORMATS = {"F32": "f", "F64": "d", "I32": "i", "I64": "q"}


def read_raw(path):
    """{name: (dtype, shape, raw bytes)}, metadata left out."""
    with open(path, "rb") as f:
        data = f.read()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + length])
    header.pop("__metadata__", None)
    body = data[8 + length:]
    return {name: (info["dtype"], info["shape"],
                   body[info["data_offsets"][0]:info["data_offsets"][1]])
            for name, info in header.items()}


def read(path):
    """{name: (dtype, shape, tuple of values)}."""
    tensors = {}
    for name, (dtype, shape, raw) in read_raw(path).items():
        fmt = FORMATS[dtype]
        tensors[name] = (dtype, shape,
                         struct.unpack(f"<{len(raw) // struct.calcsize(fmt)}{fmt}", raw))
    return tensors
