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


def _bf16(x):
    """x rounded to bf16 (nearest even) and back."""
    return x.to(torch.bfloat16).to(x.dtype)


class Bf16Matmul(torch.autograd.Function):
    """a @ b as Loom computes every GEMM with --precision=bf16, forward and
    backward: operands rounded to bf16, products and sums in float32."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return _bf16(a) @ _bf16(b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        g = _bf16(g)
        return g @ _bf16(b).transpose(-2, -1), _bf16(a).transpose(-2, -1) @ g


class Bf16EmbeddingGrad(torch.autograd.Function):
    """table[ids], whose gradient Loom computes as the GEMM
    onehot(ids)^T dY, so --precision=bf16 rounds dY to bf16 there too."""

    @staticmethod
    def forward(ctx, table, ids):
        ctx.save_for_backward(ids)
        ctx.rows = table.shape[0]
        return table[ids]

    @staticmethod
    def backward(ctx, g):
        (ids,) = ctx.saved_tensors
        hot = F.one_hot(ids.reshape(-1), ctx.rows).to(g.dtype)
        return hot.t() @ _bf16(g.reshape(-1, g.shape[-1])), None


def embedding(layer, ids, bf16):
    return Bf16EmbeddingGrad.apply(layer.weight, ids) if bf16 else layer(ids)


def matmul(a, b, bf16):
    return Bf16Matmul.apply(a, b) if bf16 else a @ b


def linear(layer, x, bf16):
    if not bf16:
        return layer(x)
    y = Bf16Matmul.apply(x.reshape(-1, x.shape[-1]), layer.weight.t())
    y = y.view(*x.shape[:-1], -1)
    return y if layer.bias is None else y + layer.bias


class Block(nn.Module):
    def __init__(self, d, heads, bf16=False, sdpa=False):
        super().__init__()
        self.heads = heads
        self.bf16 = bf16
        # PyTorch's fused attention (flash or memory-efficient kernels), as
        # nanoGPT uses when it can: same math, for the GPU benchmark's peer.
        self.sdpa = sdpa
        self.ln_1 = nn.LayerNorm(d)
        self.attn = nn.Module()
        self.attn.c_attn = nn.Linear(d, 3 * d)
        self.attn.c_proj = nn.Linear(d, d)
        self.ln_2 = nn.LayerNorm(d)
        self.mlp = nn.Module()
        self.mlp.c_fc = nn.Linear(d, 4 * d)
        self.mlp.c_proj = nn.Linear(4 * d, d)

    def forward(self, x, segments=None):
        """segments: [b, t] document ids; a query sees only earlier keys of
        its own document."""
        b, t, d = x.shape
        lp = self.bf16
        q, k, v = linear(self.attn.c_attn, self.ln_1(x), lp).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2)
                   for z in (q, k, v))
        if self.sdpa:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            att = matmul(q, k.transpose(-2, -1), lp) * (1.0 / math.sqrt(k.size(-1)))
            mask = torch.tril(torch.ones(t, t, dtype=torch.bool, device=x.device))
            if segments is not None:
                mask = mask & (segments[:, None, :, None] == segments[:, None, None, :])
            att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
            y = matmul(att, v, lp)
        y = y.transpose(1, 2).contiguous().view(b, t, d)
        x = x + linear(self.attn.c_proj, y, lp)
        h = F.gelu(linear(self.mlp.c_fc, self.ln_2(x), lp), approximate="tanh")
        return x + linear(self.mlp.c_proj, h, lp)


class GPT(nn.Module):
    def __init__(self, vocab, seq, dim, heads, layers, bf16=False, sdpa=False):
        """bf16: every GEMM as Loom's --precision=bf16 runs it. sdpa: PyTorch's
        fused attention, whose GEMMs bf16 cannot round, so not both."""
        if bf16 and sdpa:
            raise ValueError("GPT: bf16 rounding and sdpa attention do not combine")
        super().__init__()
        self.bf16 = bf16
        self.transformer = nn.Module()
        self.transformer.wte = nn.Embedding(vocab, dim)
        self.transformer.wpe = nn.Embedding(seq, dim)
        self.transformer.h = nn.ModuleList(Block(dim, heads, bf16, sdpa)
                                           for _ in range(layers))
        self.transformer.ln_f = nn.LayerNorm(dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)
        self.lm_head.weight = self.transformer.wte.weight  # weight tying

    def forward(self, idx, targets, segments=None, positions=None):
        """segments, positions: [b, t] document ids and positions in them
        (rows packed with documents, Loom's gpt:...,docs=1)."""
        t = idx.shape[1]
        if positions is None:
            positions = torch.arange(t, device=idx.device)
        x = (embedding(self.transformer.wte, idx, self.bf16) +
             self.transformer.wpe(positions))
        for block in self.transformer.h:
            x = block(x, segments)
        logits = linear(self.lm_head, self.transformer.ln_f(x), self.bf16)
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def random_step(model, opt, f, generator):
    """One optimizer step of `model` on a random batch of the spec fields `f`
    (vocab, seq, batch): the benchmarks' PyTorch peers, which measure time
    and memory, not learning."""
    shape = (f["batch"], f["seq"])
    x = torch.randint(0, f["vocab"], shape, generator=generator)
    y = torch.randint(0, f["vocab"], shape, generator=generator)
    loss = model(x, y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss


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
