"""DataLoader settings: workers, pinned memory, prefetching, persistent workers (one DataLoader line)."""

from __future__ import annotations

from gpuwise.i18n import msg
from gpuwise.tune.knob_plugins import KnobCode

CALL = "loader = DataLoader(dataset, batch_size=..., {args})"


def _workers_skip(value, m) -> str | None:
    if value > max(4, 2 * m.cpu_count):
        return msg("more loader workers than twice the {cpus} CPU cores").format(cpus=m.cpu_count)
    return None


NUM_WORKERS = KnobCode(name="num_workers", skip=_workers_skip, argument_of=CALL, order=90)
PIN_MEMORY = KnobCode(
    name="pin_memory",
    skip=lambda value, m: (
        msg("pinned memory speeds host-to-GPU copies; there is no GPU")
        if value and m.device != "cuda"
        else None
    ),
    argument_of=CALL,
    order=91,
)
PREFETCH_FACTOR = KnobCode(name="prefetch_factor", argument_of=CALL, order=92)
PERSISTENT_WORKERS = KnobCode(name="persistent_workers", argument_of=CALL, order=93)
