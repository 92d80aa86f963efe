"""Checks one step of Loom's zeroth-order training (loomc --zo=mezo) against
a plain float64 implementation of the MeZO update from the same weights,
batch and seed:

    l+ = L(theta + eps z),  l- = L(theta - eps z),  g = (l+ - l-) / (2 eps)
    theta' = (1 - lr wd) theta - lr g z

with L nanoGPT's GPT in float64 (PyTorch) and z from philox.py, written
from docs/zo.md. Loom computes in float32, so

  - its loss (the mean of l+ and l-) matches within --rtol (1e-5);
  - its |g| within --gtol (1e-4): l+ - l- is a difference of two float32
    losses about 2 eps |grad . z| apart, so it carries their rounding
    (a few ulps of the loss) relative to that difference;
  - its update theta' - theta matches -lr wd theta - lr g z, with Loom's
    own g, within --rtol of the update's size: every element of z is
    checked to float32 rounding.

--seed-offset K uses the directions of another seed, for the check that the
comparison can fail.

--ranks N with an artifact compiled with --zo=mezo:directions=rank (the
multi-direction variant) checks the step of N data-parallel ranks: rank r
reads rows r*batch.. of the token file (sequential windows) and perturbs
along direction r, and

    theta' = (1 - lr wd) theta - lr / N sum_r g_r z_r,   loss = mean_r (l+ + l-) / 2

Loom reports only |(g_r)| / N, so the update is checked with the float64
g_r, within --utol (their float32 rounding, about --gtol, carries into it).
"""
import argparse
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "torch"))
from compare_gpt import spec_of  # noqa: E402
from nanogpt import GPT, load_safetensors  # noqa: E402
from philox import direction  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--weights", required=True)
    ap.add_argument("--tokens", required=True)
    ap.add_argument("--metrics", required=True)
    ap.add_argument("--after", required=True)
    ap.add_argument("--step", type=int, default=1, help="the step compared (1-based)")
    ap.add_argument("--rtol", type=float, default=1e-5)
    ap.add_argument("--gtol", type=float, default=1e-4)
    ap.add_argument("--seed-offset", type=int, default=0)
    ap.add_argument("--ranks", type=int, default=1)
    ap.add_argument("--utol", type=float, default=2e-4)
    args = ap.parse_args()
    manifest = json.load(open(args.manifest))
    opt = manifest["optimizer"]
    if opt["kind"] != "zo":
        print(f"compare_zo.py compares --zo artifacts, not {opt['kind']}")
        return 1
    s = spec_of(manifest)
    model = GPT(s["vocab"], s["seq"], s["dim"], s["heads"], s["layers"]).double()
    model.load_state_dict({k: v.double() for k, v in
                           load_safetensors(args.weights).items()}, strict=False)
    data = np.fromfile(args.tokens, dtype=np.uint16).astype(np.int64)
    b, t = s["batch"], s["seq"]
    # Row i reads window i mod windows, as loom-run's sequential token data.
    windows = (len(data) - 1) // t
    starts = lambda first: [(i % windows) * t for i in range(first, first + b)]
    rows = lambda first: (
        torch.tensor(np.stack([data[s0:s0 + t] for s0 in starts(first)])),
        torch.tensor(np.stack([data[s0 + 1:s0 + t + 1] for s0 in starts(first)])))
    x, y = rows(0)

    eps, lr, wd = opt["eps"], opt["lr"], opt["weight_decay"]
    seed = opt["seed"] + args.seed_offset
    params = dict(model.named_parameters())
    theta, z, decay = {}, {}, {}
    for stream, p in enumerate(manifest["params"]):
        name = p["name"]
        theta[name] = params[name].detach().clone()
        z[name] = torch.from_numpy(direction(
            theta[name].numel(), seed, stream, args.step).astype(np.float64)
        ).reshape(theta[name].shape)
        decay[name] = wd if p.get("weight_decay", True) else 0.0

    def loss_at(sign, zs=z, batch=(x, y)):
        with torch.no_grad():
            for name in theta:
                params[name].copy_(theta[name] + sign * eps * zs[name])
            return model(*batch).item()

    if args.ranks > 1:
        return multi_direction(args, manifest, opt, theta, decay, seed, loss_at, rows)
    lp, lm = loss_at(+1), loss_at(-1)
    g = (lp - lm) / (2 * eps)
    record = json.loads(open(args.metrics).readline())
    loss_ref = (lp + lm) / 2
    rel = abs(record["loss"] - loss_ref) / abs(loss_ref)
    print(f"float64 loss {loss_ref:.8f} loom {record['loss']:.8f} rel {rel:.2e}")
    loss_ok = rel <= args.rtol
    print("loss matches" if loss_ok else "loss DIFFERS")
    grel = abs(record["grad_norm"] - abs(g)) / abs(g)
    print(f"float64 g {g:+.6f} loom |g| {record['grad_norm']:.6f} rel {grel:.2e}")
    g_ok = grel <= args.gtol
    print("projected gradient matches" if g_ok else "projected gradient DIFFERS")

    after = load_safetensors(args.after)
    g_loom = np.sign(g) * record["grad_norm"]
    worst, worst_name = 0.0, None
    for name in theta:
        got = after[name].double() - theta[name]
        want = -lr * decay[name] * theta[name] - lr * g_loom * z[name]
        err = ((got - want).abs().max() / want.abs().max()).item()
        if err > worst:
            worst, worst_name = err, name
    print(f"max relative update error {worst:.2e} ({worst_name})")
    updates_ok = worst <= args.rtol
    print("updates match" if updates_ok else "updates DIFFER")
    return 0 if loss_ok and g_ok and updates_ok else 1


def multi_direction(args, manifest, opt, theta, decay, seed, loss_at, rows):
    if opt.get("directions") != "rank":
        print("--ranks N compares a directions=rank artifact")
        return 1
    eps, lr, n = opt["eps"], opt["lr"], args.ranks
    b = spec_of(manifest)["batch"]
    gs, zs, means = [], [], []
    for r in range(n):
        z = {}
        for stream, p in enumerate(manifest["params"]):
            name = p["name"]
            z[name] = torch.from_numpy(direction(
                theta[name].numel(), seed, stream, args.step, direction=r
            ).astype(np.float64)).reshape(theta[name].shape)
        batch = rows(r * b)
        lp, lm = loss_at(+1, z, batch), loss_at(-1, z, batch)
        gs.append((lp - lm) / (2 * eps))
        zs.append(z)
        means.append((lp + lm) / 2)
    record = json.loads(open(args.metrics).readline())
    loss_ref = sum(means) / n
    rel = abs(record["loss"] - loss_ref) / abs(loss_ref)
    print(f"float64 loss {loss_ref:.8f} loom {record['loss']:.8f} rel {rel:.2e}")
    loss_ok = rel <= args.rtol
    print("loss matches" if loss_ok else "loss DIFFERS")
    norm = float(np.sqrt(sum(g * g for g in gs))) / n
    grel = abs(record["grad_norm"] - norm) / norm
    print(f"float64 |g|/N {norm:.6f} loom {record['grad_norm']:.6f} rel {grel:.2e}")
    g_ok = grel <= args.gtol
    print("projected gradients match" if g_ok else "projected gradients DIFFER")
    after = load_safetensors(args.after)
    worst, worst_name = 0.0, None
    for name in theta:
        got = after[name].double() - theta[name]
        want = -lr * decay[name] * theta[name] - lr / n * sum(
            g * z[name] for g, z in zip(gs, zs))
        err = ((got - want).abs().max() / want.abs().max()).item()
        if err > worst:
            worst, worst_name = err, name
    print(f"max relative update error {worst:.2e} ({worst_name})")
    updates_ok = worst <= args.utol
    print("updates match" if updates_ok else "updates DIFFER")
    return 0 if loss_ok and g_ok and updates_ok else 1


if __name__ == "__main__":
    sys.exit(main())
