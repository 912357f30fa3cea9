"""Every shipped catalog row validates, carries a source and a date, and is internally consistent."""

from __future__ import annotations

import datetime as dt

import pytest

from gpuwise.catalog import costs, fabrics, gpus, offers

# Dates must be real dates in a plausible range (this also catches typos such as 2062).
EARLIEST, LATEST = dt.date(2020, 1, 1), dt.date(2030, 1, 1)


def test_every_gpu_row_has_source_and_date():
    specs = gpus.load_gpu_specs()
    assert len(specs) >= 40
    for spec in specs:
        assert spec.source.strip(), spec.key
        assert EARLIEST <= spec.as_of < LATEST, spec.key
        assert spec.patterns, f"{spec.key} has no match pattern"


@pytest.mark.parametrize(
    "key",
    [
        "V100-SXM2-16GB",
        "V100-SXM2-32GB",
        "V100-PCIE-16GB",
        "V100-PCIE-32GB",
        "V100S-PCIE-32GB",
        "T4",
        "A10",
        "A10G",
        "A100-SXM-40GB",
        "A100-SXM-80GB",
        "A100-PCIE-40GB",
        "A100-PCIE-80GB",
        "A800-SXM-80GB",
        "L4",
        "L20",
        "L40",
        "L40S",
        "H20",
        "H100-SXM",
        "H100-PCIE",
        "H100-NVL",
        "H800-SXM",
        "H200",
        "GH200",
        "B200",
        "MI300X",
        "RTX-3090",
        "RTX-4090",
        "RTX-A6000",
        "RTX-6000-ADA",
        "A40",
    ],
)
def test_issue_rows_exist(key):
    assert gpus.get_gpu(key) is not None


def test_peaks_are_dense_and_consistent():
    # Sparse figures are 2x dense; these ratios catch a sparse number pasted into a dense column.
    for s in gpus.load_gpu_specs():
        if s.bf16_tflops and s.fp16_tflops:
            assert s.bf16_tflops == s.fp16_tflops, s.key
        if s.fp8_tflops and s.bf16_tflops:
            assert s.fp8_tflops == pytest.approx(2 * s.bf16_tflops, rel=0.02), s.key
        if s.tf32_tflops and s.bf16_tflops:
            assert s.tf32_tflops == pytest.approx(s.bf16_tflops / 2, rel=0.02), s.key
        if s.fp32_tflops and s.fp16_tflops:
            assert s.fp32_tflops < s.fp16_tflops, s.key
        for fraction in (s.mamf_fraction, s.memcpy_fraction, s.pcie_fraction, s.nvlink_fraction):
            assert fraction is None or 0.3 < fraction <= 1.0, s.key


def test_reference_numbers_shipped_as_written():
    h100 = gpus.get_gpu("H100-SXM")
    assert (h100.peak_tflops("bf16"), h100.peak_tflops("fp8"), h100.memory_bandwidth_gb_s) == (
        989,
        1979,
        3350,
    )
    assert h100.mamf_fraction == pytest.approx(794.5 / 989, abs=0.001)
    assert gpus.get_gpu("A800-SXM-80GB").nvlink_bandwidth_gb_s == 400
    assert gpus.get_gpu("V100-SXM2-32GB").peak_tflops("bf16") is None  # Volta has no bf16
    assert gpus.get_gpu("A100-SXM-40GB").memory_bytes == 40 * 2**30


def test_unverified_figures_are_flagged_or_absent():
    # H20, A800 and H800 figures come from third-party sources only; T4 bandwidth and L20 fp32 have none.
    for key in ("H20", "A800-SXM-80GB", "H800-SXM", "GH200"):
        assert gpus.get_gpu(key).verified is False, key
    assert gpus.get_gpu("H20").tf32_tflops is None  # sources disagree: left out
    assert gpus.get_gpu("T4").memory_bandwidth_gb_s is None
    assert gpus.get_gpu("L20").fp32_tflops is None
    assert gpus.get_gpu("MI300X").tdp_watts is None


def test_name_only_rows_have_no_numbers():
    for s in gpus.load_gpu_specs():
        if s.source.startswith("name only"):
            assert not s.verified
            assert all(s.peak_tflops(d) is None for d in gpus.DTYPES), s.key


def test_peak_tflops_accepts_torch_style_names():
    spec = gpus.get_gpu("H100-SXM")
    assert spec.peak_tflops("bfloat16") == 989
    assert spec.peak_tflops("float32") == 67
    with pytest.raises(ValueError):
        spec.peak_tflops("int4")


def test_every_fabric_row_has_source_and_both_units():
    rows = fabrics.load_fabrics()
    kinds = {f.kind for f in rows}
    assert kinds == set(fabrics.KINDS)
    for f in rows:
        assert f.source and EARLIEST <= f.as_of < LATEST, f.key
        assert f.bandwidth_gbps == pytest.approx(f.bandwidth_gb_s * 8)
    for key in (
        "pcie3-x16",
        "pcie4-x16",
        "pcie5-x16",
        "pcie6-x16",
        "nvlink4",
        "eth-100g",
        "ib-hdr",
        "ib-ndr",
        "ib-edr",
        "ib-xdr",
        "roce-100g",
        "efa-v2",
        "vpc-tcp-25g",
    ):
        fabrics.get_fabric(key)
    assert fabrics.get_fabric("pcie5-x16").bandwidth_gb_s == 63
    assert fabrics.get_fabric("nvlink4").achievable_gb_s == pytest.approx(396)
    assert fabrics.pcie_x16(4).key == "pcie4-x16" and fabrics.pcie_x16(9) is None


def test_every_shipped_offer_has_source_and_price_date_and_no_invented_price():
    rows = offers.load_shipped_offers()
    assert {o.provider for o in rows} >= {
        "tencent",
        "aws",
        "lambda",
        "coreweave",
        "runpod",
        "alibaba",
        "baidu",
        "gcp",
        "azure",
        "oracle",
        "nebius",
    }
    for o in rows:
        where = (o.provider, o.instance_type, o.region)
        assert o.price_source, where
        assert "REFERENCE" not in f"{o.price_source} {o.notes}", where  # public sources only
        priced = o.price is not None or o.spot_price is not None
        if priced:
            assert not o.price_source.startswith("none"), where
            # AsOf is the date of the price; a page without a date says so instead of using today.
            if o.as_of is None:
                assert "no date" in o.notes or "not recorded" in o.notes + o.price_source, where
        else:
            assert o.price_source.startswith("none"), where  # the reason a price is missing
        if o.as_of is not None:
            assert EARLIEST <= o.as_of < LATEST, where
        if o.gpu_key:
            assert o.gpu_spec() is not None and o.gpu_spec().key == o.gpu_key
    tencent = [o for o in rows if o.provider == "tencent"]
    assert all(o.currency == "CNY" and o.region is None for o in tencent)  # list prices: live fetch replaces
    priced = {o.instance_type: o for o in tencent if o.price is not None}
    # Tencent's price overview lists GT4, GN10X/GN10Xp and GN7, pay-as-you-go and monthly, in CNY.
    assert {"GT4.41XLARGE948", "GN10Xp.20XLARGE320", "GN10X.18XLARGE320", "GN7.2XLARGE32"} <= set(priced)
    assert all(o.monthly_price and o.monthly_price > 100 * o.price for o in priced.values())
    assert (priced["GT4.41XLARGE948"].price, priced["GT4.41XLARGE948"].monthly_price) == (237.51, 114016)
    assert not any(o.instance_type.startswith(("PNV4", "HCC")) for o in priced.values())  # not on the page
    families = {o.instance_type.split(".")[0] for o in tencent}
    assert {"GN7", "GN10X", "GN10Xp", "GT4", "PNV4", "HCCPNV4h", "HCCPNV5"} <= families


def test_tencent_network_matches_reference():
    by_type = {o.instance_type: o for o in offers.load_shipped_offers() if o.provider == "tencent"}
    expected = {
        "GN7.20XLARGE320": 25,
        "GN10X.18XLARGE320": 25,
        "GN10Xp.20XLARGE320": 24,
        "GT4.41XLARGE948": 50,
        "PNV4.56XLARGE932": 100,
    }
    assert {k: by_type[k].network_gbps for k in expected} == expected


def test_costs_have_a_source_for_every_value():
    d = costs.load_onprem_defaults()
    entries = list(d.values.items()) + [
        (f"{n}.{c}", v) for n, m in d.per_gpu_class.items() for c, v in m.items()
    ]
    for name, entry in entries:
        assert entry.source.strip() and entry.unit.strip(), name
        if entry.value is None:
            assert entry.source.startswith("none"), name  # unknown is said out loud, not guessed
    for required in (
        "infiniband_fabric_cost_per_node",
        "ethernet_fabric_cost_per_node",
        "pue",
        "electricity_price_per_kwh",
        "colocation_price_per_kw_month",
        "interest_rate",
        "staff_fte_per_node",
        "staff_cost_per_fte_year",
        "support_per_gpu_year",
        "storage_cost_per_node",
        "management_network_cost_per_node",
        "depreciation_years",
        "residual_value_fraction",
    ):
        assert required in d.values
    assert d.value("interest_rate") > 0 and d.value("staff_fte_per_node") > 0  # not silently 0
    assert d.server_price_per_node("H100-SXM") == 310000
    assert d.node_power_kw("H100-SXM") == 10.2


def test_alibaba_prices_keep_their_date_region_and_monthly_price():
    rows = {o.instance_type: o for o in offers.load_shipped_offers() if o.provider == "alibaba"}
    big = rows["ecs.gn7e-c16g1.32xlarge"]
    assert (big.price, big.monthly_price, big.currency) == (277.93, 133408, "CNY")
    assert big.region == "cn-shanghai" and big.as_of == dt.date(2023, 6, 17) and big.network_gbps == 64
    assert big.gpu_spec().key == "A100-SXM-80GB"
    assert all("ecs-buy.aliyun.com" in o.price_source for o in rows.values())
