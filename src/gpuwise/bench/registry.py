"""The one table of benchmarks. Each row names a module with `Spec`, `make_spec(ctx)` and `run(ctx, spec)`.

Order is run order: cheap, informative layers first. Timeouts are per benchmark and per mode; they
bound a hang, they are not the expected duration (`gpuwise bench --quick` took 26-45 s on the 2-core
test VM in five runs, and 64 s once while other test suites loaded it).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType


@dataclass(frozen=True)
class BenchEntry:
    name: str  # what --only accepts
    layer: str  # Measurement.layer
    module: str
    title: str
    quick_timeout_s: float
    full_timeout_s: float

    def timeout_s(self, mode: str) -> float:
        return self.full_timeout_s if mode == "full" else self.quick_timeout_s

    def load(self) -> ModuleType:
        return importlib.import_module(self.module)


REGISTRY: tuple[BenchEntry, ...] = (
    BenchEntry("compute", "compute", "gpuwise.bench.compute", "Compute (matmul)", 120, 3600),
    BenchEntry("memory", "memory", "gpuwise.bench.memory", "Memory bandwidth", 60, 600),
    BenchEntry("host-device", "host-device", "gpuwise.bench.host_device", "Host <-> device copies", 60, 600),
    BenchEntry("gpu-gpu", "gpu-gpu", "gpuwise.bench.p2p", "GPU <-> GPU peer copies", 120, 1200),
    BenchEntry(
        "collective", "collective", "gpuwise.bench.collective", "Collectives (torch.distributed)", 120, 1800
    ),
    BenchEntry("storage", "storage", "gpuwise.bench.storage", "Storage (fio)", 90, 900),
    BenchEntry(
        "dataloader", "dataloader", "gpuwise.bench.dataloader", "Data loading (torch DataLoader)", 90, 900
    ),
    BenchEntry("training", "training", "gpuwise.bench.training", "Training step", 120, 1200),
)

_ALIASES = {
    "host_device": "host-device",
    "h2d": "host-device",
    "p2p": "gpu-gpu",
    "gpu_gpu": "gpu-gpu",
    "collectives": "collective",
    "nccl": "collective",
    "fio": "storage",
    "data": "dataloader",
    "train": "training",
    "matmul": "compute",
}


def select(only: str | None) -> list[BenchEntry]:
    """The entries named in a comma list (names, layers or aliases), in registry order; all when empty."""
    if not only:
        return list(REGISTRY)
    known = {e.name: e for e in REGISTRY}
    wanted = set()
    for raw in only.split(","):
        key = raw.strip().lower()
        if not key:
            continue
        key = _ALIASES.get(key, key)
        if key not in known:
            import difflib

            from gpuwise.errors import UserInputError

            close = difflib.get_close_matches(key, list(known), n=1)
            hint = f" Did you mean '{close[0]}'?" if close else ""
            raise UserInputError(
                f"unknown benchmark '{raw.strip()}'.{hint}",
                fix=f"use --only with some of: {', '.join(known)}",
            )
        wanted.add(key)
    return [e for e in REGISTRY if e.name in wanted]
