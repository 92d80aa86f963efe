"""PyTorch 1.13 peer for Loom's data-parallel benchmark: the same nanoGPT
(test/e2e/torch/nanogpt.py), batch, AdamW and thread count, trained on
random tokens with DistributedDataParallel over gloo (or alone with --ranks 1).
Prints one line: `torch ranks=R steps=N step_time_s=... tokens_per_s=...`
(median over the timed steps, after warmup)."""
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
    if args.ranks > 1:
        model = torch.nn.parallel.DistributedDataParallel(model)
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
        if step >= args.warmup:
            times.append(time.perf_counter() - t0)
    if args.ranks > 1:
        dist.barrier()
    if rank == 0:
        t = statistics.median(times)
        tokens = args.batch * args.seq * args.ranks
        print(f"torch ranks={args.ranks} steps={args.steps} step_time_s={t:.5f} "
              f"tokens_per_s={tokens / t:.1f}", flush=True)
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
                          ("warmup", 5), ("threads", 1), ("port", 29533)]:
        ap.add_argument("--" + name, type=int, default=default)
    args = ap.parse_args()
    if "OMPI_COMM_WORLD_SIZE" in os.environ:
        return main_under_mpirun(args)
    if args.ranks > 1:
        mp.spawn(worker, args=(args,), nprocs=args.ranks, join=True)
    else:
        worker(0, args)


if __name__ == "__main__":
    main()
