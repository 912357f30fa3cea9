"""The collective probe: an all-reduce across local ranks (gloo on CPU, NCCL on GPUs), kept up for the
whole run so each round times only the all-reduce, not the process start and rendezvous.

The probe starts one worker process per rank (`python -m gpuwise.stability.allreduce`), which join a
torch.distributed group over 127.0.0.1 and then wait on stdin: each "go" line makes every rank time
`ITERS` all-reduces of `NBYTES` after a barrier and print its seconds per all-reduce. The round's
value is the slowest rank's time as bus bandwidth (nccl-tests' definition, busbw = algbw * 2(n-1)/n:
bench.collective_rank.BUS_FACTOR). A worker whose parent goes away reads EOF and exits.
"""

from __future__ import annotations

import argparse
import os
import select
import socket
import subprocess
import sys
import time

from gpuwise.bench.collective_rank import BUS_FACTOR
from gpuwise.bench.context import BenchContext
from gpuwise.errors import EnvironmentProblem
from gpuwise.i18n import msg
from gpuwise.stability.model import MetricInfo

NBYTES = 4 << 20
ITERS = 5
START_TIMEOUT_S = 120.0
ROUND_TIMEOUT_S = 30.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _readline(proc: subprocess.Popen, timeout: float) -> str:
    ready, _w, _x = select.select([proc.stdout], [], [], timeout)
    return proc.stdout.readline().strip() if ready else ""


class AllReduceProbe:
    layer = "collective"

    def __init__(self, ctx: BenchContext, world_size: int | None = None):
        self.backend = "nccl" if ctx.device == "cuda" and ctx.gpu_count >= 2 else "gloo"
        self.world = world_size or (ctx.gpu_count if self.backend == "nccl" else 2)
        port = _free_port()
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        self.procs: list[subprocess.Popen] = []
        try:
            for rank in range(self.world):
                argv = [sys.executable, "-m", "gpuwise.stability.allreduce", "--rank", str(rank)]
                argv += ["--world", str(self.world), "--port", str(port), "--backend", self.backend]
                self.procs.append(
                    subprocess.Popen(
                        argv,
                        stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE,
                        text=True,
                        env=env,
                        bufsize=1,
                        start_new_session=True,  # Ctrl-C reaches gpuwise only; close() stops the ranks
                    )  # fmt: skip
                )
            deadline = time.monotonic() + START_TIMEOUT_S
            for p in self.procs:
                if _readline(p, max(deadline - time.monotonic(), 0.1)) != "ready":
                    raise EnvironmentProblem(
                        msg("the all-reduce ranks did not start ({backend}, {world} ranks)").format(
                            backend=self.backend, world=self.world
                        ),
                        msg("check that torch.distributed works (`gpuwise bench --only collective`), or leave "
                          "collective out of --layers"),
                    )  # fmt: skip
        except BaseException:
            self.close()
            raise
        self.metrics = [
            MetricInfo(
                name="collective.allreduce_busbw",
                layer="collective",
                unit="GB/s",
                higher_is_better=True,
                description=f"{NBYTES >> 20} MiB all-reduce, {self.world} local ranks, {self.backend}, "
                f"slowest rank of {ITERS}",
            )
        ]

    def run(self) -> dict[str, float]:
        for p in self.procs:
            p.stdin.write("go\n")
            p.stdin.flush()
        times = []
        for p in self.procs:
            line = _readline(p, ROUND_TIMEOUT_S)
            try:
                times.append(float(line))
            except ValueError:
                raise EnvironmentProblem(
                    msg("an all-reduce rank stopped answering ({line})").format(line=line or "timeout"),
                    msg("leave collective out of --layers, or check `gpuwise bench --only collective`"),
                ) from None
        seconds = max(times)
        busbw = NBYTES / seconds / 1e9 * BUS_FACTOR["all_reduce"](self.world)
        return {"collective.allreduce_busbw": busbw}

    def close(self) -> None:
        for p in self.procs:
            try:
                p.stdin.write("quit\n")
                p.stdin.close()
            except (OSError, ValueError):
                pass
        for p in self.procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.procs = []


def worker(rank: int, world: int, port: int, backend: str) -> None:
    import datetime

    import torch
    import torch.distributed as dist

    dist.init_process_group(
        backend,
        init_method=f"tcp://127.0.0.1:{port}",
        rank=rank,
        world_size=world,
        timeout=datetime.timedelta(seconds=60),
    )
    device = f"cuda:{rank}" if backend == "nccl" else "cpu"
    if backend == "nccl":
        torch.cuda.set_device(rank)
    x = torch.ones(NBYTES // 4, dtype=torch.float32, device=device)

    def sync():
        if backend == "nccl":
            torch.cuda.synchronize()

    dist.all_reduce(x)
    sync()
    print("ready", flush=True)
    try:
        for line in sys.stdin:
            if line.strip() != "go":
                break
            dist.barrier()
            sync()
            start = time.perf_counter()
            for _i in range(ITERS):
                dist.all_reduce(x)
            sync()
            print(f"{(time.perf_counter() - start) / ITERS:.9f}", flush=True)
    finally:
        dist.destroy_process_group()


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--rank", type=int, required=True)
    p.add_argument("--world", type=int, required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--backend", default="gloo")
    a = p.parse_args()
    worker(a.rank, a.world, a.port, a.backend)


if __name__ == "__main__":
    main()
