"""The diagnostic layers: one vocabulary for facts (probe), findings (doctor) and the CLI's --layer.

The lowest module of all (no imports from gpuwise), so every other layer can use it.
"""

from __future__ import annotations

from typing import Literal, get_args

# The order is also the ranking order of findings (first = most important).
Layer = Literal[
    "hardware",
    "driver-cuda",
    "network",
    "storage",
    "isolation",
    "monitoring",
    "toolchain",
    "kernel",
    "framework",
]
LAYER_ORDER: tuple[str, ...] = get_args(Layer)

# The layers probe shows and the Facts fields each one holds. `framework` is judged by doctor from
# benchmarks and settings of a training run, so probe has no facts for it.
PROBE_LAYERS: dict[str, tuple[str, ...]] = {
    "hardware": ("gpus", "gpu_probe", "topology", "cpu", "memory", "evidence"),
    "driver-cuda": ("software",),
    "network": ("network", "evidence"),
    "storage": ("storage",),
    "isolation": ("platform",),
    "monitoring": ("monitoring",),
    "toolchain": ("software",),
    "kernel": ("kernel", "evidence"),
}
assert set(PROBE_LAYERS) <= set(LAYER_ORDER)
