"""Data loading: a torch DataLoader reading sample files this benchmark writes into the data directory,
across num_workers (and pin_memory on GPU machines). Reports samples/s and the worker count that
saturates (the fewest workers within 5% of the best).

Each sample is a raw 3x128x128 uint8 image file; a worker reads it, turns it into a normalized
float tensor and flips half of them, roughly the per-sample work of a light image pipeline. The
files were just written, so they are in the page cache: this measures the loader pipeline, not the
disk (the storage benchmark measures the disk).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from gpuwise.bench.context import BenchContext
from gpuwise.bench.registry import BenchInfo
from gpuwise.bench.timing import stats_from
from gpuwise.documents.bench import Measurement, PeakSource
from gpuwise.errors import UserInputError
from gpuwise.i18n import N_, msg

BENCHMARK = BenchInfo(
    name="dataloader",
    layer="dataloader",
    title=N_("Data loading"),
    help=N_("torch DataLoader samples/s across num_workers, reading files in --data-dir"),
    order=70,
    quick_timeout_s=90,
    full_timeout_s=900,
    aliases=("data",),
)

SATURATION = 0.95  # "saturated" = within 5% of the best samples/s


@dataclass(frozen=True)
class Spec:
    directory: str
    samples: int = 256
    image_hw: int = 128
    batch_size: int = 32
    workers: tuple[int, ...] = (0, 1, 2)
    pin_memory: tuple[bool, ...] = (False,)
    epochs: int = 2


def _worker_counts(cpus: int, full: bool) -> tuple[int, ...]:
    limit = min(32, 2 * cpus) if full else min(4, max(2, cpus))
    counts, w = [0, 1], 2
    while w <= limit:
        counts.append(w)
        w *= 2
    return tuple(counts)


def make_spec(ctx: BenchContext) -> Spec:
    directory = ctx.options.data_dir or tempfile.gettempdir()
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    pins = (False, True) if ctx.device == "cuda" else (False,)
    if ctx.mode == "full":
        return Spec(directory, samples=4096, workers=_worker_counts(cpus, True), pin_memory=pins, epochs=3)
    return Spec(directory, workers=_worker_counts(cpus, False), pin_memory=pins)


class SampleFiles:
    """A map-style Dataset over raw image files (module level so DataLoader workers can pickle it)."""

    def __init__(self, paths: list[str], hw: int):
        self.paths, self.hw = paths, hw

    def __len__(self) -> int:
        return len(self.paths)

    def __getitem__(self, i: int):
        import torch

        with open(self.paths[i], "rb") as fh:
            raw = bytearray(fh.read())
        img = torch.frombuffer(raw, dtype=torch.uint8).view(3, self.hw, self.hw).float().div_(255.0)
        img = (img - 0.5) / 0.25
        if i % 2:
            img = img.flip(-1)
        return img, i % 10


def write_samples(workdir: Path, spec: Spec) -> list[str]:
    nbytes = 3 * spec.image_hw * spec.image_hw
    paths = []
    for i in range(spec.samples):
        path = workdir / f"sample_{i:06d}.raw"
        path.write_bytes(os.urandom(nbytes))
        paths.append(str(path))
    return paths


def epoch_rate(loader, device: str, batch_size: int) -> float:
    """samples/s over one epoch, from the first batch on (worker start-up is not loading throughput)."""
    it = iter(loader)
    first = next(it)
    start, n = time.perf_counter(), 0
    for images, _labels in it:
        if device == "cuda":
            images.to("cuda", non_blocking=True)
        n += images.shape[0]
    if device == "cuda":
        import torch

        torch.cuda.synchronize()
    del first
    return n / max(time.perf_counter() - start, 1e-9)


def run(ctx: BenchContext, spec: Spec) -> list[Measurement]:
    from gpuwise.bench import require_torch

    require_torch()
    from torch.utils.data import DataLoader

    base = Path(spec.directory)
    if not base.is_dir() or not os.access(base, os.W_OK):
        raise UserInputError(
            msg("data directory {base} does not exist or is not writable").format(base=base),
            fix=msg("pass --data-dir with a writable directory"),
        )
    workdir = Path(tempfile.mkdtemp(prefix="gpuwise-dataloader-", dir=ctx.scratch_dir or base))
    try:
        ctx.say(msg("writing {n} sample files").format(n=spec.samples))
        dataset = SampleFiles(write_samples(workdir, spec), spec.image_hw)
        table = []
        for pin in spec.pin_memory:
            for workers in spec.workers:
                ctx.say(f"DataLoader num_workers={workers} pin_memory={pin}")
                loader = DataLoader(
                    dataset,
                    batch_size=spec.batch_size,
                    shuffle=True,
                    num_workers=workers,
                    pin_memory=pin,
                    persistent_workers=workers > 0,
                )
                rates = [epoch_rate(loader, ctx.device, spec.batch_size) for _epoch in range(spec.epochs)]
                del loader
                table.append({"num_workers": workers, "pin_memory": pin, "samples_per_s": rates})
        return [_measurement(ctx, spec, table, pin) for pin in spec.pin_memory]
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _measurement(ctx: BenchContext, spec: Spec, table: list[dict], pin: bool) -> Measurement:
    rows = [r for r in table if r["pin_memory"] == pin]
    medians = {
        r["num_workers"]: stats_from(r["samples_per_s"], of=f"num_workers={r['num_workers']}") for r in rows
    }
    best_workers = max(medians, key=lambda w: medians[w].median)
    best = medians[best_workers]
    saturating = min(w for w, s in medians.items() if s.median >= SATURATION * best.median)
    return Measurement(
        name="dataloader_samples_per_s" + ("_pinned" if pin else ""),
        layer="dataloader",
        unit="samples/s",
        stats=best,
        device=ctx.device,
        peak_source=PeakSource(kind="none", text=msg("no peak: loader throughput has no physical peak")),
        params={
            "samples": spec.samples,
            "sample_bytes": 3 * spec.image_hw**2,
            "batch_size": spec.batch_size,
            "pin_memory": pin,
            "workers_tried": list(spec.workers),
            "epochs": spec.epochs,
            "note": "files are in the page cache: this measures the loader, not the disk",
        },
        extra={
            "best_workers": best_workers,
            "saturating_workers": saturating,
            "table": [
                {"num_workers": w, "samples_per_s_median": round(s.median, 1)} for w, s in medians.items()
            ],
        },
    )
