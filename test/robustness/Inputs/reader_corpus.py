#!/usr/bin/env python3
"""Writes the seed corpus of the runtime's reader fuzz targets.

    reader_corpus.py OUT [MANIFEST.json...]

OUT/safetensors: valid .safetensors files (F32, I32, BF16 and other dtypes,
__metadata__, scalars, empty tensors), written here from the format's
definition (an 8-byte little-endian header length, the JSON header padded
with spaces to a multiple of 8, then the tensor bytes) so that the corpus
does not depend on the reader under test.
OUT/manifest: the given manifest.json files (compiled by loomc).
OUT/data: a small text file and a small uint16 token file.
"""

import json
import os
import shutil
import struct
import sys

# struct formats of the dtypes the corpus uses.
FORMATS = {"F32": "f", "F64": "d", "I32": "i", "I64": "q", "U8": "B",
           "BOOL": "?", "F16": "e"}


def bf16(values):
    """BF16 bytes: the high half of each float32."""
    return b"".join(struct.pack("<f", v)[2:] for v in values)


def safetensors(tensors, metadata=None):
    """tensors: (name, dtype, shape, raw bytes) in file order."""
    header = {}
    if metadata is not None:
        header["__metadata__"] = metadata
    offset = 0
    for name, dtype, shape, data in tensors:
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return (struct.pack("<Q", len(text)) + text +
            b"".join(data for _, _, _, data in tensors))


def pack(dtype, values):
    return struct.pack("<%d%s" % (len(values), FORMATS[dtype]), *values)


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def main():
    out = sys.argv[1]
    for sub in ("safetensors", "manifest", "data"):
        os.makedirs(os.path.join(out, sub), exist_ok=True)

    st = os.path.join(out, "safetensors")
    write(os.path.join(st, "mixed.safetensors"), safetensors(
        [("w", "F32", [2, 3], pack("F32", [0.5, -1, 2, 3.25, 0, 1e-3])),
         ("idx", "I32", [4], pack("I32", [0, 1, -1, 2**31 - 1])),
         ("h", "BF16", [3], bf16([1.0, -2.5, 0.125]))],
        {"format": "pt", "step": "7"}))
    write(os.path.join(st, "shapes.safetensors"), safetensors(
        [("scalar", "F32", [], pack("F32", [42.0])),
         ("empty", "I64", [0], b""),
         ("zero_dim", "F32", [3, 0, 2], b""),
         ("d", "F64", [2], pack("F64", [0.1, -0.2])),
         ("bytes", "U8", [5], pack("U8", [0, 1, 127, 128, 255])),
         ("flags", "BOOL", [1, 2], pack("BOOL", [True, False])),
         ("half", "F16", [2], pack("F16", [1.0, -0.5]))]))
    # nanoGPT's names, as a Loom checkpoint's model.safetensors has them.
    write(os.path.join(st, "gpt.safetensors"), safetensors(
        [("transformer.wte.weight", "F32", [4, 2], pack("F32", range(8))),
         ("transformer.h.0.ln_1.weight", "F32", [2], pack("F32", [1, 1])),
         ("lm_head.weight", "F32", [4, 2], pack("F32", range(8)))],
        {"loom.step": "12", "loom.format": "1"}))
    write(os.path.join(st, "empty.safetensors"), safetensors([], {}))

    for i, manifest in enumerate(sys.argv[2:]):
        shutil.copy(manifest, os.path.join(out, "manifest", "%d.json" % i))

    data = os.path.join(out, "data")
    write(os.path.join(data, "text.txt"),
          b"To be, or not to be, that is the question:\n"
          b"Whether 'tis nobler in the mind to suffer\n"
          b"caf\xc3\xa9 \xe2\x82\xac 1e309\t-1\n")
    # Every token valid for the fuzz target's vocab 1000 and 50000 tasks...
    write(os.path.join(data, "tokens.bin"),
          struct.pack("<32H", *[(7 * i * i + 3) % 1000 for i in range(32)]))
    # ... and tokens at the edges of the vocab sizes and of uint16.
    write(os.path.join(data, "edges.bin"), struct.pack(
        "<12H", 0, 1, 255, 256, 999, 1000, 49999, 50000, 50256, 65534, 65535,
        2))

if __name__ == "__main__":
    main()
