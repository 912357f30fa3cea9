"""Snapshots from recorded `nvidia-smi --query-gpu=... --format=csv [-l N]` and `nvidia-smi dmon` output.

These are what people already collect (nvidia_gpu_exporter shells out to the first; `dmon` is the
quick look), so either file replays through the exporter and `watch` without a GPU. A recording with
`-l` / several dmon iterations gives several frames: a frame ends when a GPU index repeats.
Columns the query did not ask for stay None.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable
from typing import Any

from gpuwise.errors import UserInputError
from gpuwise.export.sample import GpuSample, Snapshot
from gpuwise.facts.gpu_fields import NoValue, convert, to_enabled, to_int
from gpuwise.i18n import msg


def _num(text: str) -> float:
    """'143156 MiB', '28.16 W', '100 %', '1980 MHz' (with or without `nounits`) -> the number."""
    return float(text.split()[0])


def _mask(text: str) -> int:
    return int(text.strip(), 16)


# --query-gpu field (unit suffix removed) -> (GpuSample field, converter); first listed wins on duplicates
_QUERY: dict[str, tuple[str, Callable[[str], Any]]] = {
    "index": ("index", to_int),
    "uuid": ("uuid", str.strip),
    "name": ("name", str.strip),
    "pci.bus_id": ("pci_bus_id", str.strip),
    "utilization.gpu": ("util_gpu_pct", _num),
    "utilization.memory": ("util_mem_pct", _num),
    "memory.used": ("fb_used_mib", _num),
    "memory.free": ("fb_free_mib", _num),
    "memory.total": ("fb_reported_total_mib", _num),
    "temperature.gpu": ("temperature_c", _num),
    "power.draw.instant": ("power_w", _num),
    "power.draw": ("power_w", _num),
    "enforced.power.limit": ("power_limit_w", _num),
    "power.limit": ("power_limit_w", _num),
    "clocks.current.sm": ("sm_clock_mhz", _num),
    "clocks.sm": ("sm_clock_mhz", _num),
    "clocks.max.sm": ("sm_clock_max_mhz", _num),
    "clocks.current.memory": ("mem_clock_mhz", _num),
    "clocks.mem": ("mem_clock_mhz", _num),
    "clocks.max.memory": ("mem_clock_max_mhz", _num),
    "clocks_event_reasons.active": ("clock_event_mask", _mask),
    "clocks_throttle_reasons.active": ("clock_event_mask", _mask),
    "pcie.link.gen.gpucurrent": ("pcie_gen", to_int),
    "pcie.link.gen.current": ("pcie_gen", to_int),
    "pcie.link.gen.max": ("pcie_gen_max", to_int),
    "pcie.link.width.current": ("pcie_width", to_int),
    "pcie.link.width.max": ("pcie_width_max", to_int),
    "ecc.errors.corrected.volatile.total": ("ecc_sbe_volatile", to_int),
    "ecc.errors.uncorrected.volatile.total": ("ecc_dbe_volatile", to_int),
    "ecc.errors.corrected.aggregate.total": ("ecc_sbe_aggregate", to_int),
    "ecc.errors.uncorrected.aggregate.total": ("ecc_dbe_aggregate", to_int),
    "remapped_rows.correctable": ("remapped_correctable", to_int),
    "remapped_rows.uncorrectable": ("remapped_uncorrectable", to_int),
    "remapped_rows.pending": ("remap_pending", to_enabled),
    "remapped_rows.failure": ("remap_failure", to_enabled),
}

# dmon column -> (GpuSample field, scale to our unit)
_DMON: dict[str, tuple[str, float]] = {
    "pwr": ("power_w", 1.0),
    "gtemp": ("temperature_c", 1.0),
    "sm": ("util_gpu_pct", 1.0),
    "mem": ("util_mem_pct", 1.0),
    "mclk": ("mem_clock_mhz", 1.0),
    "pclk": ("sm_clock_mhz", 1.0),
    "rxpci": ("pcie_rx_kbps", 1000.0),  # dmon -s t prints MB/s
    "txpci": ("pcie_tx_kbps", 1000.0),
    "fb": ("fb_used_mib", 1.0),
}
_INT_FIELDS = {"sm_clock_mhz", "sm_clock_max_mhz", "mem_clock_mhz", "mem_clock_max_mhz"}


def is_dmon(text: str) -> bool:
    return bool(re.match(r"\s*#\s*gpu\b", text))


def snapshots_from_query_csv(text: str, *, hostname: str, taken_at: float) -> list[Snapshot]:
    """Frames of a --query-gpu CSV recording; it must have a header row naming the fields."""
    rows = [r for r in csv.reader(io.StringIO(text), skipinitialspace=True) if r]
    if not rows:
        raise _bad("the nvidia-smi CSV file is empty")
    header = [re.sub(r"\s*\[.*\]$", "", h.strip()) for h in rows[0]]
    if not any(h in _QUERY for h in header):
        raise _bad(f"the CSV header names no nvidia-smi --query-gpu field gpuwise reads (got {header[:4]})")
    columns = [(i, *_QUERY[h]) for i, h in enumerate(header) if h in _QUERY]
    host_col = header.index("hostname") if "hostname" in header else None
    driver_col = header.index("driver_version") if "driver_version" in header else None
    frames: list[list[GpuSample]] = [[]]
    driver = None
    for n, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            raise _bad(f"line {n} has {len(row)} fields, the header {len(header)}")
        gpu = GpuSample(index=len(frames[-1]))
        for i, field, conv in reversed(columns):  # reversed: the first-listed alias is set last and wins
            value = _convert(row[i], conv)
            if value is not None:
                setattr(gpu, field, int(value) if field in _INT_FIELDS else value)
        if host_col is not None and row[host_col].strip():
            hostname = row[host_col].strip()
        if driver_col is not None:
            driver = row[driver_col].strip()
        if any(g.index == gpu.index for g in frames[-1]):
            frames.append([])
        frames[-1].append(gpu)
    return _snapshots(frames, hostname, taken_at, driver)


def snapshots_from_dmon(text: str, *, hostname: str, taken_at: float) -> list[Snapshot]:
    """Frames of `nvidia-smi dmon` output (any -s selection; '-' means no value)."""
    lines = text.splitlines()
    header = next((ln.lstrip("#").split() for ln in lines if re.match(r"\s*#\s*gpu\b", ln)), None)
    if header is None:
        raise _bad("no '# gpu ...' header line: this is not nvidia-smi dmon output")
    frames: list[list[GpuSample]] = [[]]
    for n, line in enumerate(lines, start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        cells = line.split()
        if len(cells) != len(header):
            raise _bad(f"dmon line {n} has {len(cells)} columns, the header {len(header)}")
        try:
            gpu = GpuSample(index=int(cells[header.index("gpu")]))
        except ValueError as exc:
            raise _bad(f"dmon line {n}: GPU index {cells[0]!r} is not a number") from exc
        for name, cell in zip(header, cells, strict=True):
            if name in _DMON and cell != "-":
                field, scale = _DMON[name]
                value = _convert(cell, lambda s, k=scale: float(s) * k)
                setattr(gpu, field, int(value) if field in _INT_FIELDS and value is not None else value)
        if any(g.index == gpu.index for g in frames[-1]):
            frames.append([])
        frames[-1].append(gpu)
    return _snapshots(frames, hostname, taken_at, None)


def _snapshots(
    frames: list[list[GpuSample]], hostname: str, taken_at: float, driver: str | None
) -> list[Snapshot]:
    frames = [f for f in frames if f]
    if not frames:
        raise _bad("the recording has a header but no GPU rows")
    return [Snapshot(taken_at=taken_at, hostname=hostname, gpus=f, driver_version=driver) for f in frames]


def _convert(raw: str, conv: Callable[[str], Any]) -> Any:
    try:
        return convert(raw, conv)
    except NoValue:
        return None


def _bad(message: str) -> UserInputError:
    return UserInputError(
        message,
        msg(
            "pass the output of `nvidia-smi --query-gpu=index,uuid,utilization.gpu,... --format=csv` "
            "(with its header) or of `nvidia-smi dmon`"
        ),
    )
