"""On-prem cost defaults: sourced values, per-GPU-class lookups, plan-file overrides, bad files."""

from __future__ import annotations

import pytest

from gpuwise.catalog import costs
from gpuwise.errors import DataValidationError, UserInputError


def test_values_and_sources():
    d = costs.load_onprem_defaults()
    assert d.currency == "USD"
    assert d.value("pue") == 1.25 and d.entry("pue").low == 1.1
    assert d.value("electricity_price_per_kwh") == 0.0826
    assert d.value("ethernet_fabric_cost_per_node") is None  # no source: not invented
    # Cost of capital, staff, support, storage and the management network have sourced defaults with ranges.
    for name in (
        "interest_rate",
        "staff_fte_per_node",
        "staff_cost_per_fte_year",
        "support_per_gpu_year",
        "storage_cost_per_node",
        "management_network_cost_per_node",
    ):
        e = d.entry(name)
        assert e.value and e.low is not None and e.high is not None and e.low <= e.value <= e.high, name
        assert "https://" in e.source or "http://" in e.source, name
    assert "Cheah" in d.entry("server_price_per_node", "H100-SXM").source
    assert d.server_price_per_node("h100-sxm") == 310000  # class names are case-insensitive
    assert d.server_price_per_node("A100-SXM-80GB") == 200000  # DGX A100 launch list price
    assert "geektopia" in d.entry("server_price_per_node", "A100-SXM-40GB").source
    for unsourced in ("H200", "B200", "H20", "L40S"):
        assert d.server_price_per_node(unsourced) is None, unsourced  # no public price found
    assert d.cloud_commitment_discounts["aws"].three_year == 0.64


def test_node_power_direct_and_from_tdp():
    d = costs.load_onprem_defaults()
    assert d.node_power_kw("A100-SXM-80GB") == 6.5  # most specific class that has a figure: A100-SXM
    assert d.node_power_kw("H100-SXM", gpu_count=4) == pytest.approx(5.1)
    assert d.node_power_kw("L40S", gpu_count=8, gpu_tdp_watts=350) == pytest.approx(8 * 0.35 * 1.82)
    assert d.node_power_kw("L40S") is None


def test_plan_file_overrides():
    base = costs.load_onprem_defaults()
    d = base.with_overrides(
        {
            "pue": 1.1,
            "ethernet_fabric_cost_per_node": 12000,
            "server_price_per_node": {"A100": 200000, "H100": 300000},
        }
    )
    assert d.value("pue") == 1.1 and d.entry("pue").source == costs.USER_SOURCE
    assert d.value("ethernet_fabric_cost_per_node") == 12000
    assert (d.server_price_per_node("A100"), d.server_price_per_node("H100")) == (200000, 300000)
    assert d.server_price_per_node("H100-SXM") == 300000  # the user's class covers the shipped H100-SXM
    # the shipped copy is untouched
    assert base.value("pue") == 1.25 and base.server_price_per_node("A100") is None
    assert base.server_price_per_node("H100-SXM") == 310000


def test_figures_sourced_for_sxm_servers_do_not_price_other_parts():
    d = costs.load_onprem_defaults()
    assert d.server_price_per_node("H100-PCIE") is None and d.server_price_per_node("H100") is None
    assert d.node_power_kw("H100-PCIE") is None  # DGX H100's 10.2 kW is not a PCIe server's draw
    assert d.node_power_kw("A100-PCIE-80GB", gpu_count=8, gpu_tdp_watts=300) == pytest.approx(8 * 0.3 * 1.82)


@pytest.mark.parametrize(
    "overrides,message",
    [
        ({"puee": 1.1}, 'did you mean "pue"'),
        ({"pue": "high"}, "non-negative number"),
        ({"pue": -1}, "non-negative"),
        ({"server_price_per_node": 300000}, "map a GPU class"),
    ],
)
def test_bad_overrides(overrides, message):
    with pytest.raises(DataValidationError, match=message):
        costs.load_onprem_defaults().with_overrides(overrides)


def test_unknown_name_and_missing_class():
    d = costs.load_onprem_defaults()
    with pytest.raises(UserInputError, match='did you mean "pue"'):
        d.value("pu")
    with pytest.raises(UserInputError, match="depends on the GPU class"):
        d.value("server_price_per_node")


def test_bad_yaml_files(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("schema: gpuwise-onprem-costs/1\nvalues: [\n")
    with pytest.raises(DataValidationError, match="not valid YAML"):
        costs.read_onprem_defaults(path)
    path.write_text("schema: something-else\n")
    with pytest.raises(DataValidationError, match="not a gpuwise-onprem-costs/1 file"):
        costs.read_onprem_defaults(path)
    text = costs.shipped_costs_path().read_text().replace("value: 1.25", "value: lots")
    path.write_text(text)
    with pytest.raises(DataValidationError, match=r"values\.pue\.value") as err:
        costs.read_onprem_defaults(path)
    assert text.splitlines()[err.value.line - 1].strip() == "value: lots"  # points at the line to edit
    with pytest.raises(UserInputError, match="file not found"):
        costs.read_onprem_defaults(tmp_path / "absent.yaml")
