"""Is a GPU under load? Decided from all the evidence a probe has, never from one field.

Drivers disagree on the "GPU Idle" clock-event reason (a Blackwell card on driver 570 reports it
Not Active while sitting in P8 at 0% and 22 MHz), so each piece of evidence votes:
- idle: the gpu_idle reason, a low-power performance state (P5 and above), utilisation at or below
  the idle threshold, no compute process, SM clock below half its maximum;
- busy: utilisation at or above the busy threshold; compute processes holding the GPU when the
  utilisation is unknown (a process can hold a GPU it is not using).
Busy needs a busy vote and no idle vote; idle the reverse; both is "conflicting" (rules then stay at
info and say how to re-check under load); neither is "unknown". P0 is no evidence either way:
datacenter GPUs with persistence on sit in P0 at idle. Thresholds: advise/data/thresholds.yaml.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from gpuwise.facts.models import Gpu
from gpuwise.i18n import joined

LoadState = Literal["busy", "idle", "conflicting", "unknown"]


@dataclass(frozen=True)
class GpuLoad:
    state: LoadState
    idle: list[tuple[str, object]] = field(default_factory=list)  # evidence (fact path, value)
    busy: list[tuple[str, object]] = field(default_factory=list)

    def evidence(self) -> list[tuple[str, object]]:
        return self.busy + self.idle

    def decided_by(self) -> str:
        """Which evidence decided, for the finding's text."""
        names = [path.rsplit(".", 1)[-1] for path, _ in (self.busy if self.state == "busy" else self.idle)]
        return joined(", ", names) or "no evidence"


def gpu_load(path: str, g: Gpu, thresholds: dict) -> GpuLoad:
    """`thresholds`: idle_reason_names, idle_pstate_min, idle_util_max_percent, busy_util_min_percent,
    idle_clock_fraction_max (all from thresholds.yaml)."""
    idle: list[tuple[str, object]] = []
    busy: list[tuple[str, object]] = []
    if g.clock_event_reasons is not None and any(
        r in thresholds["idle_reason_names"] for r in g.clock_event_reasons
    ):
        idle.append((f"{path}.clock_event_reasons", g.clock_event_reasons))
    pstate = _pstate_number(g.performance_state)
    if pstate is not None and pstate >= thresholds["idle_pstate_min"]:
        idle.append((f"{path}.performance_state", g.performance_state))
    util = g.utilization_gpu_percent
    if util is not None and util <= thresholds["idle_util_max_percent"]:
        idle.append((f"{path}.utilization_gpu_percent", util))
    elif util is not None and util >= thresholds["busy_util_min_percent"]:
        busy.append((f"{path}.utilization_gpu_percent", util))
    if g.process_count == 0:
        idle.append((f"{path}.process_count", 0))
    elif g.process_count and util is None:  # a process holding an unused GPU does not load its link
        busy.append((f"{path}.process_count", g.process_count))
    clock, clock_max = g.sm_clock_mhz, g.sm_clock_max_mhz
    if clock is not None and clock_max and clock < thresholds["idle_clock_fraction_max"] * clock_max:
        idle.append((f"{path}.sm_clock_mhz/max", f"{g.sm_clock_mhz} / {g.sm_clock_max_mhz} MHz"))
    if busy and idle:
        state: LoadState = "conflicting"
    elif busy:
        state = "busy"
    elif idle:
        state = "idle"
    else:
        state = "unknown"
    return GpuLoad(state, idle, busy)


def _pstate_number(text: str | None) -> int | None:
    if not text or not text.strip().upper().startswith("P"):
        return None
    digits = text.strip()[1:]
    return int(digits) if digits.isdigit() else None
