"""The data-path model (catalog/data_paths.py) against the sourced limits in data/data_paths.yaml."""

from __future__ import annotations

import pytest

from gpuwise.catalog import data_paths as dp

GB = 1e9


def hours(size_gb: float, gbps: float) -> float:
    return size_gb * GB * 8 / (gbps * 1e9) / 3600


def test_every_number_has_a_source_or_is_labelled_an_assumption():
    t = dp.table()
    for scheme, s in t["stores"].items():
        assert s["provider"] and s["currency"], scheme
        if s.get("bucket_gbps"):
            assert "https://" in s["bucket_source"], scheme
        if s.get("egress_per_gb") is not None:
            assert "https://" in s["egress_source"], scheme
    for name, p in t["paths"].items():
        assert "https://" in p["source"] or (p.get("assumption") and p["source"].startswith("assumption")), (
            name
        )
    for d in t["shipping"]:
        for what in ("capacity", "days"):
            src = d[f"{what}_source"]
            assert "https://" in src or (d.get(f"{what}_assumption") and src.startswith("assumption")), d[
                "name"
            ]
    assert all("REFERENCE" not in s and "DESIGN" not in s for s in dp.all_sources())


def test_same_region_s3_is_bounded_by_the_reader_not_the_gpu_fabric():
    # p5.48xlarge: 3,200 Gbit/s of EFA is the GPU fabric; S3 reads go over the VPC
    tgt = dp.Target("aws", "us-east-1", nodes=1, network_gbps=3200, fabric="efa")
    m = dp.move(int(120 * GB), dp.Source("object-store", "s3", "us-east-1"), tgt)
    assert m.chosen.path == "same-region"
    assert m.chosen.gbps == dp.table()["paths"]["same_region"]["per_node_gbps"] and m.chosen.gbps < 3200
    assert m.chosen.hours == pytest.approx(hours(120, m.chosen.gbps)) and m.chosen.hours * 3600 > 1
    assert m.cost == 0.0 and m.chosen.assumption


def test_s3_prefix_request_rate_bounds_many_readers():
    s = dp.table()["stores"]["s3"]
    prefix_gbps = s["get_per_second_per_prefix"] * s["part_mb"] * 1e6 * 8 / 1e9  # 5,500 x 8 MB = 352 Gbit/s
    assert prefix_gbps == pytest.approx(352.0)
    tgt = dp.Target("aws", None, nodes=16, network_gbps=3200, fabric="efa")
    m = dp.move(int(1000 * GB), dp.Source("object-store", "s3"), tgt)
    assert m.chosen.gbps == pytest.approx(prefix_gbps) and "GET/s per prefix" in m.chosen.bound


@pytest.mark.parametrize(("region", "gbps"), [("ap-guangzhou", 15.0), ("ap-singapore", 10.0)])
def test_cos_bucket_limit_depends_on_mainland(region, gbps):
    tgt = dp.Target("tencent", region, nodes=4, network_gbps=100, fabric="roce")
    m = dp.move(int(500 * GB), dp.Source("object-store", "cos", region), tgt)
    assert m.chosen.path == "same-region" and m.chosen.gbps == gbps
    assert "436/6281" in m.chosen.bound


def test_oss_account_limit():
    tgt = dp.Target("alibaba", "cn-hangzhou", nodes=8, network_gbps=200, fabric="roce")
    m = dp.move(int(500 * GB), dp.Source("object-store", "oss", "cn-hangzhou"), tgt)
    assert m.chosen.gbps == 10.0 and "usage-notes" in m.chosen.bound


def test_cross_cloud_goes_over_the_internet_and_is_priced_by_the_source():
    tgt = dp.Target("tencent", "ap-guangzhou", nodes=2, network_gbps=50, fabric="roce")
    m = dp.move(int(120 * GB), dp.Source("object-store", "s3", "us-east-1"), tgt)
    assert m.chosen.path == "internet" and m.chosen.assumption
    assert m.chosen.gbps == dp.table()["paths"]["internet"]["gbps"]
    assert m.chosen.hours == pytest.approx(hours(120, 1.0))
    assert m.cost == pytest.approx(120 * 0.09) and m.chosen.currency == "USD"


def test_cross_region_same_cloud_is_not_free():
    tgt = dp.Target("aws", "eu-west-1", network_gbps=400, fabric="efa")
    m = dp.move(int(10 * GB), dp.Source("object-store", "s3", "us-east-1"), tgt)
    assert m.chosen.path == "internet" and m.cost == pytest.approx(10 * 0.02)  # S3 to another AWS Region
    assert "To other AWS Regions" in m.chosen.cost_source


def test_a_measured_link_and_a_dedicated_line_replace_the_assumption():
    tgt = dp.Target("tencent", "ap-guangzhou", nodes=1)
    measured = dp.move(int(100 * GB), dp.Source("object-store", "s3", link_gbps=0.5), tgt)
    assert measured.chosen.gbps == 0.5 and not measured.chosen.assumption
    line = dp.move(int(100 * GB), dp.Source("object-store", "s3", dedicated_line_gbps=10), tgt)
    assert line.chosen.path == "dedicated-line" and line.chosen.gbps == 10
    assert line.chosen.egress_per_gb == pytest.approx(0.02)


def test_shipping_disks_win_for_a_large_local_set_and_lose_for_a_small_one():
    tgt = dp.Target("aws", "us-east-1", nodes=1)
    big = dp.move(int(500e12), dp.Source("local", link_gbps=1.0), tgt)  # 500 TB at 1 Gbit/s: 46 days
    assert big.chosen.path == "shipping" and big.chosen.devices == 7  # 80 TB each
    assert "shipping disks" in big.note and "faster" in big.note
    small = dp.move(int(120 * GB), dp.Source("local", link_gbps=1.0), tgt)
    assert small.chosen.path == "upload" and small.note.startswith("online")


def test_unknown_upload_is_said_not_replaced_by_shipping():
    m = dp.move(int(120 * GB), dp.Source("local"), dp.Target("tencent"))
    assert m.chosen.path == "upload" and m.chosen.hours is None and "link_gbps" in m.chosen.bound
    assert any(o.path == "shipping" and "CDM" in o.bound for o in m.options)
