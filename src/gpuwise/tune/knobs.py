"""The knob catalogue (data/knobs.yaml) and which values can apply on this machine, with reasons.

A value that cannot run here (TF32 without an Ampere-or-later GPU, NCCL variables without NCCL, DDP
knobs with one process) is skipped with a sentence that says why, never silently dropped. Each knob's
reason is its own code's (tune/knob_plugins/, one KnobCode per row of knobs.yaml).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from gpuwise.i18n import N_, cmsg, msg
from gpuwise.registry import Registry
from gpuwise.tune.knob_plugins import KNOB_CODE, KnobCode

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


@lru_cache(maxsize=4)
def catalogue(path: Path = DATA) -> tuple[Knob, ...]:
    """The knobs of a knobs.yaml (default: gpuwise's own)."""
    import yaml

    rows = yaml.safe_load(path.read_text(encoding="utf-8"))
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


def numerics_label(effect: str) -> str:
    """A numerics effect (none | rounding | precision | optimisation, the JSON's values) in words."""
    labels = {
        "none": cmsg("numerics", "none"),
        "rounding": cmsg("numerics", "rounding"),
        "precision": cmsg("numerics", "precision"),
        "optimisation": cmsg("numerics", "optimisation"),
    }
    return labels.get(effect, effect)


MEMORY_SHORT_REASON = N_("offered only when memory is short (a trial ran out of memory or used most of it)")


def code_of(knob: Knob, registry: Registry[KnobCode] | None = None) -> KnobCode:
    """The knob's code (tune/knob_plugins/); every row of knobs.yaml has one."""
    code = (registry if registry is not None else KNOB_CODE).find(knob.name)
    if code is None:
        raise ValueError(f"knob {knob.name!r} of knobs.yaml has no KnobCode in gpuwise/tune/knob_plugins/")
    return code


def search_space(
    m: Machine,
    keep_numerics: bool,
    memory_short: bool = False,
    knobs: tuple[Knob, ...] | None = None,
    code: Registry[KnobCode] | None = None,
) -> tuple[dict[str, tuple], list[Skipped]]:
    """{knob name: values to try (baseline first)} and what was left out with why. Knobs offered only
    when memory is short (sharding) are in the space only with `memory_short`. `knobs` and `code`:
    the rows and their code (default: knobs.yaml and tune/knob_plugins/)."""
    space: dict[str, tuple] = {}
    skipped: list[Skipped] = []
    for knob in knobs if knobs is not None else catalogue():
        knob_code = code_of(knob, code)
        if knob.offered == "memory-short" and not memory_short:
            skipped.append(Skipped(knob.name, "*", msg(MEMORY_SHORT_REASON)))
            continue
        if keep_numerics and knob.numerics in CHANGES_RESULTS:
            why = msg("--keep-numerics: it changes results ({why})").format(why=msg(knob.why))
            skipped.append(Skipped(knob.name, "*", why))
            continue
        values = []
        for value in knob.values:
            reason = knob_code.skip_reason(value, m, knob.baseline)
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

    knobs = by_name()
    is_env = {k: k in knobs and code_of(knobs[k]).env for k in params}
    fields = {k: v for k, v in params.items() if not is_env[k]}
    env = {k: str(v) for k, v in params.items() if is_env[k] and v != "default"}
    return LoopSettings(**fields, env=env)
