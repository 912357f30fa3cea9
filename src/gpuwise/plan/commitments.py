"""What a buyer can actually buy for one run: commitment terms and block billing.

A reserved price binds the buyer for its whole term (1 or 3 years), so it is an option for a shorter run
only when the organisation says the capacity is used afterwards (`org.reuse_capacity: true`) and its
horizon covers the term. EC2 Capacity Blocks are bought in whole days (1-day steps up to 14 days, then
7-day steps up to 182 days) for at most 64 instances per block and 256 in all, so a 3.7-hour run pays for
a day. The terms and their sources are in plan_defaults.yaml (`commitments:`, `block_billing:`).

`blocked(...)` returns bit flags per (option, node count), like the perf model's infeasibility flags;
`billed_hours(...)` the hours each option is paid for.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpuwise.i18n import N_, msg
from gpuwise.plan.defaults import PlanDefaults
from gpuwise.plan.options import OptionRow
from gpuwise.plan.workload import OrgContext

# Bits above the perf model's (plan/perf.py uses 1..64).
TERM_LONGER_THAN_RUN, BLOCK_TOO_LONG, BLOCK_TOO_MANY = 1 << 10, 1 << 11, 1 << 12
REASON_TEXT = {
    TERM_LONGER_THAN_RUN: N_(
        "the reserved term is longer than this run and the capacity is not reused "
        "afterwards (set org.reuse_capacity: true with a horizon that covers the term)"
    ),
    BLOCK_TOO_LONG: N_("longer than the longest capacity block that can be bought"),
    BLOCK_TOO_MANY: N_("more instances than capacity blocks allow"),
}
REASON_SHORT = {
    TERM_LONGER_THAN_RUN: N_("term > run"),
    BLOCK_TOO_LONG: N_("block too long"),
    BLOCK_TOO_MANY: N_("too many nodes"),
}
HOURS_PER_DAY = 24.0


@dataclass(frozen=True)
class BlockBilling:
    """A provider that sells capacity in blocks of whole days (EC2 Capacity Blocks)."""

    provider: str
    pricing_model: str
    day_steps_until_days: int  # 1-day steps up to this many days
    week_steps_until_days: int  # then 7-day steps up to this many days (the longest block)
    max_instances_per_block: int
    max_instances_total: int
    source: str

    def billed_days(self, hours: np.ndarray) -> np.ndarray:
        days = np.maximum(np.ceil(np.asarray(hours, dtype=float) / HOURS_PER_DAY - 1e-9), 1.0)
        return np.where(days > self.day_steps_until_days, np.ceil(days / 7.0) * 7.0, days)


def block_billing(d: PlanDefaults) -> dict[str, BlockBilling]:
    out = {}
    for provider, e in (d.data.get("block_billing") or {}).items():
        out[provider.lower()] = BlockBilling(
            provider=provider.lower(),
            pricing_model=str(e["pricing_model"]),
            day_steps_until_days=int(e["day_steps"][1]),
            week_steps_until_days=int(e["week_steps_until_days"]),
            max_instances_per_block=int(e["max_instances_per_block"]),
            max_instances_total=int(e["max_instances_total"]),
            source=str(e["source"]),
        )
    return out


def term_days(d: PlanDefaults, pricing: str) -> float | None:
    """The commitment term of a pricing model in days (None: pay as you go)."""
    entry = (d.data.get("commitments") or {}).get(pricing)
    return float(entry["term_days"]) if entry else None


def reserved_allowed(org: OrgContext, term: float, run_days: np.ndarray) -> np.ndarray:
    """A term is buyable when the run lasts the whole term, or the capacity is reused afterwards within
    the organisation's horizon."""
    reused = org.reuse_capacity and org.horizon_years * 365.0 >= term
    return (np.asarray(run_days) >= term) | reused


def blocked(
    rows: list[OptionRow], nodes: np.ndarray, hours: np.ndarray, org: OrgContext, d: PlanDefaults
) -> np.ndarray:
    """(O, K) bit flags: why an option cannot be bought for this run at that node count (0 = it can)."""
    flags = np.zeros(hours.shape, dtype=np.int64)
    blocks = block_billing(d)
    for o, row in enumerate(rows):
        term = term_days(d, row.pricing)
        if term is not None:
            flags[o] |= np.where(
                reserved_allowed(org, term, hours[o] / HOURS_PER_DAY), 0, TERM_LONGER_THAN_RUN
            )
        bb = blocks.get((row.provider or "").lower())
        if bb is not None:
            flags[o] |= np.where(bb.billed_days(hours[o]) > bb.week_steps_until_days, BLOCK_TOO_LONG, 0)
            flags[o] |= np.where(nodes > bb.max_instances_total, BLOCK_TOO_MANY, 0)
    return flags


def billed_hours(rows: list[OptionRow], hours: np.ndarray, d: PlanDefaults) -> np.ndarray:
    """(O, K) hours each option is paid for: the run itself, or whole blocks where the provider sells blocks."""
    out = np.array(hours, dtype=float, copy=True)
    blocks = block_billing(d)
    for o, row in enumerate(rows):
        bb = blocks.get((row.provider or "").lower())
        if bb is not None:
            out[o] = bb.billed_days(hours[o]) * HOURS_PER_DAY
    return out


def short_reasons(flags: int) -> list[str]:
    return [msg(text) for bit, text in REASON_SHORT.items() if flags & bit]


def reasons(flags: int) -> list[str]:
    return [msg(text) for bit, text in REASON_TEXT.items() if flags & bit]
