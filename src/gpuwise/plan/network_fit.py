"""A measured multi-node all-reduce turned into the perf model's inter-node bandwidth and latency (α–β fit).

Input: the per-size table of an all-reduce across nodes (`gpuwise bench` collective across nodes, or an
nccl-tests log; both give rows of bytes and time in µs). The fit is the Hockney model
`t(S) = a + b·S`, by least squares on the relative error (each size counts alike, so the small
messages set the latency `a` and the large ones the seconds per byte `b`); nccl-tests documents the
same model (https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md).

A straight line does not fit NCCL well across 8 B-16 GiB (protocols and pipelining change with size:
on a real 2-node p5 log the fit is 10-40% off between 1 and 32 MiB). DDP all-reduces buckets of one
size, so the seconds per byte the model uses are taken at the workload's bucket size:
`(t(bucket) − a) / bucket`, with t interpolated (log-log) in the measured table; `a` comes from the fit.

The perf model (perf.py) prices an all-reduce of S bytes over m nodes of g ranks as
`2(g−1)/g·S/B_intra + 2(m−1)/m·S/B_inter + steps·α`, so the measurement is turned into the B_inter and α
that make the model reproduce the measured time at the measured node count (`inter_for`): the option's
own NVLink term is taken out first. The model then extrapolates to other node counts itself.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from gpuwise.i18n import msg

MIN_ROWS = 4  # fewer sizes cannot separate latency from bandwidth


@dataclass(frozen=True)
class NetworkFit:
    """α–β fit of one measured all-reduce across `nodes` nodes with `ranks_per_node` ranks each."""

    nodes: int
    ranks_per_node: int
    latency_s: float  # a: the time of an empty all-reduce
    seconds_per_byte: float  # b
    busbw_plateau_gb_s: float  # median busbw of the three largest sizes, as measured
    sizes: int
    transport: str | None  # "rdma", "tcp" or None (not known from the file)
    source: str
    table: tuple[tuple[float, float], ...] = ()  # (bytes, seconds) as measured, by size

    def seconds_per_byte_at(self, size: float | None) -> float:
        """Seconds per byte for an all-reduce of `size` bytes: measured time at that size minus the latency."""
        pts = self.table
        if not size or len(pts) < 2:
            return self.seconds_per_byte
        if size >= pts[-1][0]:  # beyond the table: the marginal rate of its two largest sizes
            (s0, t0), (s1, t1) = pts[-2], pts[-1]
            per_byte = (t1 - t0) / (s1 - s0) if s1 > s0 else 0.0
        else:
            i = next(i for i, (s, _t) in enumerate(pts) if s >= size)
            if i == 0:
                t = pts[0][1]
            else:
                (s0, t0), (s1, t1) = pts[i - 1], pts[i]
                frac = math.log(size / s0) / math.log(s1 / s0)
                t = math.exp(math.log(t0) + frac * (math.log(t1) - math.log(t0)))
            per_byte = (t - self.latency_s) / size
        return per_byte if per_byte > 0 else self.seconds_per_byte

    def inter_for(
        self, intra_bytes_s: float, intra_latency_s: float, bucket_bytes: float | None = None
    ) -> tuple[float, float]:
        """(inter-node bytes/s, per-step latency s) that make perf.py reproduce this measurement for
        all-reduces of `bucket_bytes` (the whole fit's slope when None)."""
        m, g = float(self.nodes), float(self.ranks_per_node)
        inter_share = 2.0 * (m - 1) / m
        measured = self.seconds_per_byte_at(bucket_bytes)
        intra_per_byte = 2.0 * (g - 1) / g / intra_bytes_s if g > 1 and intra_bytes_s > 0 else 0.0
        per_byte = measured - intra_per_byte
        if per_byte <= 0.2 * measured:  # NVLink estimate above the measurement: keep it all
            per_byte = measured
        steps = min(2.0 * (m - 1), 2.0 * math.ceil(math.log2(m)))
        latency = max(self.latency_s - 2.0 * (g - 1) * intra_latency_s, 0.0) / steps
        return inter_share / per_byte, latency

    def describe(self) -> str:
        return msg(
            "{source}: all-reduce over {nodes} nodes × {ranks} ranks, {sizes} sizes; "
            "fit t = {latency} us + S / {bandwidth} GB/s (busbw plateau {plateau} GB/s)"
        ).format(
            source=self.source,
            nodes=self.nodes,
            ranks=self.ranks_per_node,
            sizes=self.sizes,
            latency=f"{self.latency_s * 1e6:.1f}",
            bandwidth=f"{1 / self.seconds_per_byte / 1e9:.2f}",
            plateau=f"{self.busbw_plateau_gb_s:.2f}",
        )


def fit_alpha_beta(rows: list[dict]) -> tuple[float, float] | None:
    """(a seconds, b seconds/byte) from rows with "bytes" and "time_us"; None when they cannot be fitted."""
    pts = [
        (float(r["bytes"]), float(r["time_us"]) * 1e-6)
        for r in rows
        if isinstance(r.get("bytes"), int | float)
        and isinstance(r.get("time_us"), int | float)
        and r["bytes"] > 0
        and r["time_us"] > 0
    ]
    if len(pts) < MIN_ROWS:
        return None
    # minimise Σ ((a + b·S − t) / t)²: weighted least squares with weights 1/t².
    w = [1.0 / (t * t) for _s, t in pts]
    sw = sum(w)
    sx = sum(wi * s for wi, (s, _t) in zip(w, pts, strict=True))
    sy = sum(wi * t for wi, (_s, t) in zip(w, pts, strict=True))
    sxx = sum(wi * s * s for wi, (s, _t) in zip(w, pts, strict=True))
    sxy = sum(wi * s * t for wi, (s, t) in zip(w, pts, strict=True))
    det = sw * sxx - sx * sx
    if det <= 0:
        return None
    a = (sxx * sy - sx * sxy) / det
    b = (sw * sxy - sx * sy) / det
    if a < 0:  # latency below zero is noise: refit through the origin
        a, b = 0.0, sxy / sxx
    if b <= 0 or not math.isfinite(b):
        return None
    return a, b


def fit_measurement(
    table: list[dict], nodes: int, ranks: int, transport: str | None, source: str
) -> tuple[NetworkFit | None, str]:
    """A NetworkFit from one all-reduce's table, or (None, why not)."""
    if nodes < 2:
        return None, msg(
            "{source}: measured on one node; only an all-reduce across nodes calibrates the network"
        ).format(source=source)
    if ranks < nodes or ranks % nodes:
        return None, msg(
            "{source}: {ranks} ranks on {nodes} nodes is not the same number of ranks per node"
        ).format(source=source, ranks=ranks, nodes=nodes)
    fit = fit_alpha_beta(table)
    if fit is None:
        return (
            None,
            msg("{source}: fewer than {n} usable sizes (bytes, time) to fit latency and bandwidth").format(
                source=source, n=MIN_ROWS
            ),
        )
    big = sorted((r for r in table if r.get("busbw_gb_s") is not None), key=lambda r: r["bytes"])[-3:]
    plateau = statistics.median(float(r["busbw_gb_s"]) for r in big) if big else float("nan")
    pts = sorted(
        (float(r["bytes"]), float(r["time_us"]) * 1e-6)
        for r in table
        if isinstance(r.get("bytes"), int | float) and isinstance(r.get("time_us"), int | float)
        if r["bytes"] > 0 and r["time_us"] > 0
    )
    return (
        NetworkFit(nodes, ranks // nodes, fit[0], fit[1], plateau, len(table), transport, source, tuple(pts)),
        "",
    )


def spread_cv(values: list[float]) -> float | None:
    """Coefficient of variation (population σ / mean) of positive values; None for fewer than two."""
    vals = [float(v) for v in values if isinstance(v, int | float) and v > 0]
    if len(vals) < 2:
        return None
    mean = statistics.fmean(vals)
    return statistics.pstdev(vals) / mean if mean > 0 else None
