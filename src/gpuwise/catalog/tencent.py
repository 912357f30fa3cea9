"""Tencent Cloud GPU price fetcher: live CVM prices and stock per zone, written as an offers CSV.

Uses the official SDK (`pip install 'gpuwise[tencent]'`, i.e. tencentcloud-sdk-python-cvm):
`DescribeZoneInstanceConfigInfos` once per charge type (POSTPAID_BY_HOUR → Price, SPOTPAID →
SpotPrice, PREPAID → Reserved1yPrice / Reserved3yPrice as hourly equivalents). When the API returns
no on-demand price for a type and an image id is given, `InquiryPriceRunInstances` asks for it.

Credentials come from TENCENTCLOUD_SECRET_ID and TENCENTCLOUD_SECRET_KEY (and optional
TENCENTCLOUD_SESSION_TOKEN). They are passed to the SDK only: never logged, printed or written.

The API does not name the GPU model, so AcceleratorName, GpuKey and fabric come from the shipped
tencent.csv rows of the same instance family (GT4 → A100 40 GB, ...). Unknown families keep an
empty AcceleratorName and say so in Notes.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
from collections.abc import Iterable
from typing import Any

from gpuwise.catalog import offers as offers_mod
from gpuwise.catalog.offers import Offer
from gpuwise.errors import EnvironmentProblem, MissingDependencyError, UserInputError
from gpuwise.i18n import joined, msg

log = logging.getLogger(__name__)

PRICE_SOURCE = "tencentcloud API DescribeZoneInstanceConfigInfos"
INSTALL_HINT = "pip install 'gpuwise[tencent]'   (installs tencentcloud-sdk-python-cvm)"
CHARGE_TYPES = ("POSTPAID_BY_HOUR", "SPOTPAID", "PREPAID")
HOURS_PER_YEAR = 8760
_STATUS = {"SELL": "available", "SOLD_OUT": "sold-out"}


def _sdk():
    try:
        from tencentcloud.common import credential
        from tencentcloud.common.exception.tencent_cloud_sdk_exception import TencentCloudSDKException
        from tencentcloud.cvm.v20170312 import cvm_client, models
    except ImportError:
        raise MissingDependencyError(msg("the Tencent Cloud SDK is not installed"), INSTALL_HINT) from None
    return credential, TencentCloudSDKException, cvm_client, models


def make_client(region: str):
    """A CvmClient for `region`, with credentials from the environment (never echoed)."""
    credential, _error, cvm_client, _models = _sdk()
    secret_id = os.environ.get("TENCENTCLOUD_SECRET_ID", "").strip()
    secret_key = os.environ.get("TENCENTCLOUD_SECRET_KEY", "").strip()
    if not secret_id or not secret_key:
        raise UserInputError(
            msg("Tencent Cloud credentials are not set"),
            msg(
                "export TENCENTCLOUD_SECRET_ID and TENCENTCLOUD_SECRET_KEY (an API key from the CAM "
                "console; read-only CVM access is enough)"
            ),
        )
    token = os.environ.get("TENCENTCLOUD_SESSION_TOKEN") or None
    return cvm_client.CvmClient(credential.Credential(secret_id, secret_key, token), region)


def _filters(charge_type: str, zones: Iterable[str], families: Iterable[str]) -> list[dict[str, Any]]:
    filters = [{"Name": "instance-charge-type", "Values": [charge_type]}]
    if zones:
        filters.append({"Name": "zone", "Values": list(zones)})
    if families:
        filters.append({"Name": "instance-family", "Values": list(families)})
    return filters


def _call(client, action: str, params: dict[str, Any]) -> dict[str, Any]:
    """Call one SDK action with a JSON-shaped request; return the response as a plain dict."""
    _credential, sdk_error, _client, models = _sdk()
    request = getattr(models, f"{action}Request")()
    request.from_json_string(json.dumps(params))
    try:
        response = getattr(client, action)(request)
    except sdk_error as exc:
        raise EnvironmentProblem(
            msg("Tencent Cloud {action} failed: {code}: {message}").format(
                action=action, code=exc.code, message=exc.message
            ),
            msg("check the region name, your network, and that the API key may call cvm:{action}").format(
                action=action
            ),
        ) from None
    return json.loads(response.to_json_string())


def fetch_quota(client, zones: Iterable[str] = (), families: Iterable[str] = ()) -> dict[str, list[dict]]:
    """InstanceTypeQuotaSet per charge type. SPOTPAID/PREPAID failures are logged and skipped."""
    result: dict[str, list[dict]] = {}
    for charge in CHARGE_TYPES:
        params = {"Filters": _filters(charge, zones, families)}
        try:
            result[charge] = (
                _call(client, "DescribeZoneInstanceConfigInfos", params).get("InstanceTypeQuotaSet") or []
            )
        except EnvironmentProblem:
            if charge == "POSTPAID_BY_HOUR":
                raise
            log.warning("Tencent Cloud: no %s prices (the call failed); those columns stay empty", charge)
            result[charge] = []
    return result


def _gpu_count(item: dict) -> float:
    count = item.get("GpuCount")
    if count in (None, 0):
        count = item.get("Gpu")
    return float(count or 0)


def _hourly(price: dict | None) -> float | None:
    # Post-paid prices: the discounted unit price per hour (first tier when the API returns tiers).
    if not price or (price.get("ChargeUnit") not in (None, "HOUR")):
        return None
    value = price.get("UnitPriceDiscount")
    if value in (None, 0):
        value = price.get("UnitPrice")
    return float(value) if value else None


def _prepaid_hourly(price: dict | None, years: int) -> float | None:
    if not price:
        return None
    word = {1: "OneYear", 3: "ThreeYear"}[years]
    total = price.get(f"DiscountPrice{word}") or price.get(f"OriginalPrice{word}")
    return float(total) / (HOURS_PER_YEAR * years) if total else None


def _family_templates() -> dict[str, Offer]:
    # Instance family ("GT4") -> a shipped tencent row, for the GPU model the API does not report.
    templates: dict[str, Offer] = {}
    for offer in offers_mod.load_shipped_offers():
        if offer.provider == "tencent":
            templates.setdefault(offer.instance_type.split(".")[0].upper(), offer)
    return templates


def offers_from_quota(
    quota: dict[str, list[dict]], region: str, today: dt.date | None = None, inquired: dict | None = None
) -> list[Offer]:
    """Map DescribeZoneInstanceConfigInfos results (per charge type) to one Offer per zone and GPU type."""
    today = today or dt.date.today()
    templates = _family_templates()
    spot = {(i.get("Zone"), i.get("InstanceType")): i for i in quota.get("SPOTPAID", [])}
    prepaid = {(i.get("Zone"), i.get("InstanceType")): i for i in quota.get("PREPAID", [])}
    out: list[Offer] = []
    for item in quota.get("POSTPAID_BY_HOUR", []):
        count = _gpu_count(item)
        if count <= 0:
            continue  # not a GPU type
        zone, itype = item.get("Zone"), item.get("InstanceType")
        if not itype:
            continue
        family = (item.get("InstanceFamily") or itype.split(".")[0]).upper()
        template = templates.get(family)
        price = _hourly(item.get("Price"))
        price_note = ""
        if price is None and inquired and (zone, itype) in inquired:
            price, price_note = inquired[(zone, itype)], "price from InquiryPriceRunInstances; "
        tiered = bool((item.get("Price") or {}).get("UnitPriceSecondStep"))
        notes = [
            price_note.rstrip("; "),
            "first-tier hourly price (cheaper after 96 h and 360 h)" if tiered else "",
            f"stock: {item['StatusCategory']}" if item.get("StatusCategory") else "",
            f"sold out: {item['SoldOutReason']}" if item.get("SoldOutReason") else "",
            "" if template else "GPU model not reported by the API and family not in the shipped catalog",
        ]
        bandwidth = item.get("InstanceBandwidth")
        out.append(
            Offer(
                provider="tencent",
                instance_type=itype,
                accelerator_name=template.accelerator_name if template else None,
                accelerator_count=count,
                vcpus=float(item["Cpu"]) if item.get("Cpu") is not None else None,
                memory_gib=float(item["Memory"]) if item.get("Memory") is not None else None,
                price=price,
                spot_price=_hourly((spot.get((zone, itype)) or {}).get("Price")),
                reserved_1y_price=_prepaid_hourly((prepaid.get((zone, itype)) or {}).get("Price"), 1),
                reserved_3y_price=_prepaid_hourly((prepaid.get((zone, itype)) or {}).get("Price"), 3),
                region=region,
                zone=zone,
                network_gbps=float(bandwidth) if bandwidth else (template.network_gbps if template else None),
                fabric=template.fabric if template else None,
                rdma_gbps=template.rdma_gbps if template else None,
                currency="CNY",
                price_source=f"{PRICE_SOURCE} ({region})",
                as_of=today,
                status=_STATUS.get(item.get("Status") or ""),
                gpu_key=template.gpu_key if template else None,
                notes=joined("; ", (n for n in notes if n)),
            )
        )
    return out


def inquire_missing(client, quota: dict[str, list[dict]], image_id: str) -> dict[tuple[str, str], float]:
    """Ask InquiryPriceRunInstances for GPU types that came back without an on-demand price."""
    found: dict[tuple[str, str], float] = {}
    for item in quota.get("POSTPAID_BY_HOUR", []):
        if _gpu_count(item) <= 0 or _hourly(item.get("Price")) is not None:
            continue
        params = {
            "Placement": {"Zone": item.get("Zone")},
            "ImageId": image_id,
            "InstanceType": item.get("InstanceType"),
            "InstanceChargeType": "POSTPAID_BY_HOUR",
        }
        try:
            response = _call(client, "InquiryPriceRunInstances", params)
        except EnvironmentProblem as exc:
            log.warning("no price for %s in %s: %s", item.get("InstanceType"), item.get("Zone"), exc.message)
            continue
        hourly = _hourly((response.get("Price") or {}).get("InstancePrice"))
        if hourly is not None:
            found[(item.get("Zone"), item.get("InstanceType"))] = hourly
    return found


def fetch_tencent_offers(
    region: str,
    zones: Iterable[str] = (),
    families: Iterable[str] = (),
    image_id: str | None = None,
    client=None,
    today: dt.date | None = None,
) -> list[Offer]:
    """Live GPU offers for one region (all zones unless `zones`), sorted by family, size and zone."""
    client = client or make_client(region)
    quota = fetch_quota(client, zones, families)
    inquired = inquire_missing(client, quota, image_id) if image_id else None
    offers = offers_from_quota(quota, region, today, inquired)
    return sorted(offers, key=lambda o: (o.instance_type, o.zone or ""))
