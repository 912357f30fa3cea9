"""A small DistributedDataParallel training run for `gpuwise launch` (examples/job-cpu.yaml).

Started by torchrun (one launcher per node, c10d rendezvous): NCCL on GPUs, gloo on CPUs. It fits a
two-layer MLP to a fixed random regression problem, so the loss must fall; every rank checks at the end
that its weights equal rank 0's (DDP keeps them in sync) and rank 0 prints one summary line.
"""

from __future__ import annotations

import argparse
import os
import socket

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--batch", type=int, default=64)
    args = ap.parse_args()
    cuda = torch.cuda.is_available()
    dist.init_process_group("nccl" if cuda else "gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    local = int(os.environ.get("LOCAL_RANK", 0))
    device = torch.device(f"cuda:{local}" if cuda else "cpu")
    if cuda:
        torch.cuda.set_device(device)
    torch.manual_seed(0)  # same teacher and same initial weights on every rank
    teacher = torch.randn(32, 1)
    model = DDP(torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1)).to(device),
                device_ids=[local] if cuda else None)  # fmt: skip
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    gen = torch.Generator().manual_seed(1000 + rank)  # each rank sees its own shard of the data
    first = last = None
    for _ in range(args.steps):
        x = torch.randn(args.batch, 32, generator=gen)
        y = x @ teacher
        loss = torch.nn.functional.mse_loss(model(x.to(device)), y.to(device))
        opt.zero_grad()
        loss.backward()
        opt.step()
        first = loss.item() if first is None else first
        last = loss.item()
    flat = torch.cat([p.detach().flatten() for p in model.parameters()])
    ref = flat.clone()
    dist.broadcast(ref, 0)
    in_sync = bool(torch.allclose(flat, ref))
    print(f"rank {rank}/{world} on {socket.gethostname()}: loss {first:.4f} -> {last:.4f}, in sync: {in_sync}",
          flush=True)  # fmt: skip
    dist.barrier()
    dist.destroy_process_group()
    if not in_sync or not last < first:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
