"""The benchmark run with a Rich progress bar on stderr, shared by `gpuwise bench` and `doctor --bench quick`."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpuwise.bench.context import BenchOptions
    from gpuwise.documents.bench import BenchReport


def run_bench_with_progress(
    options: BenchOptions, only: str | None, count: int, stop_on_failure: bool = False
) -> BenchReport:
    """Run the selected benchmarks (`count` of them) and show which one is running, so minutes of
    measuring are not silent. The bar is transient: it is gone when the results print.
    `stop_on_failure`: the first failed benchmark ends the run (`gpuwise bench` without --keep-going)."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    from gpuwise.bench.runner import bench as run_bench

    # markup=False: progress text comes from benchmarks (paths, device names) and must print literally;
    # a '[/x]' in it would raise inside Rich's refresh thread
    columns = (
        SpinnerColumn(),
        TextColumn("{task.description}", style="bold", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task("starting (importing torch)", total=count)
        return run_bench(
            options,
            only,
            progress=lambda name, text: progress.update(task, description=f"{name}: {text}"[:90]),
            on_done=lambda entry, results: progress.advance(task),
            **({"stop_on_failure": True} if stop_on_failure else {}),  # tests fake bench() without it
        )
