"""The training-spec protocol: what a user's `spec(cfg)` returns, and how gpuwise finds it.

A spec function takes a SpecConfig (device, seed, global batch) and returns a TrainingSpec:

    def spec(cfg):
        model = MyNet()
        return TrainingSpec(
            model=model,
            dataset=MyDataset(),                       # a map-style torch Dataset
            loss=lambda model, batch: F.cross_entropy(model(batch[0]), batch[1]),
            optimizer=lambda params, **kw: torch.optim.AdamW(params, lr=1e-3, **kw),
            checkpoint_blocks=["blocks.0", "blocks.1"],  # modules activation checkpointing may wrap
        )

`loss(model, batch)` gets the batch already on the device; `optimizer(params, **impl)` must pass the
keyword arguments through (the tuner sets `foreach=` or `fused=`). `gpuwise tune my_pkg.train:spec`
imports it; `--workload NAME` picks a reference spec from gpuwise.workloads.reference.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gpuwise.i18n import joined, msg


@dataclass(frozen=True)
class SpecConfig:
    """What gpuwise tells a spec: where it runs, the seed, and the global batch (samples per step)."""

    device: str = "cpu"
    seed: int = 0
    batch_size: int = 32


@dataclass
class TrainingSpec:
    """A model, its data, its loss and an optimizer factory: everything gpuwise needs to own the loop."""

    model: Any  # torch.nn.Module
    dataset: Any  # a map-style torch.utils.data.Dataset of samples the default collate can batch
    loss: Callable[[Any, Any], Any]  # (model, batch on the device) -> scalar loss tensor
    optimizer: Callable[..., Any]  # (params, **impl_kwargs) -> torch.optim.Optimizer
    checkpoint_blocks: list[str] = field(default_factory=list)  # module names checkpointing may wrap
    kind: str = "generic"  # "transformer", "cnn", "mlp" or "generic": which knobs can apply
    tokens_per_sample: int | None = None  # for tokens/s (transformers)
    image_inputs: bool = False  # the first batch element is NCHW images (channels_last applies)


SpecFn = Callable[[SpecConfig], TrainingSpec]


def load_spec(target: str) -> SpecFn:
    """Resolve `--workload NAME` (a reference spec) or `module.path:function` to a spec function."""
    from gpuwise.errors import UserInputError
    from gpuwise.workloads.reference import REFERENCE_SPECS

    if target in REFERENCE_SPECS:
        return REFERENCE_SPECS[target]
    if ":" not in target:
        import difflib

        close = difflib.get_close_matches(target, list(REFERENCE_SPECS), n=1)
        message = (
            msg("unknown workload {target!r} (did you mean {close}?)").format(target=target, close=close[0])
            if close
            else msg("unknown workload {target!r}").format(target=target)
        )
        raise UserInputError(
            message,
            fix=msg("use one of {join}, or point at your own spec as module.path:function").format(
                join=joined(", ", REFERENCE_SPECS)
            ),
        )
    module_name, _colon, attr = target.partition(":")
    import os
    import sys

    if os.getcwd() not in sys.path:  # like `python -m`: the user's package in the current directory
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise UserInputError(
            msg("cannot import {module_name!r} for the spec {target!r}: {exc}").format(
                module_name=module_name, target=target, exc=exc
            ),
            fix=msg("run gpuwise from the directory that holds your package, or pip install it"),
        ) from None
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise UserInputError(
            msg("{module_name} has no function {attr!r}").format(module_name=module_name, attr=attr),
            fix=msg("name a function spec(cfg) -> TrainingSpec"),
        )
    return fn


def build(target: str, cfg: SpecConfig) -> TrainingSpec:
    """Call the spec function and check what it returned."""
    from gpuwise.errors import UserInputError

    spec = load_spec(target)(cfg)
    if not isinstance(spec, TrainingSpec):
        raise UserInputError(
            msg("{target} returned {name}, not a TrainingSpec").format(
                target=target, name=type(spec).__name__
            ),
            fix=msg(
                "return gpuwise.workloads.spec.TrainingSpec(model=..., dataset=..., loss=..., optimizer=...)"
            ),
        )
    return spec
