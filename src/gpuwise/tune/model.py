"""What a tune run returns: the trials, the baseline, the winner (or none) and why. JSON: TUNE_SCHEMA."""

from __future__ import annotations

import math
from typing import Literal

from pydantic import Field

from gpuwise.documents.ids import TUNE_SCHEMA
from gpuwise.textmodel import TextModel


class TrialRecord(TextModel):
    number: int
    role: Literal[
        "baseline", "baseline-end", "probe", "search", "neighbour", "repeat", "reduction"
    ]  # neighbour: of the best, see policy; reduction: the winner without one change (see reduce.py)
    changes: dict[str, object] = Field(
        default_factory=dict, description="knob values that differ from the baseline"
    )
    status: Literal["ok", "failed", "skipped", "pruned", "unreliable"]
    failure: str | None = None
    reason: str | None = None
    samples_per_s: float | None = None
    samples_per_s_low: float | None = None
    samples_per_s_high: float | None = None
    tokens_per_s: float | None = None
    speedup: float | None = None
    speedup_low: float | None = None
    speedup_high: float | None = None
    timed_steps: int = 0
    data_wait_fraction: float | None = None
    peak_memory_bytes: int | None = None
    memory_kind: str | None = None
    numerics: str = "none"
    guard_max_rel_diff: float | None = None
    guard_tolerance: float | None = None
    guard_ok: bool | None = None
    beats_baseline: bool = False
    wall_s: float = 0.0
    dropped: str | None = Field(None, description="reduction: the change set back to its baseline value")
    ignored_lines: int = Field(
        0, description="progress lines ignored: not finite/positive, or over the size cap"
    )


class Contribution(TextModel):
    """What one change of the winner is worth: how much faster the setting is with it than without."""

    knob: str
    value: object = None
    kept: bool
    why: Literal["measured", "removal-failed", "only-change"]
    trial: int = Field(description="the trial that measured the setting without it (or the change alone)")
    speedup: float | None = None
    speedup_low: float | None = None
    speedup_high: float | None = None


class KnobVerdict(TextModel):
    knob: str
    outcome: Literal["gain", "within-noise", "failed", "pruned", "unreliable", "skipped", "held", "not-tried"]
    detail: str = ""


class SkippedKnob(TextModel):
    knob: str
    value: str
    reason: str


class TuneResult(TextModel):
    schema_: str = Field(TUNE_SCHEMA, alias="schema")
    workload: str
    device: str
    batch_size: int
    nproc: int = 1
    warmup_steps: int
    timed_steps: int
    study: str
    storage: str
    keep_numerics: bool
    search_order: list[str] = Field(default_factory=list, description="knob categories, first searched first")
    order_reason: str = ""
    memory_short: str | None = Field(None, description="why sharding was offered (a trial short of memory)")
    baseline_samples_per_s: float | None = None
    baseline_drift: float | None = None
    trials: list[TrialRecord] = Field(default_factory=list)
    skipped: list[SkippedKnob] = Field(default_factory=list)
    held: str | None = Field(None, description="why compute-side knobs waited for data loading")
    winner: int | None = None
    reduced_from: int | None = Field(None, description="the search's winner that the recommendation reduces")
    contributions: list[Contribution] = Field(default_factory=list)
    knobs: list[KnobVerdict] = Field(default_factory=list, description="per knob: why it won or did not")
    verdict: str = ""
    best_changes: dict[str, object] = Field(default_factory=dict)
    snippet_python: list[str] = Field(default_factory=list)
    snippet_env: list[str] = Field(default_factory=list)
    snippet_yaml: list[str] = Field(default_factory=list)
    sources: dict[str, str] = Field(default_factory=dict, description="knob -> documentation URL")

    model_config = {"populate_by_name": True}

    def to_json_dict(self) -> dict:
        """Strict JSON: a value that is not a finite number (a diverged loss) is null, never NaN/Infinity."""
        return _finite(self.model_dump(mode="json", by_alias=True))


def _finite(value):
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value
