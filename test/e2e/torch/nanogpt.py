"""nanoGPT (Karpathy) as Loom's GPT is defined: pre-LayerNorm blocks, tanh GELU,
learned positions, no dropout, lm_head tied to transformer.wte. Parameter names
and layouts are nanoGPT's, so state dicts move between the two unchanged.
Also: a dependency-free safetensors reader/writer (torch 1.13 has none)."""
import json
import math
import struct

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln_1 = nn.LayerNorm(d)
        self.attn = nn.Module()
        self.attn.c_attn = nn.Linear(d, 3 * d)
        self.attn.c_proj = nn.Linear(d, d)
        self.ln_2 = nn.LayerNorm(d)
        self.mlp = nn.Module()
        self.mlp.c_fc = nn.Linear(d, 4 * d)
        self.mlp.c_proj = nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.attn.c_attn(self.ln_1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2)
                   for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        mask = torch.tril(torch.ones(t, t, dtype=torch.bool))
        att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, d)
        x = x + self.attn.c_proj(y)
        h = F.gelu(self.mlp.c_fc(self.ln_2(x)), approximate="tanh")
        return x + self.mlp.c_proj(h)


class GPT(nn.Module):
    def __init__(self, vocab, seq, dim, heads, layers):
        super().__init__()
        self.transformer = nn.Module()
        self.transformer.wte = nn.Embedding(vocab, dim)
        self.transformer.wpe = nn.Embedding(seq, dim)
        self.transformer.h = nn.ModuleList(Block(dim, heads) for _ in range(layers))
        self.transformer.ln_f = nn.LayerNorm(dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)
        self.lm_head.weight = self.transformer.wte.weight  # weight tying

    def forward(self, idx, targets):
        t = idx.shape[1]
        x = self.transformer.wte(idx) + self.transformer.wpe(torch.arange(t))
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


_DTYPES = {"F32": np.float32, "F64": np.float64, "I32": np.int32, "I64": np.int64}


def load_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        a, b = info["data_offsets"]
        arr = np.frombuffer(data[a:b], dtype=_DTYPES[info["dtype"]])
        out[name] = torch.from_numpy(arr.reshape(info["shape"]).copy())
    return out


def save_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        arr = t.detach().contiguous().numpy().astype(np.float32)
        raw = arr.tobytes()
        header[name] = {"dtype": "F32", "shape": list(arr.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))
