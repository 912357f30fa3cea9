"""The rent-or-build decision as data: typed reasons and flips, each with a kind and its numbers.

A reason's `text` is for people; verdicts are computed from `kind`, `favours` and `numbers` only, so
any message can be reworded without changing a recommendation (tests/plan/test_rewording.py checks it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal

from gpuwise.i18n import N_, msg

Side = Literal["cloud", "build"]

# The pricing models in words (the JSON keeps the enum value: on_demand, spot, ...).
PRICING_WORDS = {
    "on_demand": N_("on-demand"),
    "spot": N_("spot"),
    "reserved_1y": N_("reserved-1y"),
    "reserved_3y": N_("reserved-3y"),
    "capacity_block": N_("capacity-block"),
    "owned": N_("owned"),
}


def pricing_label(pricing: str) -> str:
    """'on_demand' -> 'on-demand' in the active language (an unknown pricing: its value, '_' as '-')."""
    word = PRICING_WORDS.get(pricing)
    return msg(word) if word else pricing.replace("_", "-")


Verdict = Literal["cloud", "build", "hybrid", "undecided"]


class ReasonKind(StrEnum):
    """What a reason is about. The cost kinds compare money; the others are the organisation's context."""

    COST = "cost"
    BREAK_EVEN_UTILISATION = "break_even_utilisation"
    BREAK_EVEN_MONTHS = "break_even_months"
    RESIDENCY = "residency"
    COMPLIANCE = "compliance"
    BURSTINESS = "burstiness"
    HORIZON = "horizon"
    STEADY_LOAD = "steady_load"
    OPS_TEAM = "ops_team"
    DEADLINE = "deadline"
    GROWTH = "growth"  # inference plans: demand growth a fixed fleet must be sized for
    NO_CLOUD_OPTION = "no_cloud_option"  # no cloud offer can be costed: says which and why
    NO_BUILD_OPTION = "no_build_option"
    # caveats: what the reader must know about the picks; never a vote for either side
    NO_OPTION_IN_TIME = "no_option_in_time"  # no option meets the deadline: the closest is named
    SPOT_INTERRUPTIONS = "spot_interruptions"  # a spot pick's expected interruptions and their cost
    ESTIMATE = "estimate"  # a pick's MFU fell back to a generic default
    PRICE_AGE = "price_age"  # a pick's price is over a year old


COST_KINDS = frozenset({ReasonKind.COST, ReasonKind.BREAK_EVEN_UTILISATION, ReasonKind.BREAK_EVEN_MONTHS})
CAVEAT_KINDS = frozenset(
    {
        ReasonKind.NO_OPTION_IN_TIME,
        ReasonKind.SPOT_INTERRUPTIONS,
        ReasonKind.ESTIMATE,
        ReasonKind.PRICE_AGE,
    }
)


class FlipKind(StrEnum):
    UTILISATION = "utilisation"
    RESERVED_UTILISATION = "reserved_utilisation"  # utilisation cannot move owned vs reserved
    PRICE = "price"
    NODE_COUNT = "node_count"
    PEAK_TO_VALLEY = "peak_to_valley"  # inference plans: the traffic shape
    GROWTH = "growth"


@dataclass(frozen=True)
class Reason:
    kind: ReasonKind
    favours: Side
    text: str  # the full sentence shown to the user
    label: str  # a short name for it, used in summaries ("no ops team")
    numbers: dict[str, float] = field(default_factory=dict)  # the figures behind it, by name

    @property
    def is_context(self) -> bool:
        return self.kind not in COST_KINDS and self.kind not in CAVEAT_KINDS


@dataclass(frozen=True)
class Flip:
    kind: FlipKind
    text: str
    numbers: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class BreakEven:
    """Owning the best build against one cloud option: NaN utilisation = utilisation cannot flip it
    (reserved capacity), infinite months = owning never pays back."""

    utilisation: float
    months: float


@dataclass(frozen=True)
class Pick:
    """The exact thing to rent (provider, instance, region, pricing model, nodes) or to buy (build, nodes)."""

    side: Side
    name: str  # "aws p5.48xlarge" or the build's name
    provider: str | None
    instance_type: str | None
    region: str | None
    pricing: str  # on_demand, spot, reserved_1y, reserved_3y, capacity_block, owned
    nodes: int
    gpus_per_node: int
    gpu: str
    cost_per_run: float
    cost_per_run_low: float
    cost_per_run_high: float
    billed_hours: float  # hours paid for (whole days for capacity blocks)
    run_hours: float
    currency: str
    price_as_of: str | None = None  # ISO date of a cloud price; None: the source gives no date

    def text(self) -> str:
        what = msg("{nodes} × {name} ({gpus}× {gpu} per node)").format(
            nodes=self.nodes, name=self.name, gpus=self.gpus_per_node, gpu=self.gpu
        )
        if self.side == "build":
            return msg("buy {what}").format(what=what)
        if self.region:
            return msg("rent {what}, {pricing}, in {region}").format(
                what=what, pricing=pricing_label(self.pricing), region=self.region
            )
        return msg("rent {what}, {pricing}, region not listed in the offer").format(
            what=what, pricing=pricing_label(self.pricing)
        )


@dataclass
class Decision:
    verdict: Verdict
    summary: str
    best_cloud: int | None  # row index
    best_onprem: int | None
    reasons: list[Reason] = field(default_factory=list)
    flips: list[Flip] = field(default_factory=list)
    break_even_utilisation: float | None = None
    break_even_months: float | None = None
    per_option: dict[str, BreakEven] = field(default_factory=dict)  # cloud row key -> vs the best build
    rent: Pick | None = None  # the cloud option the comparison used
    buy: Pick | None = None  # the build the comparison used


def _finite(x: float) -> float | None:
    return round(x, 6) if math.isfinite(x) else None


def pick_to_json(p: Pick | None) -> dict | None:
    if p is None:
        return None
    out = {k: getattr(p, k) for k in ("side", "name", "provider", "instance_type", "region", "pricing")}
    out.update(nodes=p.nodes, gpus_per_node=p.gpus_per_node, gpu=p.gpu, currency=p.currency, text=p.text())
    out["cost_per_run"] = _finite(p.cost_per_run)
    out["cost_per_run_range"] = [_finite(p.cost_per_run_low), _finite(p.cost_per_run_high)]
    out["billed_hours"] = _finite(p.billed_hours)
    out["run_hours"] = _finite(p.run_hours)
    out["price_as_of"] = p.price_as_of
    return out


def decision_to_json(d: Decision) -> dict:
    return {
        "verdict": d.verdict,
        "summary": d.summary,
        "rent": pick_to_json(d.rent),
        "buy": pick_to_json(d.buy),
        "reasons": [
            {
                "kind": str(r.kind),
                "favours": r.favours,
                "text": r.text,
                "numbers": {k: _finite(float(v)) for k, v in r.numbers.items()},
            }
            for r in d.reasons
        ],
        "flips": [f.text for f in d.flips],
        "break_even_utilisation": d.break_even_utilisation,
        "break_even_months": None if d.break_even_months is None else _finite(d.break_even_months),
        "break_even_per_cloud_option": {
            k: {  # strict JSON has no NaN or infinity: "cannot flip" and "never pays back" are null
                "break_even_utilisation": _finite(be.utilisation),
                "break_even_months": _finite(be.months),
            }
            for k, be in d.per_option.items()
        },
    }
