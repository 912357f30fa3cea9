"""`doctor --nccl-log FILE`: read nccl-tests outputs and NCCL_DEBUG=INFO logs the user recorded.

Each file is sorted by what it holds: nccl-tests results become `collective` Measurements (judged
against the link peak like gpuwise's own benchmark), NCCL debug lines become an NcclDebugLog. A file
may hold both (nccl-tests run with NCCL_DEBUG=INFO); one holding neither is an error.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from gpuwise.bench.nccl_debug import NcclDebugLog, looks_like_nccl_debug, parse_nccl_debug
from gpuwise.bench.nccl_tests import looks_like_nccl_tests, parse, to_measurement
from gpuwise.datafiles import read_input_bytes
from gpuwise.documents.bench import BenchReport, Measurement
from gpuwise.errors import UserInputError
from gpuwise.facts.paste import unpaste
from gpuwise.i18n import N_, msg

# nccl-tests' banner and rank lines, with or without their '#'
_BANNER = re.compile(r"nThread \d+ nGpus \d+|^\s*#?\s*Rank\s+\d+\s+(?:Group\s+\d+\s+)?Pid\s+\d+", re.M)
MAX_LOG_BYTES = 64 * 1024 * 1024  # NCCL TRACE logs of long jobs can be large; INFO logs are far smaller
HOW = N_(
    "pass the stdout of an nccl-tests binary (e.g. all_reduce_perf -b 8 -e 8G -f 2 -g 8), its -J JSON, "
    "or the log of a run with NCCL_DEBUG=INFO"
)


def _read(path: Path) -> str:
    try:
        if path.stat().st_size > MAX_LOG_BYTES:
            raise UserInputError(
                msg("--nccl-log {path}: larger than {value} MiB").format(
                    path=path, value=MAX_LOG_BYTES >> 20
                ),
                msg("pass an INFO-level log (not TRACE), or cut it to the run you want judged"),
            )
        # regular files only (a FIFO named like a log would block doctor forever), within the input cap
        return read_input_bytes(path, N_("NCCL log")).decode("utf-8", errors="replace")
    except OSError as exc:
        raise UserInputError(
            msg("--nccl-log {path}: cannot read it ({value})").format(path=path, value=exc.strerror or exc),
            msg(HOW),
        ) from None


def read_nccl_files(paths: list[Path]) -> tuple[list[Measurement], list[NcclDebugLog]]:
    """(nccl-tests measurements, NCCL debug logs) from the files; UserInputError for a file that is neither."""
    measurements, logs = [], []
    for path in paths:
        found = read_nccl_text(_read(Path(path)), Path(path), "--nccl-log")
        if found is None:
            raise UserInputError(
                msg("--nccl-log {path}: neither nccl-tests results nor NCCL debug lines found").format(
                    path=path
                ),
                msg(HOW),
            )
        measurements += found[0]
        logs += found[1]
    return measurements, logs


def read_nccl_text(text: str, path: Path, option: str) -> tuple[list[Measurement], list[NcclDebugLog]] | None:
    """What one file holds of nccl-tests results and NCCL debug lines; None when it holds neither.

    A table with no result rows (the banner and rank lines only, or a header with nothing under it) is an
    error that says so, not a silent nothing."""
    from gpuwise.bench.runner import judge

    text = unpaste(text)
    measurements, logs = [], []
    is_table = looks_like_nccl_tests(text)
    banner = is_table or bool(_BANNER.search(text))
    if is_table:
        try:
            run = parse(text, path.name)
        except (ValueError, json.JSONDecodeError) as exc:
            raise UserInputError(
                msg("{option} {path}: not readable as nccl-tests output ({exc})").format(
                    option=option, path=path, exc=exc
                ),
                msg(HOW),
            ) from None
        if run.rows:
            measurements.append(judge(to_measurement(run, path.name)))
    if looks_like_nccl_debug(text):
        log = parse_nccl_debug(text, path.name)
        if (
            log.networks
            or log.transports
            or log.warnings
            or log.env
            or log.version
            or log.algorithms
            or log.ranks
            or log.ofi_provider
        ):
            logs.append(log)
    if banner and not measurements and not logs:
        raise UserInputError(
            msg(
                "{option} {path}: an nccl-tests output with no result rows (only its banner, rank lines or "
                "column header)"
            ).format(option=option, path=path),
            msg("paste the whole output, including the rows under the '# size count type' header"),
        )
    return (measurements, logs) if measurements or logs else None


def merge_into(bench: BenchReport | None, measurements: list[Measurement]) -> BenchReport | None:
    """The bench report doctor judges, with the nccl-tests results added (a new one when none was given)."""
    if not measurements:
        return bench
    report = bench.model_copy(deep=True) if bench is not None else BenchReport(mode="nccl-tests")
    report.results.extend(measurements)
    return report
