"""Offers: loading, user files that add to or override shipped rows, validation errors, filters."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpuwise.catalog import offers
from gpuwise.errors import DataValidationError, UserInputError

HEADER = (
    "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,SpotPrice,Region,AvailabilityZone"
)


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_user_file_overrides_shipped_row_and_adds_new_ones(isolated_config):
    _write(
        isolated_config / "aws.csv",
        f"{HEADER},NetworkGbps,Fabric,Currency,PriceSource,AsOf\np4d.24xlarge,A100,8,96,1152,19.5,,us-east-1,,400,efa,USD,my negotiated price,2026-10-01\np4d.24xlarge,A100,8,96,1152,25.0,,eu-west-1,,400,efa,USD,my quote,2026-10-01\n",
    )
    rows = offers.find_offer("p4d.24xlarge")
    us = [o for o in rows if o.provider == "aws" and o.region == "us-east-1"]
    assert len(us) == 1 and us[0].price == 19.5 and us[0].price_source == "my negotiated price"
    assert any(o.region == "eu-west-1" and o.price == 25.0 for o in rows)
    assert any(o.provider == "aws-capacity-blocks" for o in rows)  # other providers untouched


def test_regional_user_rows_replace_the_regionless_template(tmp_path):
    _write(
        tmp_path / "prices" / "tencent-ap-guangzhou.csv",
        f"Provider,{HEADER},Currency,PriceSource,AsOf\ntencent,GT4.41XLARGE948,A100,8,164,948,120.5,,ap-guangzhou,ap-guangzhou-4,CNY,test,2026-11-01\n",
    )
    rows = offers.find_offer("GT4.41XLARGE948", offers.load_offers([tmp_path / "prices"]))
    assert [(o.region, o.zone, o.price) for o in rows] == [("ap-guangzhou", "ap-guangzhou-4", 120.5)]
    # the other GT4 sizes keep their shipped template rows
    assert offers.find_offer("GT4.4XLARGE96", offers.load_offers([tmp_path / "prices"]))


def test_broken_user_csv_reports_file_line_and_is_left_untouched(isolated_config):
    text = f"{HEADER},Fabric,Currency\np4d.24xlarge,A100,8,96,1152,19.5,,us-east-1,,efa,USD\np5.48xlarge,H100,8,192,2048,fifty,,us-east-1,,efa,USD\n"
    path = _write(isolated_config / "mine.csv", text)
    before = (path.read_bytes(), os.stat(path).st_mtime_ns)
    with pytest.raises(DataValidationError) as err:
        offers.load_offers()
    message = str(err.value)
    assert message.startswith(f"{path}:3: column 'Price': 'fifty' is not a number")
    assert "To fix:" in message
    assert (path.read_bytes(), os.stat(path).st_mtime_ns) == before


@pytest.mark.parametrize(
    "column,value,suggestion",
    [
        ("Fabric", "infiniban", "infiniband"),
        ("Fabric", "roce2", "roce"),
        ("Currency", "usd2", "USD"),
        ("Currency", "RMB", None),
        ("Tier", "comunity", "community"),
    ],
)
def test_unknown_enum_values_get_a_did_you_mean(tmp_path, column, value, suggestion):
    path = _write(
        tmp_path / "x.csv", f"{HEADER},{column}\np5.48xlarge,H100,8,192,2048,55,,us-east-1,,{value}\n"
    )
    with pytest.raises(DataValidationError) as err:
        offers.read_offers_file(path)
    message = str(err.value)
    assert f"{path}:2: column '{column}': unknown value '{value}'" in message
    assert (f'did you mean "{suggestion}"' in message) if suggestion else ("did you mean" not in message)
    assert "use one of:" in message


def test_missing_required_column_and_unknown_gpu_key(tmp_path):
    path = _write(tmp_path / "x.csv", "Instance,AcceleratorName\np5,H100\n")
    with pytest.raises(DataValidationError, match=r"x.csv:1: missing column 'InstanceType'"):
        offers.read_offers_file(path)
    path = _write(
        tmp_path / "y.csv", f"{HEADER},GpuKey\np5.48xlarge,H100,8,192,2048,55,,us-east-1,,H100-SXN\n"
    )
    with pytest.raises(DataValidationError, match='did you mean "H100-SXM"'):
        offers.read_offers_file(path)


def test_missing_extra_dir_is_a_user_error(tmp_path):
    with pytest.raises(UserInputError, match="does not exist"):
        offers.load_offers([tmp_path / "nope"])


def test_gpu_filter_never_confuses_a10_a10g_a100():
    rows = offers.load_offers()

    def names(gpu):
        return {o.accelerator_name for o in offers.filter_offers(rows, gpu=gpu)}

    assert names("A10") == {"A10"}
    assert names("A10G") == {"A10G"}
    assert names("A100") == {"A100", "A100-80GB"}  # never A10 or A10G
    assert names("V100") == {"V100", "V100-32GB"}
    assert names("H100-SXM") == {"H100"}  # matched through GpuKey
    assert names("NVIDIA A100-SXM4-40GB") == {"A100"}  # a reported name resolves through the GPU catalog
    assert names("Tesla T4") == {"T4"}


def test_network_and_provider_filters():
    rows = offers.load_offers()
    fast = offers.filter_offers(rows, min_network_gbps=100)
    assert fast and all(o.best_network_gbps >= 100 for o in fast)
    assert {
        o.instance_type for o in offers.filter_offers(rows, provider="tencent", min_network_gbps=100)
    } >= {"PNV4.56XLARGE932", "HCCPNV4h", "HCCPNV5"}


def test_offer_helpers():
    p4d = next(o for o in offers.load_offers() if o.provider == "aws" and o.instance_type == "p4d.24xlarge")
    assert p4d.gpu_spec().key == "A100-SXM-40GB"
    assert p4d.price_per_gpu_hour == pytest.approx(p4d.price / 8)
    assert p4d.best_network_gbps == 400
