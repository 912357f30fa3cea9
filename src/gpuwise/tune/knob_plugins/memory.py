"""Activation checkpointing, sharding (ZeRO-1, FSDP) and gradient accumulation: less memory per step."""

from __future__ import annotations

from gpuwise.i18n import msg
from gpuwise.tune.knob_plugins import KnobCode


def _checkpointing_python(value, device: str, batch_size: int) -> list[str]:
    if not value:
        return []
    call = "torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)"
    return [msg("# wrap each marked block: {call}").format(call=call)]


def _accumulation_python(value, device: str, batch_size: int) -> list[str]:
    if not value or value <= 1:
        return []
    return [
        msg(
            "# gradient accumulation: {accum} micro-batches of {micro} per optimizer step "
            "(global batch {batch}); divide each micro-batch loss by {accum}"
        ).format(accum=value, micro=batch_size // value, batch=batch_size)
    ]


CHECKPOINTING = KnobCode(
    name="checkpointing",
    skip=lambda value, m: (
        msg("the spec marks no checkpoint_blocks") if value and not m.checkpoint_blocks else None
    ),
    python=_checkpointing_python,
    order=40,
)
SHARDING = KnobCode(
    name="sharding",
    skip=lambda value, m: (
        msg("one process: sharding splits state across data-parallel ranks, --nproc 2 or more")
        if m.world_size < 2
        else None
    ),
)
ACCUMULATION = KnobCode(name="accumulation", python=_accumulation_python, order=100)
