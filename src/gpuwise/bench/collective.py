"""Collectives over torch.distributed: all_reduce, all_gather, reduce_scatter, broadcast.

Reports algbw and busbw as nccl-tests defines them (collective_rank.py), per size, per-rank times
and the slowest rank. Each op's headline is the median busbw of the timed samples at the largest
size (where the bandwidth plateaus; `stats.of` names it), the same figure as that size's row in the
table. NCCL on GPUs, gloo on CPU.

Two ways in:
- `gpuwise bench --only collective` (single node): run() starts one process per rank on this machine
  running `python -m gpuwise.bench.collective`, exactly what a multi-node user starts by hand.
- multi-node: `torchrun --nnodes N --nproc-per-node G ... -m gpuwise.bench.collective [--json FILE]`
  or the same under `srun` (MASTER_ADDR exported). Rank 0 prints the table and writes the JSON.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from gpuwise.bench.collective_rank import BUS_FACTOR, EXIT_PEER_FAILED, RankInfo, rank_from_env, run_rank
from gpuwise.bench.context import BenchContext, Skip
from gpuwise.bench.peaks import Peak, no_peak, nvlink_peak, pcie_peak
from gpuwise.bench.registry import BenchInfo
from gpuwise.bench.sizes import geometric, human, parse_sizes
from gpuwise.bench.timing import stats_from
from gpuwise.documents.bench import Measurement
from gpuwise.i18n import N_, joined, msg

BENCHMARK = BenchInfo(
    name="collective",
    layer="collective",
    title=N_("Collectives (busbw, nccl-tests definition)"),
    help=N_("all_reduce, all_gather, reduce_scatter, broadcast over torch.distributed (busbw)"),
    order=50,
    quick_timeout_s=120,
    full_timeout_s=1800,
    aliases=("collectives", "nccl"),
)

OPS = tuple(BUS_FACTOR)
MiB, GiB = 1 << 20, 1 << 30


@dataclass(frozen=True)
class Spec:
    sizes: tuple[int, ...]
    ops: tuple[str, ...] = OPS
    world_size: int = 2
    backend: str = "auto"
    warmup: int = 5
    repeats: int = 5
    target_bytes: int = 4 * GiB  # per sample: small messages repeat up to max_iters, large ones run once
    max_iters: int = 20  # nccl-tests' default -n
    timeout_s: float = 60.0  # process-group timeout: how long a rank waits for a dead peer

    def argv(self, json_path: str) -> list[str]:
        return [
            "--sizes",
            joined(",", map(str, self.sizes)),
            "--ops",
            joined(",", self.ops),
            "--backend",
            self.backend,
            "--warmup",
            str(self.warmup),
            "--repeats",
            str(self.repeats),
            "--target-bytes",
            str(self.target_bytes),
            "--max-iters",
            str(self.max_iters),
            "--timeout",
            str(self.timeout_s),
            "--json",
            json_path,
        ]


def make_spec(ctx: BenchContext) -> Spec:
    full = ctx.mode == "full"
    if ctx.device == "cuda":
        sizes = ctx.options.sizes or geometric(8, GiB, 2 if full else 8)
        return Spec(
            sizes=sizes, world_size=ctx.options.world_size or ctx.gpu_count, repeats=10 if full else 5
        )
    # gloo on a few CPU cores: the same sweep shape, capped so quick mode stays quick
    sizes = ctx.options.sizes or (geometric(8, GiB, 2) if full else geometric(8, 16 * MiB, 8))
    return Spec(
        sizes=sizes,
        world_size=ctx.options.world_size or 2,
        warmup=2,
        repeats=5 if full else 3,
        target_bytes=256 * MiB if full else 32 * MiB,
        timeout_s=60.0 if full else 30.0,
    )


# ---- rank 0: rows -> Measurements -------------------------------------------------------------


def collective_peak(backend: str, nodes: int) -> tuple[Peak, bool]:
    """(peak busbw, whether in-network reduction (NVLS/SHARP) may legitimately beat it)."""
    if backend != "nccl":
        return no_peak(
            msg("{backend} on CPU: loopback/TCP has no physical link peak").format(backend=backend)
        ), False
    if nodes > 1:
        sharp = os.environ.get("NCCL_COLLNET_ENABLE") == "1"
        return no_peak(
            msg("multi-node: the NIC peak is not known to bench (see `gpuwise probe` for NIC rates)")
        ), sharp
    import torch

    from gpuwise.bench.p2p import live_topo_text, parse_topo_links

    name = torch.cuda.get_device_name(0)
    links = parse_topo_links(live_topo_text())
    if links and all(code.startswith("NV") for code in links.values()):
        nvls = (
            torch.cuda.get_device_capability(0) >= (9, 0) and os.environ.get("NCCL_NVLS_ENABLE", "1") != "0"
        )
        return nvlink_peak(name), nvls
    if links:
        return pcie_peak(name), False
    return no_peak(msg("GPU topology unknown (`nvidia-smi topo -m` failed): no link peak")), False


def measurements(rows: list[dict], info: RankInfo, backend: str, device: str) -> list[Measurement]:
    peak, in_network = collective_peak(backend, info.nodes)
    out = []
    for op in OPS:
        table = sorted((r for r in rows if r["op"] == op), key=lambda r: r["bytes"])
        if not table:
            continue
        largest = table[-1]  # the plateau size: the headline is its row's median busbw
        m = Measurement(
            name=f"{op.replace('_', '')}_busbw",
            layer="collective",
            unit="GB/s",
            stats=stats_from(largest["busbw_samples_gb_s"], of=human(largest["bytes"])),
            device=device,
            params={
                "op": op,
                "backend": backend,
                "world_size": info.world_size,
                "nodes": info.nodes,
                "launcher": info.launcher,
                "dtype": "fp32",
                "sizes": [r["bytes"] for r in table],
                "busbw_factor": f"{op}: {BUS_FACTOR[op](info.world_size):.4g} at n={info.world_size}",
            },
            extra={
                "headline_bytes": largest["bytes"],
                "algbw_plateau_gb_s": largest["algbw_gb_s"],  # the headline row's algbw
                "slowest_rank": largest["slowest_rank"],
                "per_rank_time_us": largest["per_rank_time_us"],
                "table": [{k: v for k, v in r.items() if k != "busbw_samples_gb_s"} for r in table],
                "in_network_reduction": bool(in_network and op == "all_reduce"),
            },
        )
        peak.apply(m)
        out.append(m)
    return out


def print_table(rows: list[dict]) -> None:
    print(
        f"{'op':<15}{'size':>12}{'iters':>7}{'time_us':>12}{'algbw GB/s':>12}{'busbw GB/s':>12}  slowest rank"
    )
    for r in rows:
        print(
            f"{r['op']:<15}{human(r['bytes']):>12}{r['iters']:>7}{r['time_us']:>12.1f}{r['algbw_gb_s']:>12.3f}{r['busbw_gb_s']:>12.3f}  {r['slowest_rank']}"
        )


# ---- single-node launcher ---------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rank_env(
    base: dict[str, str], rank: int, world: int, port: int, threads: int, cpu: bool
) -> dict[str, str]:
    env = dict(
        base,
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
        RANK=str(rank),
        WORLD_SIZE=str(world),
        LOCAL_RANK=str(rank),
        LOCAL_WORLD_SIZE=str(world),
    )
    env.setdefault(
        "OMP_NUM_THREADS", str(threads)
    )  # ranks share the cores; oversubscription would skew times
    if cpu:
        env.setdefault("GLOO_SOCKET_IFNAME", "lo")  # single node: loopback, never a real NIC
    return env


def launch(spec: Spec, say=lambda text: None, deadline_s: float = 600.0) -> list[dict]:
    """Start spec.world_size local ranks; return rank 0's Measurement dicts, or raise with the failing rank's words."""
    from gpuwise.errors import EnvironmentProblem

    with tempfile.TemporaryDirectory(prefix="gpuwise-collective-") as tmp:
        out = Path(tmp) / "rank0.json"
        cmd = [sys.executable, "-m", "gpuwise.bench.collective", *spec.argv(str(out))]
        port, threads = _free_port(), max(1, (os.cpu_count() or 1) // spec.world_size)
        cpu = spec.backend == "gloo" or (spec.backend == "auto" and not _has_cuda())
        procs, errs = [], []
        for rank in range(spec.world_size):
            err = open(Path(tmp) / f"rank{rank}.err", "w+")  # noqa: SIM115 - closed below, after the ranks exit
            errs.append(err)
            procs.append(
                subprocess.Popen(
                    cmd,
                    env=rank_env(dict(os.environ), rank, spec.world_size, port, threads, cpu),
                    stdout=subprocess.PIPE if rank == 0 else subprocess.DEVNULL,
                    stderr=err,
                    text=True,
                )
            )
        threading.Thread(target=_forward_progress, args=(procs[0].stdout, say), daemon=True).start()
        try:
            failed = _wait(procs, time.monotonic() + deadline_s)
            if failed is not None:
                rank, code = failed
                errs[rank].seek(0)
                tail = joined(" | ", errs[rank].read().strip().splitlines()[-3:])[-600:]
                raise EnvironmentProblem(
                    msg("collective rank {rank} failed (exit {code}): {value}").format(
                        rank=rank, code=code, value=tail or "no message"
                    ),
                    fix=msg("check the rank's message above; rerun with smaller --sizes if out of memory"),
                )
            from gpuwise.documents.bench import BenchReport

            return [m.model_dump() for m in BenchReport.model_validate_json(out.read_text()).results]
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                p.wait()
            for e in errs:
                e.close()


def _has_cuda() -> bool:
    import torch

    return torch.cuda.is_available()


def _forward_progress(stream, say) -> None:
    for line in stream:
        if line.startswith("progress: "):
            say("collective " + line[len("progress: ") :].strip())


def _wait(procs: list[subprocess.Popen], deadline: float) -> tuple[int, int] | None:
    """None when every rank exited 0; else (rank, exit code) of the first to fail (or time out)."""
    while True:
        codes = [p.poll() for p in procs]
        bad = [(r, c) for r, c in enumerate(codes) if c not in (None, 0)]
        if bad:
            # the survivors should time out by themselves; give them the chance, bounded
            grace = time.monotonic() + 5
            while time.monotonic() < grace and any(p.poll() is None for p in procs):
                time.sleep(0.1)
            return bad[0]
        if all(c == 0 for c in codes):
            return None
        if time.monotonic() > deadline:
            return (codes.index(None), "timeout")  # type: ignore[return-value]
        time.sleep(0.05)


def run(ctx: BenchContext, spec: Spec) -> list[Measurement]:
    if ctx.device == "cuda" and spec.world_size < 2:
        raise Skip(msg("{n} GPU visible: collectives need at least two ranks").format(n=spec.world_size))
    ctx.say(
        msg("collectives: {n} ranks, {sizes}").format(
            n=spec.world_size, sizes=f"{human(spec.sizes[0])}..{human(spec.sizes[-1])}"
        )
    )
    return with_peak_messages([Measurement.model_validate(d) for d in launch(spec, ctx.say)], spec.backend)


def with_peak_messages(ms: list[Measurement], backend: str) -> list[Measurement]:
    """Rank 0 writes its measurements as JSON, so their peak text arrives as plain English (no message
    id). The local ranks ran on this host with this backend, so the peak is the same here: where its
    English matches, put the message back, so the text words in the caller's language where shown."""
    peak, _ = collective_peak(backend, 1)
    for m in ms:
        if m.peak_source is not None and m.peak_source == peak.source:
            m.peak_source = peak.source
    return ms


# ---- python -m gpuwise.bench.collective -------------------------------------------------------


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m gpuwise.bench.collective",
        description="nccl-tests style collective benchmark for torchrun/srun ranks.",
    )
    p.add_argument(
        "--sizes", default="8:1G", help="'8:1G' (x2 steps), '8:1G:x8' or '1M,64M,1G' (default 8:1G)"
    )
    p.add_argument("--ops", default=joined(",", OPS), help="comma list of " + joined(", ", OPS))
    p.add_argument("--backend", default="auto", choices=["auto", "nccl", "gloo"])
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--target-bytes", type=int, default=4 * GiB)
    p.add_argument("--max-iters", type=int, default=20)
    p.add_argument(
        "--timeout", type=float, default=60.0, help="seconds a rank waits for a peer before failing"
    )
    p.add_argument("--json", help="rank 0 writes a gpuwise-bench/1 report here")
    args = p.parse_args(argv)
    args.sizes = parse_sizes(args.sizes)
    args.ops = tuple(o.strip() for o in args.ops.split(",") if o.strip())
    unknown = [o for o in args.ops if o not in OPS]
    if unknown:
        p.error(f"unknown op(s) {unknown}; choose from {joined(', ', OPS)}")
    return args


def main(argv: list[str] | None = None) -> int:
    """Entry point for one rank (torchrun, srun, or the single-node launcher)."""
    from gpuwise.errors import GpuwiseError

    try:
        args = _parse_args(argv)
        info = rank_from_env(dict(os.environ))
        import torch

        if args.backend == "auto":
            args.backend = "nccl" if torch.cuda.is_available() else "gloo"
        rows = run_rank(info, args)
    except GpuwiseError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # a peer died, or the process group timed out: say so and exit, never hang
        print(
            f"gpuwise collective: rank failed: {type(exc).__name__}: {str(exc)[:400]}",
            file=sys.stderr,
            flush=True,
        )
        os._exit(EXIT_PEER_FAILED)
    if info.rank == 0:
        print_table(rows)
        device = f"{info.world_size} x " + ("cuda" if args.backend == "nccl" else "cpu")
        results = measurements(rows, info, args.backend, device)
        if args.json:
            from gpuwise.atomic import write_text_atomic
            from gpuwise.bench.runner import judge
            from gpuwise.documents.bench import BenchReport

            report = BenchReport(
                hostname=socket.gethostname(), mode="collective", results=[judge(m) for m in results]
            )
            write_text_atomic(args.json, report.model_dump_json(by_alias=True, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
