"""`--calibrate BENCH.json`: take measured numbers from a `gpuwise bench` report into the model.

Read defensively: only results with status "ok" and a usable value count, and every number taken is
listed in `Calibration.used` (and every result skipped, with why, in `Calibration.ignored`), so the
plan says exactly what was calibrated. A calibration applies to the options whose GPU matches the
benchmarked GPU (by catalog match); other options keep their defaults.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from gpuwise.errors import DataValidationError, UserInputError


@dataclass
class Calibration:
    gpu_name: str | None = None  # benchmarked device name, from the report's environment
    training_mfu: float | None = None
    mamf_fraction: float | None = None  # matmul achieved / peak at the training precision
    intra_busbw_gb_s: float | None = None  # single-node all-reduce bus bandwidth
    used: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)


def _fraction(m) -> float | None:
    if m.percent_of_peak is not None and 0 < m.percent_of_peak <= 100:
        return m.percent_of_peak / 100.0
    if m.value is not None and m.peak:
        frac = m.value / m.peak
        return frac if 0 < frac <= 1 else None
    return None


def _device_name(report) -> str | None:
    env = report.environment or {}
    for key in ("gpu_name", "device_name", "gpu", "device"):
        value = env.get(key)
        if isinstance(value, str) and value:
            return value
        if isinstance(value, list) and value and isinstance(value[0], str):
            return value[0]
    names = env.get("gpu_names") or env.get("devices")
    if isinstance(names, list) and names:
        first = names[0]
        return first if isinstance(first, str) else (first.get("name") if isinstance(first, dict) else None)
    return None


def load_calibration(path: str | Path, precision: str) -> Calibration:
    """Parse a BenchReport (schema gpuwise-bench/1) and extract what the planner can use."""
    from pydantic import ValidationError

    from gpuwise.bench.models import BENCH_SCHEMA, BenchReport

    p = Path(path)
    try:
        raw = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserInputError(f"calibration file not found: {p}", "pass the JSON written by `gpuwise bench --json`") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataValidationError(f"not a readable JSON bench report: {exc}",
                                  "pass the JSON written by `gpuwise bench --json`", path=str(p)) from None
    if not isinstance(raw, dict) or raw.get("schema") != BENCH_SCHEMA:
        got = raw.get("schema") if isinstance(raw, dict) else type(raw).__name__
        raise DataValidationError(f"expected schema {BENCH_SCHEMA!r}, got {got!r}",
                                  "pass a report written by `gpuwise bench --json`", path=str(p))
    try:
        report = BenchReport.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise DataValidationError(f"bench report field {'.'.join(map(str, first['loc']))}: {first['msg']}",
                                  "regenerate it with `gpuwise bench --json`", path=str(p)) from None

    cal = Calibration(gpu_name=_device_name(report))
    want_matmul = {f"matmul_{precision}"}
    for m in report.results:
        if m.status != "ok" or m.value is None:
            cal.ignored.append(f"{m.name}: status {m.status}" + (f" ({m.reason})" if m.reason else ""))
            continue
        name = m.name.lower()
        if "mfu" in name or (m.layer == "training" and m.unit in ("%", "fraction")):
            value = m.value / 100.0 if m.unit == "%" or m.value > 1 else m.value
            if 0 < value <= 1:
                cal.training_mfu = value
                cal.used.append(f"{m.name}: training MFU {value:.1%} (used as MFU)")
            else:
                cal.ignored.append(f"{m.name}: MFU {m.value} out of range")
        elif name in want_matmul:
            frac = _fraction(m)
            if frac:
                cal.mamf_fraction = frac
                cal.used.append(f"{m.name}: {frac:.1%} of peak (MFU = this × mfu_over_mamf)")
            else:
                cal.ignored.append(f"{m.name}: no percent_of_peak or peak to compare with")
        elif name.startswith("allreduce") and m.unit.lower().replace(" ", "") in ("gb/s", "gbyte/s"):
            cal.intra_busbw_gb_s = m.value
            cal.used.append(f"{m.name}: {m.value:.1f} GB/s intra-node all-reduce bus bandwidth")
        else:
            cal.ignored.append(f"{m.name}: not used by the planner")
    if not cal.used:
        cal.ignored.append("nothing usable: the report has no ok matmul, all-reduce or training-MFU result")
    return cal
