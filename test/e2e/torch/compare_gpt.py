"""Checks Loom's GPT against PyTorch 1.13 from the same weights and batch.

  make:    writes random nanoGPT weights (safetensors) and a uint16 token file
  compare: reads Loom's step-1 metrics and checkpoint, repeats the step in
           PyTorch (float32) and requires the loss and every parameter after
           one AdamW step to agree within relative 1e-4.
"""
import argparse
import json
import sys

import numpy as np
import torch

from nanogpt import GPT, load_safetensors, save_safetensors

RTOL = 1e-4


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
    args = ap.parse_args()
    manifest = json.load(open(args.manifest))
    s = spec_of(manifest)
    torch.manual_seed(0)
    model = GPT(s["vocab"], s["seq"], s["dim"], s["heads"], s["layers"])

    if args.mode == "make":
        state = {k: v for k, v in model.state_dict().items() if k != "lm_head.weight"}
        # Non-trivial LayerNorm parameters so their gradients are exercised.
        for k, v in state.items():
            if ".ln_" in k:
                v.add_(0.1 * torch.randn_like(v))
        save_safetensors(args.weights, state)
        rng = np.random.default_rng(0)
        n = s["batch"] * s["seq"] + 1
        rng.integers(0, s["vocab"], n, dtype=np.uint16).tofile(args.tokens)
        return 0

    state = load_safetensors(args.weights)
    model.load_state_dict(state, strict=False)
    data = np.fromfile(args.tokens, dtype=np.uint16).astype(np.int64)
    b, t = s["batch"], s["seq"]
    x = torch.tensor(np.stack([data[i * t:(i + 1) * t] for i in range(b)]))
    y = torch.tensor(np.stack([data[i * t + 1:(i + 1) * t + 1] for i in range(b)]))

    opt = manifest["optimizer"]
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    adamw = torch.optim.AdamW(
        [{"params": decay, "weight_decay": opt["weight_decay"]},
         {"params": no_decay, "weight_decay": 0.0}],
        lr=opt["lr"], betas=(opt["beta1"], opt["beta2"]), eps=opt["eps"])
    loss = model(x, y)
    adamw.zero_grad()
    loss.backward()
    adamw.step()

    loom_loss = json.loads(open(args.metrics).readline())["loss"]
    rel = abs(loom_loss - loss.item()) / abs(loss.item())
    print(f"torch loss {loss.item():.7f} loom loss {loom_loss:.7f} rel {rel:.2e}")
    ok = rel <= RTOL
    print("loss matches" if ok else "loss DIFFERS")

    after = load_safetensors(args.after)
    worst, worst_name = 0.0, None
    for name, p in model.state_dict().items():
        if name == "lm_head.weight":
            continue
        ref = p.detach().double()
        got = after[name].double()
        err = ((got - ref).norm() / ref.norm()).item()
        if err > worst:
            worst, worst_name = err, name
    print(f"max relative parameter error {worst:.2e} ({worst_name})")
    params_ok = worst <= RTOL
    print("parameters match" if params_ok else "parameters DIFFER")
    return 0 if ok and params_ok else 1


if __name__ == "__main__":
    sys.exit(main())
