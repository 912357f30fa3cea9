"""One rank of the collective benchmark: what runs under torchrun, srun, or gpuwise's own launcher.

Timing follows nccl-tests: per (op, size), warm-up calls, then `repeats` samples of `iters`
back-to-back calls between a barrier and a device sync; a sample's time is the slowest rank's.
algbw = bytes / time; busbw = algbw x factor (all_reduce 2(n-1)/n; all_gather and reduce_scatter
(n-1)/n; broadcast 1), where bytes is the full buffer (nccl-tests' "size").

A dead or stuck peer must not hang anyone: the process group has a timeout, and a heartbeat
watchdog ends the rank (exit 124) if no (op, size) completes within the timeout plus a margin.
"""

from __future__ import annotations

import math
import os
import statistics
import sys
import threading
import time
from dataclasses import dataclass
from datetime import timedelta

from gpuwise.bench.sizes import human
from gpuwise.i18n import msg

BUS_FACTOR = {
    "all_reduce": lambda n: 2 * (n - 1) / n,
    "all_gather": lambda n: (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
}
EXIT_PEER_FAILED = 3
EXIT_WATCHDOG = 124


@dataclass(frozen=True)
class RankInfo:
    rank: int
    world_size: int
    local_rank: int
    local_world_size: int
    launcher: str

    @property
    def nodes(self) -> int:
        return max(1, self.world_size // max(1, self.local_world_size))


def rank_from_env(env: dict[str, str]) -> RankInfo:
    """Rank identity from torchrun (RANK, WORLD_SIZE, ...) or Slurm srun (SLURM_PROCID, ...) variables."""
    from gpuwise.errors import UserInputError

    if "RANK" in env and "WORLD_SIZE" in env:
        world = int(env["WORLD_SIZE"])
        return RankInfo(
            int(env["RANK"]),
            world,
            int(env.get("LOCAL_RANK", 0)),
            int(env.get("LOCAL_WORLD_SIZE", world)),
            "torchrun",
        )
    if "SLURM_PROCID" in env and "SLURM_NTASKS" in env:
        if "MASTER_ADDR" not in env:
            raise UserInputError(
                msg("under srun, MASTER_ADDR is not set"),
                fix=msg("export MASTER_ADDR=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n1)"),
            )
        per_node = env.get("SLURM_NTASKS_PER_NODE", "").split("(")[0]
        world = int(env["SLURM_NTASKS"])
        return RankInfo(
            int(env["SLURM_PROCID"]),
            world,
            int(env.get("SLURM_LOCALID", 0)),
            int(per_node) if per_node.isdigit() else world,
            "srun",
        )
    raise UserInputError(
        msg("not started by torchrun or srun (no RANK/WORLD_SIZE or SLURM_PROCID in the environment)"),
        fix=msg(
            "run `torchrun --nproc-per-node N -m gpuwise.bench.collective`, or `gpuwise bench --only "
            "collective` on a single node"
        ),
    )


class Heartbeat:
    """Ends the process if `beat()` is not called for `limit_s`: the last line of defence against hangs."""

    def __init__(self, limit_s: float, rank: int):
        self.limit_s, self.rank = limit_s, rank
        self.last = time.monotonic()
        self.what = "starting"
        threading.Thread(target=self._watch, daemon=True, name="gpuwise-watchdog").start()

    def beat(self, what: str) -> None:
        self.last, self.what = time.monotonic(), what

    def _watch(self) -> None:
        while True:
            time.sleep(0.5)
            if time.monotonic() - self.last > self.limit_s:
                sys.stderr.write(
                    f"gpuwise collective rank {self.rank}: "
                    f"no progress for {self.limit_s:.0f} s during {self.what}; "
                    "a peer probably died or hangs. Exiting.\n"
                )
                sys.stderr.flush()
                os._exit(EXIT_WATCHDOG)


def _op_call(dist, op: str, nbytes: int, world: int, device, torch):
    """(fn, actual_bytes) for one collective over a float32 buffer of about `nbytes`, or None if too small."""
    count = nbytes // 4
    if op in ("all_gather", "reduce_scatter"):
        count = count // world * world
    if count == 0:
        return None
    full = torch.ones(count, dtype=torch.float32, device=device)
    part = torch.ones(count // world, dtype=torch.float32, device=device) if op != "all_reduce" else None
    gather = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
    scatter = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor
    calls = {
        "all_reduce": lambda: dist.all_reduce(full),
        "all_gather": lambda: gather(full, part),
        "reduce_scatter": lambda: scatter(part, full),
        "broadcast": lambda: dist.broadcast(full, src=0),
    }
    return calls[op], count * 4


def iterations(nbytes: int, target_bytes: int, max_iters: int) -> int:
    """Same on every rank (they must issue the same calls): enough calls to move about target_bytes."""
    return max(1, min(max_iters, math.ceil(target_bytes / max(1, nbytes))))


def time_collective(dist, torch, fn, iters: int, warmup: int, repeats: int, sync) -> list[float]:
    for _warm in range(warmup):
        fn()
    sync()
    samples = []
    for _rep in range(repeats):
        dist.barrier()
        sync()
        start = time.perf_counter()
        for _it in range(iters):
            fn()
        sync()
        samples.append((time.perf_counter() - start) / iters)
    return samples


def run_rank(info: RankInfo, args) -> list[dict]:
    """Run every (op, size) on this rank. Rank 0 returns one row per (op, size); other ranks return []."""
    import torch
    import torch.distributed as dist

    backend = args.backend
    if backend == "auto":
        backend = "nccl" if torch.cuda.is_available() else "gloo"
    device = torch.device("cpu")
    if backend == "nccl":
        device = torch.device("cuda", info.local_rank)
        torch.cuda.set_device(device)
    heartbeat = Heartbeat(args.timeout + 15, info.rank)
    kwargs = {"device_id": device} if backend == "nccl" else {}
    dist.init_process_group(
        backend, rank=info.rank, world_size=info.world_size, timeout=timedelta(seconds=args.timeout), **kwargs
    )
    sync = (lambda: torch.cuda.synchronize(device)) if backend == "nccl" else (lambda: None)
    rows = []
    for op in args.ops:
        for nbytes in args.sizes:
            heartbeat.beat(f"{op} {human(nbytes)}")
            call = _op_call(dist, op, nbytes, info.world_size, device, torch)
            if call is None:
                continue
            fn, actual = call
            iters = iterations(actual, args.target_bytes, args.max_iters)
            if info.rank == 0:
                print(f"progress: {op} {human(actual)} x{iters}", flush=True)
            mine = time_collective(dist, torch, fn, iters, args.warmup, args.repeats, sync)
            local = torch.tensor(mine, dtype=torch.float64, device=device)
            everyone = torch.empty(info.world_size * len(mine), dtype=torch.float64, device=device)
            dist.all_gather_into_tensor(everyone, local)
            if info.rank == 0:
                rows.append(
                    _row(op, actual, iters, everyone.view(info.world_size, -1).tolist(), info.world_size)
                )
            del fn, call
    heartbeat.beat("shutdown")
    dist.barrier()
    dist.destroy_process_group()
    return rows


def _row(op: str, nbytes: int, iters: int, per_rank: list[list[float]], world: int) -> dict:
    # a sample takes as long as its slowest rank (nccl-tests reports the max over ranks). The row's
    # figures are medians of its samples (of the rates, not the rate of the median time: with an even
    # number of repeats those differ), so the row and a headline taken from it are the same number.
    sample_s = [max(rank[i] for rank in per_rank) for i in range(len(per_rank[0]))]
    rank_median_s = [statistics.median(r) for r in per_rank]
    algbw = [nbytes / s / 1e9 for s in sample_s]
    busbw = [a * BUS_FACTOR[op](world) for a in algbw]
    return {
        "op": op,
        "bytes": nbytes,
        "iters": iters,
        "time_us": statistics.median(sample_s) * 1e6,
        "algbw_gb_s": statistics.median(algbw),
        "busbw_gb_s": statistics.median(busbw),
        "busbw_samples_gb_s": busbw,
        "per_rank_time_us": [round(t * 1e6, 2) for t in rank_median_s],
        "slowest_rank": max(range(world), key=lambda r: rank_median_s[r]),
    }
