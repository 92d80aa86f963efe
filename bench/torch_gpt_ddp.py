"""PyTorch 1.13 peer for Loom's data-parallel benchmark: the same nanoGPT
(test/e2e/torch/nanogpt.py), batch, AdamW and thread count, trained on
random tokens with DistributedDataParallel over gloo (or alone with --ranks 1).
With --local-sgd TAU it is PyTorch's post-local SGD instead: DDP with
`post_localSGD_hook` (no global gradient all-reduce; each rank is its own
subgroup) and a `PeriodicModelAverager` averaging the models every TAU steps
(blocking), the peer of Loom's CO2. With --zero 1 the optimizer is
`ZeroRedundancyOptimizer` over AdamW (each rank keeps 1/N of its state and
broadcasts its updated parameters), the peer of Loom's ZeRO; with --zero 3
the model is wrapped in FullyShardedDataParallel instead of DDP (1.13
needs CUDA for it: the error is printed as `torch error=...`). With
--powersgd R DDP averages with PyTorch's PowerSGD communication hook at rank
R (error feedback and warm start, from the first step: the peer of Loom's
--compress=powersgd). (Its bf16_compress_hook needs CUDA and NCCL: Loom's
--compress=bf16 has no CPU peer.)
Prints one line: `torch ranks=R steps=N step_time_s=... mean_step_time_s=...
tokens_per_s=...` (median and mean over the timed steps, after warmup;
tokens_per_s from the mean, which counts the periodic averaging)."""
import argparse
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "test", "e2e", "torch"))
from nanogpt import GPT  # noqa: E402


def worker(rank, args):
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    if args.ranks > 1:
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", str(args.port))
        dist.init_process_group("gloo", rank=rank, world_size=args.ranks)
    model = GPT(args.vocab, args.seq, args.dim, args.heads, args.layers)
    averager = None
    if args.ranks > 1 and args.zero == 3:
        try:
            from torch.distributed.fsdp import FullyShardedDataParallel
            model = FullyShardedDataParallel(model)
        except Exception as e:  # noqa: BLE001 - the peer's own refusal
            if rank == 0:
                print(f"torch error={type(e).__name__}: {e}".replace("\n", " "),
                      flush=True)
            dist.destroy_process_group()
            return
    elif args.ranks > 1:
        model = torch.nn.parallel.DistributedDataParallel(model)
        if args.local_sgd:
            from torch.distributed.algorithms.ddp_comm_hooks.post_localSGD_hook import (
                PostLocalSGDState, post_localSGD_hook)
            from torch.distributed.algorithms.model_averaging.averagers import (
                PeriodicModelAverager)
            # Every rank alone in its subgroup: the hook's intra-subgroup
            # all-reduce is a no-op, as Loom's CO2 inner steps.
            # (dist.new_subgroups needs CUDA; every rank creates every group.)
            subgroup = [dist.new_group([r]) for r in range(args.ranks)][rank]
            state = PostLocalSGDState(process_group=None, subgroup=subgroup,
                                      start_localSGD_iter=0)
            model.register_comm_hook(state, post_localSGD_hook)
            averager = PeriodicModelAverager(period=args.local_sgd, warmup_steps=0)
        elif args.powersgd:
            from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook
            state = powerSGD_hook.PowerSGDState(
                process_group=None, matrix_approximation_rank=args.powersgd,
                start_powerSGD_iter=2, use_error_feedback=True, warm_start=True)
            model.register_comm_hook(state, powerSGD_hook.powerSGD_hook)
    if args.ranks > 1 and args.zero == 1:
        from torch.distributed.optim import ZeroRedundancyOptimizer
        opt = ZeroRedundancyOptimizer(model.parameters(),
                                      optimizer_class=torch.optim.AdamW, lr=1e-3)
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(rank)
    times = []
    for step in range(args.warmup + args.steps):
        x = torch.randint(0, args.vocab, (args.batch, args.seq), generator=g)
        y = torch.randint(0, args.vocab, (args.batch, args.seq), generator=g)
        t0 = time.perf_counter()
        loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if averager:
            averager.average_parameters(model.parameters())
        if step >= args.warmup:
            times.append(time.perf_counter() - t0)
    if args.ranks > 1:
        dist.barrier()
    if rank == 0:
        t = statistics.median(times)
        mean = statistics.mean(times)
        tokens = args.batch * args.seq * args.ranks
        print(f"torch ranks={args.ranks} steps={args.steps} step_time_s={t:.5f} "
              f"mean_step_time_s={mean:.5f} tokens_per_s={tokens / mean:.1f}",
              flush=True)
    if args.ranks > 1:
        dist.destroy_process_group()


def main_under_mpirun(args):
    """One process per rank, started by mpirun (e.g. bench/cluster.sh): the
    rank and world come from OpenMPI, the rendezvous address from the
    cluster script, and gloo talks over the host's eth0."""
    args.ranks = int(os.environ["OMPI_COMM_WORLD_SIZE"])
    os.environ["MASTER_ADDR"] = os.environ.get("LOOM_CLUSTER_MASTER", "127.0.0.1")
    os.environ["MASTER_PORT"] = str(args.port)
    if "LOOM_CLUSTER_MASTER" in os.environ:
        os.environ.setdefault("GLOO_SOCKET_IFNAME", "eth0")
    worker(int(os.environ["OMPI_COMM_WORLD_RANK"]), args)


def main():
    ap = argparse.ArgumentParser()
    for name, default in [("vocab", 256), ("seq", 64), ("dim", 64), ("heads", 4),
                          ("layers", 2), ("batch", 8), ("ranks", 1), ("steps", 30),
                          ("warmup", 5), ("threads", 1), ("port", 29533),
                          ("local_sgd", 0), ("zero", 0), ("powersgd", 0)]:
        ap.add_argument("--" + name.replace("_", "-"), type=int, default=default)
    args = ap.parse_args()
    if "OMPI_COMM_WORLD_SIZE" in os.environ:
        return main_under_mpirun(args)
    if args.ranks > 1:
        mp.spawn(worker, args=(args,), nprocs=args.ranks, join=True)
    else:
        worker(0, args)


if __name__ == "__main__":
    main()
