"""What each tune knob does in code: one module per group of knobs here, each declaring `KnobCode(...)`s.

A knob is a row of tune/data/knobs.yaml (its values, numerics effect, why and source) plus its
`KnobCode` here: why a value cannot run on this machine (`skip`), whether it is an environment variable,
and the lines of the paste-ready snippet (`python`, or `argument_of`: a keyword of one call that several
knobs share, such as DataLoader's). The registry `KNOB_CODE` collects every KnobCode of every module
here; tune/knobs.py (`search_space`) and tune/snippet.py read it, so neither checks knob names.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gpuwise.registry import Registry

if TYPE_CHECKING:
    from gpuwise.tune.knobs import Machine

SkipFn = Callable[[Any, "Machine"], "str | None"]  # (value, machine) -> why it cannot run here, or None
PythonFn = Callable[[Any, str, int], list[str]]  # (value, device, batch size) -> snippet lines


@dataclass(frozen=True)
class KnobCode:
    name: str  # the knob's name in knobs.yaml
    skip: SkipFn | None = None
    check_baseline: bool = False  # `skip` also applies to the baseline value: then the whole knob is left out
    env: bool = False  # an environment variable (exported to the trial), not a LoopSettings field
    python: PythonFn | None = None  # the snippet's lines for a non-baseline value
    argument_of: str | None = None  # or: a keyword of this shared call line ("... {args})"), merged in order
    order: int = 100  # where its lines (or its shared call) go in the snippet, lowest first

    def skip_reason(self, value, m: Machine, baseline) -> str | None:
        if self.skip is None or (value == baseline and not self.check_baseline):
            return None
        return self.skip(value, m)


KNOB_CODE: Registry[KnobCode] = Registry(
    "tune knob", packages=(__name__,), item_type=KnobCode, order=lambda k: (k.order, k.name)
)
