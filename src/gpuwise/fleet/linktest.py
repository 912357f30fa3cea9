"""Pairwise link test: one rank per node sends a buffer to each peer in turn, timed at the receiver.

Why not only the all-reduce: in a synchronous collective every rank waits for the slowest link, so
per-rank times come out nearly equal and cannot say *which* node's link is slow. Timing each
directed pair (src -> dst) can: a node whose own link is limited is slow in every pair through it,
so its best pair in each direction (max GB/s) stays low, while a healthy node has at least one fast
pair. Each pair keeps its median and its best transfer: on a busy host, contention only ever slows a
transfer down, so the best of the repeats is the estimate of what the link can carry. With two nodes
there is only one pair per direction, so a slow transfer cannot be pinned on either end; use three
nodes or more (`gpuwise fleet report` says so).

Run one rank per node:
    torchrun --nnodes N --nproc-per-node 1 --rdzv-backend c10d --rdzv-endpoint HEAD:29500 \
        -m gpuwise.fleet.linktest --json links.json
Rank 0 writes the result (schema gpuwise-links/1). NCCL on GPUs, gloo on CPU.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import sys
import time
from datetime import timedelta

from gpuwise.documents.ids import LINKS_SCHEMA

ALL_PAIRS_UP_TO = 8  # above this many nodes, each node sends to its next two ring neighbours only


def pairs(world: int) -> list[tuple[int, int]]:
    """Directed (src, dst) pairs: all of them for a small job, else ring neighbours at distance 1 and 2."""
    if world <= ALL_PAIRS_UP_TO:
        return [(s, d) for s in range(world) for d in range(world) if s != d]
    return [(s, (s + k) % world) for k in (1, 2) for s in range(world)]


def _parse(argv: list[str] | None) -> argparse.Namespace:
    from gpuwise.bench.sizes import parse_sizes

    p = argparse.ArgumentParser(prog="python -m gpuwise.fleet.linktest", description=__doc__.split("\n")[0])
    p.add_argument("--bytes", default="64M", help="buffer size per transfer (default 64M)")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--backend", default="auto", choices=["auto", "nccl", "gloo"])
    p.add_argument("--timeout", type=float, default=120.0, help="seconds a rank waits for a peer")
    p.add_argument("--json", help="rank 0 writes the result here")
    args = p.parse_args(argv)
    args.bytes = parse_sizes(args.bytes)[-1]
    return args


def run(args: argparse.Namespace) -> dict | None:
    import torch.distributed as dist

    backend, device = pick_backend(args.backend)
    dist.init_process_group(backend, timeout=timedelta(seconds=args.timeout))
    try:
        return measure(args.bytes, args.repeats, backend, device)
    finally:
        dist.destroy_process_group()


def pick_backend(backend: str):
    """(backend, device): NCCL on this rank's GPU when there is one ("auto"), else gloo on the CPU."""
    import torch

    if backend == "auto":
        backend = "nccl" if torch.cuda.is_available() else "gloo"
    device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0"))) if backend == "nccl" else None
    if device is not None:
        torch.cuda.set_device(device)
    return backend, device


def measure(nbytes: int, repeats: int, backend: str, device, hosts: list | None = None) -> dict | None:
    """Time every pair in an initialised process group; rank 0 gets the gpuwise-links/1 document."""
    import torch
    import torch.distributed as dist

    rank, world = dist.get_rank(), dist.get_world_size()
    if hosts is None:
        hosts = [None] * world
        dist.all_gather_object(hosts, os.environ.get("SLURMD_NODENAME") or socket.gethostname())
    buf = torch.empty(nbytes // 4, dtype=torch.float32, device=device)
    token = torch.zeros(1, dtype=torch.float32, device=device)
    sync = (lambda: torch.cuda.synchronize(device)) if device is not None else (lambda: None)
    # Rounds, not one pair at a time: each round times every pair once, so a burst of contention on a
    # busy host spreads over all pairs instead of spoiling every sample of one. Round 0 warms up.
    times: dict[tuple[int, int], list[float]] = {}
    for round_ in range(repeats + 1):
        for src, dst in pairs(world):
            if rank == dst:
                start = time.perf_counter()
                dist.send(token, src)
                dist.recv(buf, src)
                sync()
                if round_:
                    times.setdefault((src, dst), []).append(time.perf_counter() - start)
            elif rank == src:
                dist.recv(token, dst)
                dist.send(buf, dst)
            dist.barrier()
    mine = [{"src": hosts[s], "dst": hosts[d], "seconds": t} for (s, d), t in times.items()]
    gathered: list = [None] * world
    dist.all_gather_object(gathered, mine)
    if rank != 0:
        return None
    rows = []
    for part in gathered:
        for r in part:
            gbps = [nbytes / s / 1e9 for s in r["seconds"]]
            rows.append(
                {
                    "src": r["src"],
                    "dst": r["dst"],
                    "gb_s": statistics.median(gbps),
                    "best_gb_s": max(gbps),
                    "samples_gb_s": gbps,
                }
            )
    return {
        "schema": LINKS_SCHEMA,
        "backend": backend,
        "bytes": nbytes,
        "repeats": repeats,
        "hosts": hosts,
        "pairs": sorted(rows, key=lambda r: (r["src"], r["dst"])),
    }


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    try:
        doc = run(args)
    except Exception as exc:  # a dead peer or a timeout: say so and exit, never hang
        print(f"gpuwise linktest: rank failed: {type(exc).__name__}: {str(exc)[:400]}", file=sys.stderr)
        return 2
    if doc is not None:
        for r in doc["pairs"]:
            print(f"{r['src']:>20} -> {r['dst']:<20} {r['gb_s']:10.3f} GB/s")
        if args.json:
            from gpuwise import strictjson
            from gpuwise.atomic import write_text_atomic

            write_text_atomic(args.json, strictjson.dumps(doc, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
