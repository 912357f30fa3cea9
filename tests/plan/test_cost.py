"""TCO formulas (REFERENCE.md §4.b) and the vectorised cloud/owned cost arrays."""

from __future__ import annotations

import numpy as np
import pytest

from gpuwise.plan.cost import (
    HOURS_PER_YEAR,
    CostArrays,
    OnpremCostInputs,
    break_even_months,
    break_even_utilisation,
    capital_recovery_factor,
    cost_per_run,
    cost_per_year,
)


def h100_node(**kw) -> OnpremCostInputs:
    base = dict(
        server_price_per_node=350_000,
        network_cost_per_node=0,
        storage_cost_per_node=0,
        spares_fraction=0,
        power_kw_per_node=10.2,
        load_fraction=0.75,
        pue=1.25,
        electricity_per_kwh=0.083,
        colo_per_kw_month=0,
        staff_per_year=0,
        support_fraction_per_year=0,
        lifetime_years=5,
        interest_rate=0,
        residual_fraction=0,
    )
    base.update(kw)
    return OnpremCostInputs(**base)


def test_crf_known_values():
    assert capital_recovery_factor(0.0, 5) == pytest.approx(0.2)
    # r(1+r)^L / ((1+r)^L - 1) at 5% over 5 years
    assert capital_recovery_factor(0.05, 5) == pytest.approx(0.05 * 1.05**5 / (1.05**5 - 1))
    assert capital_recovery_factor(0.05, 5) == pytest.approx(0.230975, abs=1e-6)
    with pytest.raises(ValueError):
        capital_recovery_factor(0.05, 0)


def test_reference_worked_example_per_gpu_hour():
    node = h100_node()
    # REFERENCE 4.b: $350k over 5 years ≈ $70k/yr ≈ $1.00/GPU-hr at 100%; power ≈ $7k/yr
    assert node.capital_per_year() == pytest.approx(70_000)
    assert node.capital_per_year() / (8 * HOURS_PER_YEAR) == pytest.approx(1.0, abs=0.01)
    assert node.opex_per_year()["power"] == pytest.approx(7_000, rel=0.03)
    with_colo = h100_node(colo_per_kw_month=150)
    assert with_colo.opex_per_year()["colocation"] == pytest.approx(18_360)


def test_capex_includes_network_storage_spares_and_residual_credit():
    node = h100_node(
        network_cost_per_node=50_000,
        storage_cost_per_node=10_000,
        spares_fraction=0.05,
        residual_fraction=0.3,
    )
    assert node.capex_per_node() == pytest.approx(410_000 * 1.05)
    assert node.capital_per_year() == pytest.approx(410_000 * 1.05 * 0.7 / 5)
    assert node.breakdown()["annual_per_node"] == pytest.approx(node.annual_per_node())


def arrays(price, annual, idle, fixed=0.0):
    return CostArrays(
        node_hour_price=np.array(price, dtype=float),
        pays_idle=np.array(idle, dtype=float),
        annual_per_node=np.array(annual, dtype=float),
        fixed_per_year=np.array([fixed] * len(price)),
        capex_per_node=np.full(len(price), np.nan),
        opex_per_node_year=np.full(len(price), np.nan),
        currency_factor=np.ones(len(price)),
    )


def test_cost_per_run_and_year():
    c = arrays([30.0, 20.0, np.nan], [np.nan, np.nan, 87_600.0], [0, 1, 1])
    ttt_h = np.array([[100.0, 50.0]] * 3)
    run = cost_per_run(c, [1, 2], ttt_h, [0.5, 1.0], burstiness=1.0)
    assert run.shape == (3, 2, 2)
    assert run[0, 0, 0] == pytest.approx(3000) and run[0, 1, 0] == pytest.approx(
        3000
    )  # on-demand: pay what you use
    assert run[1, 0, 0] == pytest.approx(4000) and run[1, 0, 1] == pytest.approx(
        2000
    )  # reserved idles at 50%
    assert run[2, 0, 1] == pytest.approx(1000) and run[2, 0, 0] == pytest.approx(
        2000
    )  # owned: $10/node-h at 100%
    year = cost_per_year(c, [1], [0.5], burstiness=1.0)
    assert year[0, 0, 0] == pytest.approx(30 * HOURS_PER_YEAR / 2) and year[1, 0, 0] == pytest.approx(
        20 * HOURS_PER_YEAR
    )
    # Burstiness caps the busy fraction of a fleet sized for the peak.
    bursty = cost_per_run(c, [1], ttt_h[:, :1], [0.9], burstiness=4.0)
    assert bursty[2, 0, 0] == pytest.approx(87_600 * 100 / (HOURS_PER_YEAR * 0.25))


def test_break_even_points():
    # Owned fleet $876k/yr, 100 h per run; cloud $2,000 per run: U* = 876k*100/(8760*2000) = 5.0 -> never.
    assert break_even_utilisation(876_000, 100, 2000) == pytest.approx(5.0)
    assert break_even_utilisation(87_600, 100, 2000) == pytest.approx(0.5)
    assert break_even_months(1_200_000, 10_000, 110_000) == pytest.approx(12)
    assert break_even_months(1_200_000, 10_000, 9_000) == float("inf")
