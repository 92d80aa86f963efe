"""Checks Loom's GPT against PyTorch 1.13 from the same weights and batch.

  make:    writes random nanoGPT weights (safetensors) and a uint16 token file
           (with --docs DIR also a directory of documents of random lengths,
           for a model compiled with docs=1)
  compare: reads Loom's step-1 metrics and checkpoint, repeats the step in
           PyTorch (float32) and requires the loss and every parameter after
           one AdamW step (or every update of one plain SGD step) to agree
           within --rtol (1e-4). --bf16: PyTorch runs every GEMM on operands
           rounded to bf16, as loomc --precision=bf16.
"""
import argparse
import json
import os
import sys

import numpy as np
import torch

from nanogpt import GPT, load_safetensors, save_safetensors

def spec_of(manifest):
    fields = dict(kv.split("=") for kv in manifest["model"]["spec"].split(":")[1].split(","))
    return {k: int(v) for k, v in fields.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["make", "compare"])
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--weights", required=True)
    ap.add_argument("--tokens", required=True)
    ap.add_argument("--metrics")
    ap.add_argument("--after")
    ap.add_argument("--rtol", type=float, default=1e-4,
                    help="relative tolerance of the loss and parameters")
    ap.add_argument("--docs",
                    help="a directory of documents (docs:DIR): the rows are "
                         "windows of their concatenation, attention stays in "
                         "a document and positions restart at its start")
    ap.add_argument("--flat", action="store_true",
                    help="with --docs, a model compiled with "
                         "--partition-sequences: the step is one sequence "
                         "of every rank's tokens, a document cut only every "
                         "context (default seq) tokens from its start")
    ap.add_argument("--data-seed", type=int, default=0,
                    help="make: the seed of the tokens and documents")
    ap.add_argument("--ranks", type=int, default=1,
                    help="data-parallel ranks: the step reads ranks x batch "
                         "rows")
    ap.add_argument("--bf16", action="store_true",
                    help="the reference runs every GEMM on bf16-rounded "
                         "operands, as loomc --precision=bf16")
    args = ap.parse_args()
    manifest = json.load(open(args.manifest))
    s = spec_of(manifest)
    torch.manual_seed(0)
    # docs=1,context=N: N positions, documents attended whole up to N.
    context = s.get("context", s["seq"])
    model = GPT(s["vocab"], context, s["dim"], s["heads"], s["layers"],
                bf16=args.bf16)

    if args.mode == "make":
        state = {k: v for k, v in model.state_dict().items() if k != "lm_head.weight"}
        # Non-trivial LayerNorm parameters so their gradients are exercised.
        for k, v in state.items():
            if ".ln_" in k:
                v.add_(0.1 * torch.randn_like(v))
        save_safetensors(args.weights, state)
        rng = np.random.default_rng(args.data_seed)
        n = args.ranks * s["batch"] * s["seq"] + 1
        rng.integers(0, s["vocab"], n, dtype=np.uint16).tofile(args.tokens)
        if args.docs:
            # Lengths from 1 to past a row (or the context), so rows hold
            # several documents and some documents span two rows.
            os.makedirs(args.docs, exist_ok=True)
            total, i = 0, 0
            while total < n + s["seq"]:
                # No longer than a step's tokens (loom-run refuses those).
                length = int(rng.integers(1, min(2 * context, n)))
                doc = rng.integers(0, min(s["vocab"], 256), length, dtype=np.uint8)
                doc.tofile(os.path.join(args.docs, f"doc{i:04d}.txt"))
                total, i = total + length, i + 1
        return 0

    state = load_safetensors(args.weights)
    model.load_state_dict(state, strict=False)
    b, t = args.ranks * s["batch"], s["seq"]
    segments = positions = None
    if args.docs and args.flat:
        # One row of b*t tokens; each document's pieces of `context` tokens
        # from its start are segments of their own, positions count within
        # them.
        docs = [np.fromfile(os.path.join(args.docs, f), dtype=np.uint8)
                for f in sorted(os.listdir(args.docs))]
        data = np.concatenate(docs).astype(np.int64)
        seg, pos, piece = [], [], 0
        for d in docs:
            for j in range(len(d)):
                if j % context == 0:
                    piece += 1
                seg.append(piece)
                pos.append(j % context)
        n = b * t
        x = torch.tensor(data[:n]).view(1, n)
        y = torch.tensor(data[1:n + 1]).view(1, n)
        segments = torch.tensor(np.array(seg[:n])).view(1, n)
        positions = torch.tensor(np.array(pos[:n])).view(1, n)
    elif args.docs:
        docs = [np.fromfile(os.path.join(args.docs, f), dtype=np.uint8)
                for f in sorted(os.listdir(args.docs))]
        data = np.concatenate(docs).astype(np.int64)
        doc_of = np.concatenate([np.full(len(d), i) for i, d in enumerate(docs)])
        seg, pos = [], []
        for r in range(b):
            ids = doc_of[r * t:(r + 1) * t]
            seg.append(ids)
            # Position in the document, restarting where the row cuts one.
            p = np.zeros(t, dtype=np.int64)
            for j in range(1, t):
                p[j] = p[j - 1] + 1 if ids[j] == ids[j - 1] else 0
            pos.append(p)
        segments, positions = torch.tensor(np.stack(seg)), torch.tensor(np.stack(pos))
    else:
        data = np.fromfile(args.tokens, dtype=np.uint16).astype(np.int64)
    if not (args.docs and args.flat):
        x = torch.tensor(np.stack([data[i * t:(i + 1) * t] for i in range(b)]))
        y = torch.tensor(np.stack([data[i * t + 1:(i + 1) * t + 1] for i in range(b)]))

    opt = manifest["optimizer"]
    if opt["kind"] == "sgd":
        # Plain SGD: the update is -lr * gradient, so the updates compared
        # below are the gradients.
        if opt["momentum"] or opt["weight_decay"]:
            print("compare_gpt.py supports SGD without momentum and decay")
            return 1
        optimizer = torch.optim.SGD(model.parameters(), lr=opt["lr"])
    else:
        decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
        no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
        optimizer = torch.optim.AdamW(
            [{"params": decay, "weight_decay": opt["weight_decay"]},
             {"params": no_decay, "weight_decay": 0.0}],
            lr=opt["lr"], betas=(opt["beta1"], opt["beta2"]), eps=opt["eps"])
    before = {n: p.detach().clone() for n, p in model.state_dict().items()}
    loss = model(x, y, segments, positions)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

    loom_loss = json.loads(open(args.metrics).readline())["loss"]
    rel = abs(loom_loss - loss.item()) / abs(loss.item())
    print(f"torch loss {loss.item():.7f} loom loss {loom_loss:.7f} rel {rel:.2e}")
    ok = rel <= args.rtol
    print("loss matches" if ok else "loss DIFFERS")

    # AdamW: the parameters after the step. SGD: the updates (after -
    # before), i.e. the gradients, which parameters much larger than one
    # step would hide.
    after = load_safetensors(args.after)
    updates = opt["kind"] == "sgd"
    worst, worst_name = 0.0, None
    for name, p in model.state_dict().items():
        if name == "lm_head.weight":
            continue
        ref = p.detach().double()
        got = after[name].double()
        if updates:
            ref, got = ref - before[name].double(), got - before[name].double()
        err = ((got - ref).norm() / ref.norm()).item()
        if err > worst:
            worst, worst_name = err, name
    what = "update" if updates else "parameter"
    print(f"max relative {what} error {worst:.2e} ({worst_name})")
    params_ok = worst <= args.rtol
    print(f"{what}s match" if params_ok else f"{what}s DIFFER")
    return 0 if ok and params_ok else 1


if __name__ == "__main__":
    sys.exit(main())
