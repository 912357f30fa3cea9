"""Exchange rates for the plan: the user's first (workload org or options file), else a dated default.

Defaults live in plan/data/exchange_rates.yaml (1 unit = N US dollars, each with its date and public
source); other pairs are crossed through USD. Every conversion says which rate it used, so a plan
priced in CNY and USD shows "1 CNY = 0.1375 USD (default: Federal Reserve G.5 ..., 2025-02-28)".
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources

import yaml

from gpuwise.i18n import joined, msg

RATES_FILE = "data/exchange_rates.yaml"


@dataclass(frozen=True)
class Rate:
    """1 unit of `currency` = `value` units of `target`; `label` says where the number came from."""

    currency: str
    target: str
    value: float
    label: str


@functools.cache
def default_rates() -> dict[str, tuple[float, str, str]]:
    """{currency: (USD per unit, as_of, source)} from the shipped table (cached)."""
    raw = yaml.safe_load(resources.files("gpuwise.plan").joinpath(RATES_FILE).read_text(encoding="utf-8"))
    return {
        str(ccy).upper(): (float(r["usd"]), str(r["as_of"]), joined(" ", str(r["source"]).split()))
        for ccy, r in raw["rates"].items()
    }


def _usd_per_unit(ccy: str) -> tuple[float, str] | None:
    if ccy == "USD":
        return 1.0, ""
    found = default_rates().get(ccy)
    return (
        None
        if found is None
        else (found[0], msg("{source} (as of {date})").format(source=found[2], date=found[1]))
    )


def conversion(currency: str, target: str, user_rates: dict[str, float]) -> Rate | None:
    """The rate that turns `currency` into `target`, or None when neither the user nor the table has one.

    `user_rates` maps a currency to its value in `target` (the workload's `exchange_rates`).
    """
    ccy, tgt = currency.upper(), target.upper()
    if ccy == tgt:
        return Rate(ccy, tgt, 1.0, msg("same currency"))
    given = {k.upper(): v for k, v in user_rates.items()}.get(ccy)
    if given:
        return Rate(ccy, tgt, float(given), msg("your exchange_rates"))
    src, dst = _usd_per_unit(ccy), _usd_per_unit(tgt)
    if src is None or dst is None:
        return None
    sources = joined("; ", (s for s in (src[1], dst[1]) if s))
    return Rate(ccy, tgt, src[0] / dst[0], msg("default: {sources}").format(sources=sources))


def describe(rate: Rate) -> str:
    """One line for the plan's notes, e.g. "1 CNY = 0.1375 USD (default: ...)"."""
    return msg("1 {currency} = {value} {target} ({label})").format(
        currency=rate.currency, value=f"{rate.value:.4g}", target=rate.target, label=rate.label
    )
