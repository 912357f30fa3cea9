"""The knob catalogue (data/knobs.yaml) and which values can apply on this machine, with reasons.

A value that cannot run here (TF32 without an Ampere-or-later GPU, NCCL variables without NCCL, DDP
knobs with one process) is skipped with a sentence that says why, never silently dropped.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from gpuwise.i18n import C_, N_, _

DATA = Path(__file__).parent / "data" / "knobs.yaml"
CHANGES_RESULTS = ("precision", "optimisation")  # what --keep-numerics excludes


@dataclass(frozen=True)
class Knob:
    name: str
    category: str
    values: tuple
    numerics: str
    why: str
    source: str
    priority: int
    offered: str = "always"  # always | memory-short (only once a trial ran out of memory or used most of it)
    cost: str = ""  # what the change costs besides numerics (checkpointing: an extra forward), or ""

    @property
    def baseline(self):
        return self.values[0]


@dataclass(frozen=True)
class Machine:
    """What decides applicability: device, GPU compute capability, ranks, workload shape, tools."""

    device: str = "cpu"
    capability: tuple[int, int] | None = None
    world_size: int = 1
    kind: str = "generic"
    image_inputs: bool = False
    checkpoint_blocks: int = 0
    cpu_count: int = 1
    has_compiler: bool = True
    has_torchao: bool = False


@dataclass(frozen=True)
class Skipped:
    knob: str
    value: object
    reason: str


@lru_cache(maxsize=1)
def catalogue() -> tuple[Knob, ...]:
    import yaml

    rows = yaml.safe_load(DATA.read_text(encoding="utf-8"))
    return tuple(
        Knob(
            name=r["name"],
            category=r["category"],
            values=tuple(r["values"]),
            numerics=r["numerics"],
            why=r["why"],
            source=r["source"],
            priority=int(r["priority"]),
            offered=r.get("offered", "always"),
            cost=r.get("cost", ""),
        )
        for r in rows
    )


def detect_machine(spec, device: str, world_size: int) -> Machine:
    """Facts about this machine and this spec that applicability needs (imports torch)."""
    import torch

    return Machine(
        device=device,
        capability=torch.cuda.get_device_capability() if device == "cuda" else None,
        world_size=world_size,
        kind=spec.kind,
        image_inputs=spec.image_inputs,
        checkpoint_blocks=len(spec.checkpoint_blocks),
        cpu_count=os.cpu_count() or 1,
        # inductor compiles C++ on CPU and Triton kernels on CUDA (Triton ships with CUDA torch)
        has_compiler=device == "cuda" or bool(shutil.which(os.environ.get("CXX", "g++"))),
        has_torchao=importlib.util.find_spec("torchao") is not None,
    )


def _cc(m: Machine) -> str:
    if not m.capability:
        return _("no GPU")
    return _("compute capability {cc}").format(cc=f"{m.capability[0]}.{m.capability[1]}")


def numerics_label(effect: str) -> str:
    """A numerics effect (none | rounding | precision | optimisation, the JSON's values) in words."""
    labels = {
        "none": C_("numerics", "none"),
        "rounding": C_("numerics", "rounding"),
        "precision": C_("numerics", "precision"),
        "optimisation": C_("numerics", "optimisation"),
    }
    return labels.get(effect, effect)


def value_skip_reason(knob: Knob, value, m: Machine) -> str | None:
    """Why `value` of `knob` cannot be tried here, or None when it can."""
    cuda, cc = m.device == "cuda", m.capability or (0, 0)
    if knob.category == "ddp" and m.world_size < 2:
        return _("one process: DDP settings need --nproc 2 or more")
    if knob.name == "sharding" and m.world_size < 2:
        return _("one process: sharding splits state across data-parallel ranks, --nproc 2 or more")
    if knob.category == "nccl":
        if not cuda or m.world_size < 2:
            return _("NCCL runs only between GPU ranks (this run uses gloo or one process)")
        return None
    if knob.name == "precision":
        if value == "tf32" and cc < (8, 0):
            return _("TF32 needs an Ampere or later GPU ({gpu})").format(gpu=_cc(m))
        if value == "bf16" and cuda and cc < (8, 0):
            return _("bf16 tensor cores need compute capability 8.0 ({gpu})").format(gpu=_cc(m))
        if value == "fp16" and not cuda:
            return _(
                "fp16 autocast with a GradScaler is for CUDA tensor cores; CPUs have no fast fp16 matmul"
            )
        if value == "fp8" and (cc < (8, 9) or not m.has_torchao):
            return _(
                "FP8 training needs compute capability 8.9 or later ({gpu}) and torchao installed"
            ).format(gpu=_cc(m))
    if knob.name == "compile" and value != "off":
        if not m.has_compiler:
            return _("torch.compile on CPU needs a C++ compiler (g++), which is not installed")
        if value == "reduce-overhead" and not cuda:
            return _("reduce-overhead uses CUDA Graphs; on CPU it is the default mode")
    if knob.name == "channels_last" and value and not m.image_inputs:
        return _("the workload has no image (NCHW) inputs")
    if knob.name == "cudnn_benchmark" and value and (not cuda or m.kind != "cnn"):
        return _("cuDNN benchmark picks convolution algorithms on CUDA; no convolutions on a GPU here")
    if knob.name == "checkpointing" and value and not m.checkpoint_blocks:
        return _("the spec marks no checkpoint_blocks")
    if knob.name == "pin_memory" and value and not cuda:
        return _("pinned memory speeds host-to-GPU copies; there is no GPU")
    if knob.name == "num_workers" and value > max(4, 2 * m.cpu_count):
        return _("more loader workers than twice the {cpus} CPU cores").format(cpus=m.cpu_count)
    if knob.name == "optimizer_impl" and value == "fused" and not cuda:
        return None  # fused AdamW has a CPU kernel since torch 2.4
    return None


MEMORY_SHORT_REASON = N_("offered only when memory is short (a trial ran out of memory or used most of it)")


def search_space(
    m: Machine, keep_numerics: bool, memory_short: bool = False
) -> tuple[dict[str, tuple], list[Skipped]]:
    """{knob name: values to try (baseline first)} and what was left out with why. Knobs offered only
    when memory is short (sharding) are in the space only with `memory_short`."""
    space: dict[str, tuple] = {}
    skipped: list[Skipped] = []
    for knob in catalogue():
        if knob.offered == "memory-short" and not memory_short:
            skipped.append(Skipped(knob.name, "*", _(MEMORY_SHORT_REASON)))
            continue
        if keep_numerics and knob.numerics in CHANGES_RESULTS:
            why = _("--keep-numerics: it changes results ({why})").format(why=_(knob.why))
            skipped.append(Skipped(knob.name, "*", why))
            continue
        values = []
        for value in knob.values:
            reason = value_skip_reason(knob, value, m) if value != knob.baseline else None
            if knob.category in ("ddp", "nccl") and value == knob.baseline:
                reason = value_skip_reason(knob, value, m)
            if reason:
                skipped.append(Skipped(knob.name, value, reason))
            else:
                values.append(value)
        if len(values) > 1:
            space[knob.name] = tuple(values)
    return space, skipped


def by_name() -> dict[str, Knob]:
    return {k.name: k for k in catalogue()}


def numerics_of(params: dict) -> str:
    """The strongest numerics effect among the non-baseline values in `params`."""
    order = ["none", "rounding", "precision", "optimisation"]
    knobs = by_name()
    worst = "none"
    for name, value in params.items():
        knob = knobs.get(name)
        if knob and value != knob.baseline and order.index(knob.numerics) > order.index(worst):
            worst = knob.numerics
    return worst


def to_settings(params: dict):
    """Turn knob values into LoopSettings (environment knobs go to settings.env)."""
    from gpuwise.workloads.loop import LoopSettings

    fields = {k: v for k, v in params.items() if not k.isupper()}
    env = {k: str(v) for k, v in params.items() if k.isupper() and v != "default"}
    return LoopSettings(**fields, env=env)
