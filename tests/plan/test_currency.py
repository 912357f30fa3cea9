"""Currency: the user's rates win; otherwise a dated, sourced default; the plan says which rate it used."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuwise.plan import currency
from gpuwise.plan.planner import make_plan

LLM7B = Path(__file__).resolve().parents[2] / "examples" / "llm-7b-pretrain-1t.yaml"


def test_default_table_has_dated_public_sources():
    table = currency.default_rates()
    assert {"CNY", "EUR"} <= set(table)
    for ccy, (usd, as_of, source) in table.items():
        assert usd > 0 and as_of[:4].isdigit() and "https://" in source, ccy
    assert table["CNY"][0] == pytest.approx(1 / 7.2734, rel=1e-5)  # Fed G.5, Feb 2025 average


def test_user_rate_wins_and_cross_rates_go_through_usd():
    user = currency.conversion("CNY", "USD", {"cny": 0.14})
    assert user.value == 0.14 and user.label == "your exchange_rates"
    default = currency.conversion("CNY", "USD", {})
    assert default.value == pytest.approx(0.137487) and "Federal Reserve" in default.label
    cross = currency.conversion("CNY", "EUR", {})
    assert cross.value == pytest.approx(0.137487 / 1.0411)
    assert "2025-02-28" in currency.describe(cross)
    back = currency.conversion("USD", "CNY", {})
    assert back.value == pytest.approx(7.2734, rel=1e-4)
    assert currency.conversion("GBP", "USD", {}) is None
    assert currency.conversion("usd", "USD", {}).value == 1.0


def _opts(tmp_path: Path, ccy: str, rates: str = "") -> Path:
    opts = tmp_path / "o.yaml"
    opts.write_text(
        "cloud:\n  include: false\nonprem:\n  - name: foreign-build\n    gpu: H100-SXM\n    fabric: "
        f"ib-ndr\n    costs: {{currency: {ccy}, server_price_per_node: 2200000}}\n  - name: "
        f"usd-build\n    gpu: H100-SXM\n    fabric: ib-ndr\n{rates}"
    )
    return opts


def test_plan_converts_cny_with_the_default_and_says_so(tmp_path):
    plan = make_plan(LLM7B, _opts(tmp_path, "CNY"))
    cny = next(i for i, r in enumerate(plan.rows) if r.currency == "CNY")
    assert plan.convertible[cny]
    assert any(n.startswith("1 CNY = 0.1375 USD (default: Federal Reserve G.5") for n in plan.notes)
    # 2.2M CNY ≈ 302k USD: the converted build costs less than the 310k USD one.
    usd = next(i for i, r in enumerate(plan.rows) if r.currency == "USD")
    assert plan.year_cost[cny, 0] < plan.year_cost[usd, 0]


def test_plan_with_user_rate_names_it(tmp_path):
    plan = make_plan(LLM7B, _opts(tmp_path, "CNY", "exchange_rates: {CNY: 0.2}\n"))
    assert "1 CNY = 0.2 USD (your exchange_rates)" in plan.notes


def test_currency_without_any_rate_is_kept_apart(tmp_path):
    plan = make_plan(LLM7B, _opts(tmp_path, "GBP"))
    gbp = next(i for i, r in enumerate(plan.rows) if r.currency == "GBP")
    assert not plan.convertible[gbp] and any("GBP" in n and "exchange_rates" in n for n in plan.notes)
