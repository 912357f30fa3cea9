"""Timing loops shared by every benchmark: warm up, calibrate, then time repeats.

The shape follows mamf-finder and nccl-tests: a few untimed warm-up calls, then `repeats` samples,
each timing `inner` back-to-back calls so one sample lasts long enough (`target_sample_s`) for the
timer's own cost to vanish. On CUDA the samples come from CUDA events on the current stream (what
the GPU did, not what the host waited for); elsewhere from `time.perf_counter` after a sync.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

from gpuwise.documents.bench import Stats


@dataclass(frozen=True)
class Timed:
    """Seconds per call for each timed repeat, and how the loop was run."""

    seconds: list[float]
    inner: int
    warmup: int

    def stats_of(self, per_second: Callable[[float], float], of: str | None = None) -> Stats:
        """Turn the per-call times into a rate (e.g. bytes/s) and summarize it."""
        return stats_from([per_second(s) for s in self.seconds], warmup=self.warmup, of=of)

    @property
    def median_s(self) -> float:
        return statistics.median(self.seconds)


def stats_from(values: list[float], warmup: int = 0, of: str | None = None) -> Stats:
    """Median, min and max of a non-empty list of samples; `of` names the set when there are several."""
    if not values:
        raise ValueError("no samples to summarize")
    return Stats(
        median=statistics.median(values),
        min=min(values),
        max=max(values),
        repeats=len(values),
        warmup=warmup,
        of=of,
    )


def _cuda_timer(torch):
    def timed(fn: Callable[[], object], inner: int) -> float:
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(inner):
            fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1000.0 / inner

    return timed


def _host_timer(sync: Callable[[], None]):
    def timed(fn: Callable[[], object], inner: int) -> float:
        sync()
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        sync()
        return (time.perf_counter() - start) / inner

    return timed


def measure(
    fn: Callable[[], object],
    *,
    device: str = "cpu",
    warmup: int = 3,
    repeats: int = 5,
    target_sample_s: float = 0.05,
    max_inner: int = 10_000,
    sync: Callable[[], None] | None = None,
    warmup_s: float = 0.0,
) -> Timed:
    """Time `fn`: `warmup` untimed calls, then `repeats` samples of `inner` calls each.

    device: "cuda" uses CUDA events on the current device (single-device work). Anything else uses
    the host clock around `sync()` (pass a sync for multi-device or asynchronous work).
    warmup_s: keep warming up until this many seconds have passed (GPU clock ramp-up).
    """
    if device == "cuda" and sync is None:
        import torch

        timer = _cuda_timer(torch)
    else:
        timer = _host_timer(sync or (lambda: None))
    for _ in range(warmup):
        fn()
    # GPUs idle at a low clock and take a while to boost: warm up for a minimum time too, or the first
    # samples run below the clock the rest of the job will see.
    deadline = time.perf_counter() + warmup_s
    while time.perf_counter() < deadline:
        timer(fn, max(1, warmup))
    # one calibration sample decides how many calls make a sample long enough to time well
    first = timer(fn, 1)
    inner = 1 if first <= 0 else max(1, min(max_inner, math.ceil(target_sample_s / first)))
    seconds = [timer(fn, inner) for _ in range(repeats)]
    return Timed(seconds=seconds, inner=inner, warmup=warmup + 1)
