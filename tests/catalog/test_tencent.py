"""The Tencent Cloud fetcher, tested on responses in the API's documented shape (no network).

The shapes follow DescribeZoneInstanceConfigInfos' InstanceTypeQuotaSet / InstanceTypeQuotaItem /
ItemPrice and InquiryPriceRunInstances' Price.InstancePrice, as the SDK's models.py documents them.
When the SDK is installed, responses go through its own model classes (`_deserialize`), as they
would from the wire.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import sys

import pytest
from typer.testing import CliRunner

from gpuwise.catalog import offers, tencent
from gpuwise.cli import app
from gpuwise.errors import MissingDependencyError, UserInputError

TODAY = dt.date(2026, 11, 29)


def quota_item(itype, zone, charge, price, gpus=8.0, status="SELL", family=None, **extra):
    item = {
        "Zone": zone,
        "InstanceType": itype,
        "InstanceChargeType": charge,
        "NetworkCard": 50,
        "Externals": {},
        "Cpu": 164,
        "Memory": 948,
        "InstanceFamily": family or itype.split(".")[0],
        "TypeName": "GPU",
        "LocalDiskTypeList": [],
        "Status": status,
        "Price": price,
        "SoldOutReason": "",
        "InstanceBandwidth": 50.0,
        "InstancePps": 1200,
        "StorageBlockAmount": 0,
        "CpuType": "AMD EPYC",
        "Gpu": int(gpus),
        "Fpga": 0,
        "Remark": "",
        "GpuCount": gpus,
        "Frequency": "2.6GHz",
        "StatusCategory": "EnoughStock" if status == "SELL" else "WithoutStock",
    }
    item.update(extra)
    return item


POSTPAID = [
    quota_item(
        "GT4.41XLARGE948",
        "ap-guangzhou-4",
        "POSTPAID_BY_HOUR",
        {"UnitPrice": 140.0, "ChargeUnit": "HOUR", "UnitPriceDiscount": 126.0, "Discount": 90.0},
    ),
    quota_item(
        "GT4.41XLARGE948",
        "ap-guangzhou-6",
        "POSTPAID_BY_HOUR",
        {
            "UnitPrice": 140.0,
            "ChargeUnit": "HOUR",
            "UnitPriceDiscount": 140.0,
            "UnitPriceSecondStep": 90.0,
            "UnitPriceThirdStep": 60.0,
        },
        status="SOLD_OUT",
        SoldOutReason="no stock",
    ),
    quota_item(
        "PNV4.7XLARGE116", "ap-guangzhou-4", "POSTPAID_BY_HOUR", None, gpus=1.0, InstanceBandwidth=13.0
    ),
    quota_item(
        "XZ9.8XLARGE64",
        "ap-guangzhou-4",
        "POSTPAID_BY_HOUR",
        {"UnitPrice": 9.0, "ChargeUnit": "HOUR"},
        gpus=2.0,
        family="XZ9",
    ),
    quota_item(
        "S5.LARGE8", "ap-guangzhou-4", "POSTPAID_BY_HOUR", {"UnitPrice": 0.5, "ChargeUnit": "HOUR"}, gpus=0.0
    ),
]
SPOT = [
    quota_item(
        "GT4.41XLARGE948",
        "ap-guangzhou-4",
        "SPOTPAID",
        {"UnitPrice": 40.0, "ChargeUnit": "HOUR", "UnitPriceDiscount": 38.5},
    )
]
PREPAID = [
    quota_item(
        "GT4.41XLARGE948",
        "ap-guangzhou-4",
        "PREPAID",
        {
            "OriginalPrice": 60000.0,
            "DiscountPrice": 60000.0,
            "DiscountPriceOneYear": 876000.0,
            "DiscountPriceThreeYear": 1576800.0,
        },
    )
]
BY_CHARGE = {"POSTPAID_BY_HOUR": POSTPAID, "SPOTPAID": SPOT, "PREPAID": PREPAID}


def test_mapping_from_documented_shape():
    rows = tencent.offers_from_quota(BY_CHARGE, "ap-guangzhou", TODAY)
    by = {(o.instance_type, o.zone): o for o in rows}
    assert set(by) == {
        ("GT4.41XLARGE948", "ap-guangzhou-4"),
        ("GT4.41XLARGE948", "ap-guangzhou-6"),
        ("PNV4.7XLARGE116", "ap-guangzhou-4"),
        ("XZ9.8XLARGE64", "ap-guangzhou-4"),
    }  # S5 has no GPU
    gz4 = by[("GT4.41XLARGE948", "ap-guangzhou-4")]
    assert (gz4.price, gz4.spot_price, gz4.currency, gz4.status) == (126.0, 38.5, "CNY", "available")
    assert gz4.reserved_1y_price == pytest.approx(100.0) and gz4.reserved_3y_price == pytest.approx(60.0)
    assert (gz4.accelerator_name, gz4.gpu_key, gz4.accelerator_count) == ("A100", "A100-SXM-40GB", 8.0)
    assert (gz4.vcpus, gz4.memory_gib, gz4.network_gbps, gz4.fabric) == (164, 948, 50.0, "vpc-tcp")
    assert (
        gz4.region == "ap-guangzhou"
        and gz4.as_of == TODAY
        and gz4.price_source.startswith(tencent.PRICE_SOURCE)
    )
    gz6 = by[("GT4.41XLARGE948", "ap-guangzhou-6")]
    assert gz6.status == "sold-out" and "first-tier" in gz6.notes and "no stock" in gz6.notes
    pnv4 = by[("PNV4.7XLARGE116", "ap-guangzhou-4")]
    assert pnv4.price is None and pnv4.network_gbps == 13.0 and pnv4.gpu_key == "A10"
    unknown = by[("XZ9.8XLARGE64", "ap-guangzhou-4")]
    assert unknown.accelerator_name is None and "not reported by the API" in unknown.notes


sdk = pytest.importorskip  # alias for readability below


class FakeCvmClient:
    """Answers like CvmClient, from the documented shapes, through the SDK's own model classes."""

    def __init__(self, by_charge, inquiry_price=None):
        from tencentcloud.cvm.v20170312 import models

        self.models, self.by_charge, self.inquiry_price, self.calls = models, by_charge, inquiry_price, []

    def DescribeZoneInstanceConfigInfos(self, request):  # noqa: N802 (SDK method name)
        filters = {f.Name: f.Values for f in request.Filters}
        self.calls.append(("DescribeZoneInstanceConfigInfos", filters))
        charge = filters["instance-charge-type"][0]
        items = [i for i in self.by_charge[charge] if "zone" not in filters or i["Zone"] in filters["zone"]]
        response = self.models.DescribeZoneInstanceConfigInfosResponse()
        response._deserialize({"InstanceTypeQuotaSet": items, "RequestId": "req-1"})
        return response

    def InquiryPriceRunInstances(self, request):  # noqa: N802
        self.calls.append(
            ("InquiryPriceRunInstances", request.InstanceType, request.Placement.Zone, request.ImageId)
        )
        response = self.models.InquiryPriceRunInstancesResponse()
        response._deserialize(
            {
                "Price": {
                    "InstancePrice": {"UnitPrice": self.inquiry_price, "ChargeUnit": "HOUR"},
                    "BandwidthPrice": {"UnitPrice": 0.0, "ChargeUnit": "GB"},
                },
                "RequestId": "req-2",
            }
        )
        return response


def test_fetch_through_sdk_models_with_zone_filter_and_inquiry():
    sdk("tencentcloud.cvm.v20170312.models")
    client = FakeCvmClient(BY_CHARGE, inquiry_price=21.5)
    rows = tencent.fetch_tencent_offers(
        "ap-guangzhou", zones=["ap-guangzhou-4"], image_id="img-abc", client=client, today=TODAY
    )
    assert [c[1]["instance-charge-type"] for c in client.calls[:3]] == [
        ["POSTPAID_BY_HOUR"],
        ["SPOTPAID"],
        ["PREPAID"],
    ]
    assert all(c[1]["zone"] == ["ap-guangzhou-4"] for c in client.calls[:3])
    assert ("InquiryPriceRunInstances", "PNV4.7XLARGE116", "ap-guangzhou-4", "img-abc") in client.calls
    by = {o.instance_type: o for o in rows}
    assert by["PNV4.7XLARGE116"].price == 21.5 and "InquiryPriceRunInstances" in by["PNV4.7XLARGE116"].notes
    assert by["GT4.41XLARGE948"].price == 126.0


def test_cli_fetch_writes_offers_atomically_and_never_leaks_credentials(monkeypatch, tmp_path, caplog):
    sdk("tencentcloud.cvm.v20170312.cvm_client")
    from tencentcloud.cvm.v20170312 import cvm_client

    seen = {}

    def fake_client(cred, region):
        seen["region"], seen["id"] = region, cred.secret_id
        return FakeCvmClient(BY_CHARGE)

    monkeypatch.setattr(cvm_client, "CvmClient", fake_client)
    monkeypatch.setenv("TENCENTCLOUD_SECRET_ID", "AKIDsecretid0000")
    monkeypatch.setenv("TENCENTCLOUD_SECRET_KEY", "supersecretkey0000")
    out = tmp_path / "tencent.csv"
    with caplog.at_level(logging.DEBUG):
        result = CliRunner().invoke(
            app, ["catalog", "fetch", "tencent", "--region", "ap-guangzhou", "-o", str(out)]
        )
    assert result.exit_code == 0, result.output
    assert seen == {"region": "ap-guangzhou", "id": "AKIDsecretid0000"}
    text = out.read_text()
    for secret in ("AKIDsecretid0000", "supersecretkey0000"):
        assert secret not in text and secret not in result.output and secret not in caplog.text
    rows = offers.read_offers_file(out)
    assert len(rows) == 4 and {o.provider for o in rows} == {"tencent"}
    assert not list(tmp_path.glob(".*")), "no temp files left behind"
    # a refresh may replace gpuwise's own file...
    again = CliRunner().invoke(
        app, ["catalog", "fetch", "tencent", "--region", "ap-guangzhou", "-o", str(out)]
    )
    assert again.exit_code == 0
    # ...but never a file the user wrote
    mine = tmp_path / "mine.csv"
    mine.write_text("InstanceType,Price,PriceSource\nx,1,me\n")
    refused = CliRunner().invoke(
        app, ["catalog", "fetch", "tencent", "--region", "ap-guangzhou", "-o", str(mine)]
    )
    assert (
        isinstance(refused.exception, UserInputError)
        and mine.read_text() == "InstanceType,Price,PriceSource\nx,1,me\n"
    )


def test_missing_credentials_say_how_to_set_them(monkeypatch):
    sdk("tencentcloud.cvm.v20170312.cvm_client")
    monkeypatch.delenv("TENCENTCLOUD_SECRET_ID", raising=False)
    monkeypatch.delenv("TENCENTCLOUD_SECRET_KEY", raising=False)
    with pytest.raises(UserInputError, match="TENCENTCLOUD_SECRET_ID and TENCENTCLOUD_SECRET_KEY"):
        tencent.make_client("ap-guangzhou")


def test_missing_sdk_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "tencentcloud", None)
    monkeypatch.setitem(sys.modules, "tencentcloud.common", None)
    result = CliRunner().invoke(app, ["catalog", "fetch", "tencent", "--region", "ap-guangzhou"])
    assert isinstance(result.exception, MissingDependencyError)
    assert "pip install 'gpuwise[tencent]'" in str(result.exception)


def test_sdk_errors_become_clear_messages():
    sdk("tencentcloud.common.exception.tencent_cloud_sdk_exception")
    from tencentcloud.common.exception.tencent_cloud_sdk_exception import TencentCloudSDKException

    from gpuwise.errors import EnvironmentProblem

    class Failing(FakeCvmClient):
        def DescribeZoneInstanceConfigInfos(self, request):  # noqa: N802
            raise TencentCloudSDKException(
                "AuthFailure.SignatureFailure", "The provided credentials could not be validated."
            )

    with pytest.raises(EnvironmentProblem, match="AuthFailure.SignatureFailure"):
        tencent.fetch_tencent_offers("ap-guangzhou", client=Failing(BY_CHARGE))


def test_json_round_trip_of_documented_shape_matches_plain_dicts():
    # The mapping sees the same dicts whether they come from the SDK objects or straight from JSON.
    sdk("tencentcloud.cvm.v20170312.models")
    from tencentcloud.cvm.v20170312 import models

    response = models.DescribeZoneInstanceConfigInfosResponse()
    response._deserialize({"InstanceTypeQuotaSet": POSTPAID, "RequestId": "r"})
    via_sdk = json.loads(response.to_json_string())["InstanceTypeQuotaSet"]
    assert tencent.offers_from_quota(
        {"POSTPAID_BY_HOUR": via_sdk}, "ap-guangzhou", TODAY
    ) == tencent.offers_from_quota({"POSTPAID_BY_HOUR": POSTPAID}, "ap-guangzhou", TODAY)
