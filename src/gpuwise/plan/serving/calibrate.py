"""`--calibrate BENCH.json` for non-LLM serving: a measured requests/s per GPU from a bench report.

The result is the one named by `model.bench_result`, else the first ok result whose unit is a rate of
requests, samples or images per second. Its GPU (from the report's environment) is the GPU the
throughput applies to; other GPUs are not given a guessed rate.
"""

from __future__ import annotations

from pathlib import Path

from gpuwise.errors import UserInputError
from gpuwise.i18n import joined, msg
from gpuwise.plan.calibrate import _device_name

RATE_UNITS = ("requests/s", "samples/s", "images/s", "req/s")


def calibrated_throughput(path: str | Path, wanted: str | None) -> tuple[float, str, str]:
    """(requests/s per GPU, GPU name, a note saying what was used)."""
    from gpuwise.bench.report_file import read_bench_report

    report = read_bench_report(path, "--calibrate")
    gpu = _device_name(report)
    if gpu is None:
        raise UserInputError(
            msg(
                "{path}: the bench report names no GPU, so its throughput cannot be tied to an option"
            ).format(path=path),
            msg("run the benchmark on the GPU you plan to serve with and pass that report"),
        )
    for m in report.results:
        if m.status != "ok" or m.value is None or m.value <= 0:
            continue
        if (wanted and m.name == wanted) or (not wanted and m.unit.lower().replace(" ", "") in RATE_UNITS):
            gpus = int((m.params or {}).get("gpus") or 1)
            rate = m.value / gpus
            note = msg("calibrated: {name} = {value} {unit} on {gpu} ({rate} per GPU)").format(
                name=m.name, value=f"{m.value:g}", unit=m.unit, gpu=gpu, rate=f"{rate:g}"
            )
            return rate, gpu, note
    message = (
        msg("{path}: the bench report has no ok result named {name!r}").format(path=path, name=wanted)
        if wanted
        else msg("{path}: the bench report has no ok result in {units}").format(
            path=path, units=joined(", ", RATE_UNITS)
        )
    )
    raise UserInputError(
        message, msg("set model.bench_result to the result's name, or give model.throughput_per_gpu")
    )
