"""GPU step time of a Loom cuda artifact against PyTorch on the same GPU:
the same GPT (test/e2e/torch/nanogpt.py, nanoGPT's layout), batch, AdamW
hyperparameters and precision, in PyTorch eager mode and under
torch.compile. The precision is the artifact's: fp32 (TF32 off on both
sides), or for `loomc --precision=bf16` PyTorch's own mixed precision,
torch.autocast(dtype=torch.bfloat16) around the forward (fp32 master weights
on both sides). Meant for the GPU machine, which has
PyTorch 2.x and CUDA but no LLVM or MPI: compile the artifact here
(`loomc ... --target=cuda -o DIR`), bring it and a runtime bundle
(scripts/gpu-bundle.sh) to the GPU machine, and run

  python3 bench/gpu_step.py --artifact DIR --loom-run BUNDLE/loom-run [--steps 50] [--out bench/results/gpu]
      [--modes eager,eager-sdpa,compile,compile-sdpa]

The PyTorch modes: eager, eager with F.scaled_dot_product_attention (flash
attention, as nanoGPT runs when it can), torch.compile, and torch.compile
with SDPA (nanoGPT's GPT-2-124M setup: the peer for a model of that size).
It prints `nvidia-smi -L`'s device line, the median step time of each,
tokens per second, the model FLOP utilisation (MFU: nanoGPT's estimate,
6 N + 12 L T d FLOPs per token, against the GPU's dense peak for the
precision; H100/H200 only), Loom's ratio to each mode, the
peak GPU memory of each (Loom: its device pool's peak, peak_device_bytes;
PyTorch: torch.cuda.max_memory_allocated; both count parameters,
gradients, optimizer state and temporaries), and writes the raw numbers
and outputs as JSON under --out."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "test", "e2e", "torch"))


def spec_fields(spec):
    kind, _, body = spec.partition(":")
    if kind != "gpt":
        sys.exit(f"gpu_step.py compares GPT artifacts; {spec} is not one")
    return {k: int(v) for k, v in (f.split("=") for f in body.split(","))}


def loom_steps(args, manifest):
    with tempfile.TemporaryDirectory() as tmp:
        metrics = os.path.join(tmp, "m.jsonl")
        cmd = [args.loom_run, args.artifact, "--steps", str(args.warmup + args.steps),
               "--data", "synthetic", "--seed", "1", "--log-every", "0", "--metrics", metrics]
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode:
            sys.exit(f"loom-run failed ({run.returncode}):\n{run.stderr}")
        rows = [json.loads(l) for l in open(metrics)]
        times = [r["step_time_s"] for r in rows if "step" in r][args.warmup:]
        peak = [r["summary"].get("peak_device_bytes", 0) for r in rows if "summary" in r]
        return times, peak[0] if peak else 0, run.stdout + run.stderr


# Dense peak in FLOP/s by precision, for the MFU column: the H100 SXM and
# H200 datasheets give the same (bf16 989.4 TFLOP/s; fp32 without TF32 66.9).
HOPPER_PEAK = {"bf16": 989.4e12, "f32": 66.9e12}


def flops_per_token(f):
    """nanoGPT's estimate_mfu: 6 N for the weights (forward and backward)
    plus 12 L T d for attention's two T x T products, N counting the tied
    embedding once and the position table not at all."""
    d, layers, seq = f["dim"], f["layers"], f["seq"]
    n = f["vocab"] * d + layers * (12 * d * d + 13 * d) + 2 * d
    return 6 * n + 12 * layers * seq * d


def peak_flops(device, precision):
    """The GPU's peak for `precision`; None (no MFU) for other GPUs."""
    if "H100" in device or "H200" in device:
        return HOPPER_PEAK[precision]
    return None


def torch_steps(args, f, opt, compiled, bf16, sdpa=False):
    import contextlib
    import torch
    from nanogpt import GPT
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    torch.manual_seed(0)
    model = GPT(f["vocab"], f["seq"], f["dim"], f["heads"], f["layers"], sdpa=sdpa).cuda()
    decay = [p for p in model.parameters() if p.dim() >= 2]
    rest = [p for p in model.parameters() if p.dim() < 2]
    optim = torch.optim.AdamW([{"params": decay, "weight_decay": opt["weight_decay"]},
                               {"params": rest, "weight_decay": 0.0}],
                              lr=opt["lr"], betas=(opt["beta1"], opt["beta2"]), eps=opt["eps"])
    step = torch.compile(model) if compiled else model
    x = torch.randint(0, f["vocab"], (f["batch"], f["seq"]), device="cuda")
    y = torch.randint(0, f["vocab"], (f["batch"], f["seq"]), device="cuda")
    times = []
    for i in range(args.warmup + args.steps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        with (torch.autocast("cuda", dtype=torch.bfloat16) if bf16
              else contextlib.nullcontext()):
            loss = step(x, y)
        optim.zero_grad(set_to_none=True)
        loss.backward()
        optim.step()
        loss.item()  # Loom's step also ends with the loss on the host
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return times[args.warmup:], torch.cuda.max_memory_allocated(), torch.__version__


MODES = ("eager", "eager-sdpa", "compile", "compile-sdpa")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--artifact", required=True, help="a loomc --target=cuda artifact of a GPT")
    ap.add_argument("--loom-run", default="loom-run")
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "gpu"))
    ap.add_argument("--modes", default="eager,eager-sdpa,compile",
                    help="the PyTorch modes to time, from " + ",".join(MODES))
    args = ap.parse_args()
    modes = [m for m in args.modes.split(",") if m]
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        ap.error(f"unknown mode {unknown[0]!r}: choose from {', '.join(MODES)}")
    manifest = json.load(open(os.path.join(args.artifact, "manifest.json")))
    if manifest.get("target") != "cuda":
        sys.exit(f"{args.artifact} was not compiled with --target=cuda")
    f = spec_fields(manifest["model"]["spec"])
    opt = manifest["optimizer"]
    device = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout.strip()
    loom, loom_peak, loom_out = loom_steps(args, manifest)
    precision = manifest.get("compile_options", {}).get("precision", "f32")
    bf16 = precision == "bf16"
    steps, peak, version = {"loom": loom}, {"loom": loom_peak}, None
    for mode in modes:
        # The same model with PyTorch's fused attention (flash kernels) in
        # the -sdpa modes, as nanoGPT runs when it can.
        steps[mode], peak[mode], version = torch_steps(
            args, f, opt, compiled=mode.startswith("compile"), bf16=bf16,
            sdpa=mode.endswith("-sdpa"))
    med = {k: statistics.median(v) for k, v in steps.items()}
    tokens = f["batch"] * f["seq"]
    flops = peak_flops(device, "bf16" if bf16 else "f32")
    print(device)
    what = "bf16 mixed precision (torch.autocast)" if bf16 else "fp32"
    print(f"{manifest['model']['spec']}, {what}, AdamW; PyTorch {version}; median of {args.steps} steps")
    print("| | step (ms) | tokens/s | MFU | Loom / this | peak GPU memory (MiB) | Loom / this |\n"
          "|---|---|---|---|---|---|---|")
    for k in steps:
        rate = tokens / med[k]
        mfu = f"{100 * rate * flops_per_token(f) / flops:.1f} %" if flops else "-"
        mem = f"{peak[k] / 2**20:.1f} | " if peak[k] else "- | "
        mem += f"{peak['loom'] / peak[k]:.2f}x" if peak[k] and peak["loom"] else "-"
        print(f"| {k} | {1e3 * med[k]:.3f} | {rate:.0f} | {mfu} | {med['loom'] / med[k]:.2f}x | {mem} |")
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, f"gpu_step_{precision}.json"), "w") as out:
        json.dump({"device": device, "spec": manifest["model"]["spec"], "torch": version,
                   "precision": precision, "tokens_per_step": tokens,
                   "flops_per_token": flops_per_token(f), "peak_flops": flops,
                   "step_s": steps, "median_s": med, "peak_gpu_bytes": peak,
                   "loom_run_output": loom_out}, out, indent=1)


if __name__ == "__main__":
    main()
