"""The Finding model: one judgement about a machine, with its evidence and what to do about it.

Rules (gpuwise.advise.rules) create Findings; renderers (gpuwise.report) format them. A finding
always carries the facts or measurements it read, so a reader can check the judgement.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import ConfigDict, Field

from gpuwise.layers import LAYER_ORDER, Layer
from gpuwise.textmodel import TextModel

# The order of each Literal is also the ranking order (first = most important), so each
# vocabulary is written once and the *_ORDER tuples are derived from it (Layer: gpuwise.layers).
Priority = Literal["high", "medium", "low"]
Status = Literal["fail", "warn", "info", "pass"]
EnvKind = Literal["cloud", "onprem", "unknown"]
Can = Literal["yes", "no", "partly"]

PRIORITY_ORDER: tuple[str, ...] = get_args(Priority)
STATUS_ORDER: tuple[str, ...] = get_args(Status)


class _Strict(TextModel):
    model_config = ConfigDict(extra="forbid")


class Evidence(_Strict):
    """One fact path (`gpus[0].persistence_mode`) or measurement name, and the value the rule saw."""

    kind: Literal["fact", "measurement"] = "fact"
    path: str
    value: Any = None


class Recommendation(_Strict):
    text: str = ""
    commands: list[str] = Field(default_factory=list)
    config: list[str] = Field(
        default_factory=list
    )  # lines for a config file (grub, sysctl.d, nccl.conf, ...)
    env: dict[str, str] = Field(default_factory=dict)  # environment variables to set


class Controllable(_Strict):
    """Can the user change this here? If not, `alternative` says what they can do instead."""

    can: Can = "yes"
    reason: str = ""
    alternative: str | None = None


class ExpectedGain(_Strict):
    text: str
    source: str


class Finding(_Strict):
    id: str
    layer: Layer
    priority: Priority
    status: Status
    title: str
    evidence: list[Evidence] = Field(default_factory=list)
    recommendation: Recommendation = Field(default_factory=Recommendation)
    controllable: Controllable = Field(default_factory=Controllable)
    expected_gain: ExpectedGain | None = None
    affects_numerics: bool = False
    references: list[str] = Field(default_factory=list)
    source: str = ""  # the authority: a public document (URL or vendor document, section) or "heuristic: ..."

    def sort_key(self) -> tuple:
        """Rank: severity first (a real warning never ranks below generic advice), then priority, layer, id."""
        return (
            STATUS_ORDER.index(self.status),
            PRIORITY_ORDER.index(self.priority),
            LAYER_ORDER.index(self.layer),
            self.id,
        )
