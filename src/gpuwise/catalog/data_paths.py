"""Data movement as its own link: how long bringing a data set to the compute takes, and what it costs.

Source document 003: uploading a large training set "takes extremely long; use a dedicated line". The
time is bounded by the path the bytes cross, never by the GPU fabric (EFA / InfiniBand / RoCE carry
NCCL traffic, not object-store reads):

- same region: the nodes read the bucket over the VPC, bounded by the per-prefix request rate (S3),
  the per-bucket / per-account bandwidth (Tencent COS, Alibaba OSS) and what one node's client reads;
- internet: another region or another cloud, an assumed rate with a range unless you measured yours
  (`link_gbps`), also bounded by the source's limits;
- dedicated line (Direct Connect / 专线): the port you have (`dedicated_line_gbps`);
- shipping disks (AWS Snowball Edge, Tencent CDM, Alibaba Data Transport): days, whatever the size
  up to the devices' capacity.

Every limit comes from data/data_paths.yaml with its public source or is labelled an assumption. Egress
is priced by the source in its own currency; converting it to the run's currency is plan/currency.py's.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any, Literal

import yaml

from gpuwise.i18n import joined, msg

DATA_FILE = "data/data_paths.yaml"
RDMA_FABRICS = ("efa", "infiniband", "roce")
# Regions in the Chinese mainland, where COS and OSS have the higher default bandwidth limit.
_MAINLAND = ("ap-beijing", "ap-shanghai", "ap-guangzhou", "ap-chengdu", "ap-chongqing", "ap-nanjing")
PathKind = Literal["same-region", "internet", "dedicated-line", "upload", "shipping"]


@cache
def table() -> dict[str, Any]:
    text = resources.files("gpuwise.catalog").joinpath(DATA_FILE).read_text(encoding="utf-8")
    return yaml.safe_load(text)


def _src(text: str) -> str:
    return joined(" ", str(text).split())


def all_sources() -> list[str]:
    """Every source text of the table (quoted, never translated, in reports)."""
    out: list[str] = []

    def walk(node: Any, key: str = "") -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, str(k))
        elif isinstance(node, list):
            for v in node:
                walk(v, key)
        elif key.endswith("source") and node:
            out.append(_src(node))

    walk(table())
    return out


@dataclass(frozen=True)
class Source:
    """Where the data set is: its kind, URL scheme and region, and the links the user has measured."""

    kind: str  # local | object-store | nfs
    scheme: str = ""
    region: str | None = None
    link_gbps: float | None = None  # measured: upload, or a cross-region / cross-cloud copy
    dedicated_line_gbps: float | None = None  # Direct Connect / 专线 port


@dataclass(frozen=True)
class Target:
    """Where the compute is."""

    provider: str | None
    region: str | None = None
    nodes: int = 1
    network_gbps: float | None = None  # per node, catalogued
    fabric: str | None = None


@dataclass
class PathEstimate:
    path: PathKind
    gbps: float | None
    hours: float | None
    bound: str  # what bounds the rate, with its source
    egress_per_gb: float | None = None
    currency: str | None = None
    cost_source: str = ""
    assumption: bool = False
    devices: int | None = None  # shipping: how many devices

    def cost(self, size_bytes: int | None) -> float | None:
        if self.egress_per_gb is None or size_bytes is None:
            return None
        return self.egress_per_gb * size_bytes / 1e9


@dataclass
class DataMove:
    """The paths a data set can take to the compute and the one that is fastest for its size."""

    size_bytes: int | None
    chosen: PathEstimate
    options: list[PathEstimate] = field(default_factory=list)
    note: str = ""

    @property
    def cost(self) -> float | None:
        return self.chosen.cost(self.size_bytes)


def kind_of(source: str) -> Literal["local", "object-store", "nfs"]:
    """A data set's kind from where it is: an object-store URL, an NFS export (host:/path) or a local path."""
    if re.match(r"^(s3|cos|gs|gcs|r2|oss|az|https?)://", source):
        return "object-store"
    if source.startswith("nfs://") or re.match(r"^[A-Za-z0-9.\-]+:/", source):
        return "nfs"
    return "local"


def scheme_of(source: str) -> str:
    return source.split("://", 1)[0] if "://" in source else kind_of(source)


def store(scheme: str) -> dict[str, Any] | None:
    return table()["stores"].get(scheme)


def store_provider(scheme: str) -> str | None:
    s = store(scheme)
    return s["provider"] if s else None


def _mainland(region: str | None) -> bool:
    r = (region or "").lower()
    return r.startswith("cn-") or r.startswith(_MAINLAND)


def _hours(size_bytes: int | None, gbps: float | None) -> float | None:
    if size_bytes is None or not gbps:
        return None
    return size_bytes * 8 / (gbps * 1e9) / 3600


def _store_limit(scheme: str, region: str | None) -> tuple[float | None, str]:
    """The bucket's own bandwidth limit (COS per bucket, OSS per account), or None when none is published."""
    s = store(scheme)
    if not s or not s.get("bucket_gbps"):
        return None, ""
    limits = s["bucket_gbps"]
    gbps = float(limits["mainland"] if _mainland(region) else limits["other"])
    return gbps, _src(s["bucket_source"])


def _prefix_limit(scheme: str) -> tuple[float | None, str]:
    """S3: GET requests per second per prefix x the part size each request reads."""
    s = store(scheme)
    if not s or not s.get("get_per_second_per_prefix"):
        return None, ""
    gbps = s["get_per_second_per_prefix"] * s["part_mb"] * 1e6 * 8 / 1e9
    return gbps, msg("{rate} GET/s per prefix x {mb} MB parts: {request}; {part}").format(
        rate=f"{s['get_per_second_per_prefix']:,}",
        mb=s["part_mb"],
        request=_src(s["request_source"]),
        part=_src(s["part_source"]),
    )


def _min_bound(bounds: list[tuple[float | None, str]]) -> tuple[float | None, str]:
    known = [(g, why) for g, why in bounds if g]
    return min(known, key=lambda b: b[0]) if known else (None, "")


def same_region(size_bytes: int | None, src: Source, tgt: Target) -> PathEstimate:
    p = table()["paths"]["same_region"]
    per_node, why_node = float(p["per_node_gbps"]), _src(p["source"])
    if tgt.network_gbps and (tgt.fabric or "") not in RDMA_FABRICS and tgt.network_gbps < per_node:
        per_node = tgt.network_gbps
        why_node = msg("the node's catalogued network ({gbps} Gbit/s)").format(gbps=f"{tgt.network_gbps:g}")
    nodes = max(1, tgt.nodes)
    readers = (
        per_node * nodes,
        msg("{nodes} node(s) each reading its share at {gbps} Gbit/s ({why})").format(
            nodes=nodes, gbps=f"{per_node:g}", why=why_node
        ),
    )
    region = src.region or tgt.region  # same place: the bucket is in the nodes' region
    gbps, why = _min_bound([readers, _store_limit(src.scheme, region), _prefix_limit(src.scheme)])
    return PathEstimate(
        "same-region", gbps, _hours(size_bytes, gbps), why, 0.0, _currency(src.scheme),
        msg("free within the bucket's region: {source}").format(source=_egress_source(src.scheme)),
        assumption=why == readers[1] and why_node == _src(p["source"]),
    )  # fmt: skip


def _currency(scheme: str) -> str | None:
    s = store(scheme)
    return s["currency"] if s else None


def _egress_source(scheme: str) -> str:
    s = store(scheme)
    return _src(s.get("egress_source") or s.get("bucket_source") or "") if s else ""


def _egress(scheme: str) -> tuple[float | None, str | None, str]:
    s = store(scheme)
    if not s:
        return (
            None,
            None,
            msg("no egress price known for {scheme}: add dataset.egress_price_per_gb").format(scheme=scheme),
        )
    if s.get("egress_per_gb") is None:
        return (
            None,
            s["currency"],
            msg("no {scheme} egress price in the catalog yet: add dataset.egress_price_per_gb").format(
                scheme=scheme
            ),
        )
    return float(s["egress_per_gb"]), s["currency"], _src(s["egress_source"])


def _source_limits(src: Source) -> list[tuple[float | None, str]]:
    return [_store_limit(src.scheme, src.region), _prefix_limit(src.scheme)]


def _target_ingress(tgt: Target) -> list[tuple[float | None, str]]:
    """What the target's instances take in from the internet, where the provider publishes a cap.

    EC2's cap for internet traffic (50% of the instance's bandwidth from 32 vCPUs) is far above the
    internet rate for a GPU instance, so only Tencent's per-instance public bandwidth bounds it here."""
    p = table()["paths"]["internet"]
    if (tgt.provider or "").startswith("tencent"):
        gbps = float(p["tencent_instance_public_gbps"]) * max(1, tgt.nodes)
        return [(gbps, _src(p["tencent_instance_public_source"]))]
    return []


def internet(size_bytes: int | None, src: Source, tgt: Target) -> PathEstimate:
    p = table()["paths"]["internet"]
    if src.link_gbps:
        link = (src.link_gbps, msg("your measured link (dataset.link_gbps)"))
        assumed = False
    else:
        lo, hi = p["range"]
        link = (
            float(p["gbps"]),
            msg("{source} (range {lo}-{hi} Gbit/s)").format(source=_src(p["source"]), lo=lo, hi=hi),
        )
        assumed = True
    bounds = [link, *(_source_limits(src) if src.kind == "object-store" else []), *_target_ingress(tgt)]
    gbps, why = _min_bound(bounds)
    if src.kind == "object-store":
        price, ccy, cost_source = _egress(src.scheme)
        s = store(src.scheme) or {}
        if s.get("cross_region_per_gb") is not None and (tgt.provider or "").startswith(s["provider"]):
            price, cost_source = float(s["cross_region_per_gb"]), _src(s["cross_region_source"])
    else:
        price, ccy, cost_source = None, None, ""
    return PathEstimate(
        "upload" if src.kind != "object-store" else "internet", gbps, _hours(size_bytes, gbps), why,
        price, ccy, cost_source, assumption=assumed and why == link[1],
    )  # fmt: skip


def dedicated_line(size_bytes: int | None, src: Source) -> PathEstimate | None:
    if not src.dedicated_line_gbps:
        return None
    p = table()["paths"]["dedicated_line"]
    line = (src.dedicated_line_gbps, msg("your dedicated line (dataset.dedicated_line_gbps; ports: {ports} Gbit/s, {source})").format(
        ports=joined(", ", (str(x) for x in p["port_gbps"])), source=_src(p["source"])))  # fmt: skip
    gbps, why = _min_bound([line, *(_source_limits(src) if src.kind == "object-store" else [])])
    if store_provider(src.scheme) == "aws":
        price, ccy, cost_source = float(p["egress_per_gb"]), p["currency"], _src(p["egress_source"])
    else:
        price, ccy, cost_source = None, None, msg("check the line's port-hour and transfer price")
    return PathEstimate("dedicated-line", gbps, _hours(size_bytes, gbps), why, price, ccy, cost_source)


def shipping(size_bytes: int | None, tgt: Target) -> PathEstimate | None:
    """Disks by courier to the target provider: a fixed number of days, devices in parallel."""
    device = next(
        (d for d in table()["shipping"] if tgt.provider and tgt.provider.startswith(d["provider"])), None
    )
    if device is None or size_bytes is None:
        return None
    devices = max(1, math.ceil(size_bytes / (device["capacity_tb"] * 1e12)))
    lo, hi = device["days_range"]
    why = msg("{name}: {n} x {tb} TB ({capacity}); {days} days ({days_source}, range {lo}-{hi})").format(
        name=device["name"], n=devices, tb=device["capacity_tb"], capacity=_src(device["capacity_source"]),
        days=device["days"], days_source=_src(device["days_source"]), lo=lo, hi=hi,
    )  # fmt: skip
    return PathEstimate(
        "shipping", None, device["days"] * 24.0, why, None, None,
        msg("ask {name} for the price of {n} device(s)").format(name=device["name"], n=devices),
        assumption=True, devices=devices,
    )  # fmt: skip


def same_place(src: Source, tgt: Target) -> bool:
    """The bucket is the target provider's and (when both are known) in the target's region."""
    owner = store_provider(src.scheme)
    if not owner or not (tgt.provider or "").startswith(owner):
        return False
    return not (src.region and tgt.region) or src.region == tgt.region


def move(size_bytes: int | None, src: Source, tgt: Target) -> DataMove:
    """Every path the data set can take to the target, and the fastest (shipping compared with online)."""
    options: list[PathEstimate] = []
    if src.kind == "object-store" and same_place(src, tgt):
        options.append(same_region(size_bytes, src, tgt))
    else:
        if src.kind != "local" or src.link_gbps:
            options.append(internet(size_bytes, src, tgt))
        line = dedicated_line(size_bytes, src)
        if line:
            options.append(line)
        if src.kind == "local" and not src.link_gbps and not line:
            options.append(PathEstimate("upload", None, None,
                                        msg("your upload bandwidth is unknown: measure it and add dataset.link_gbps")))  # fmt: skip
        ship = shipping(size_bytes, tgt) if src.kind == "local" else None  # disks leave your site
        if ship:
            options.append(ship)
    online = [o for o in options if o.path != "shipping"]
    known = [o for o in options if o.hours is not None]
    if online and all(o.hours is None for o in online):
        chosen = online[0]  # unknown online time: say so rather than pick the disks by default
    else:
        chosen = min(known, key=lambda o: o.hours or 0.0) if known else options[0]
    return DataMove(size_bytes, chosen, options, _compare(chosen, options))


def _compare(chosen: PathEstimate, options: list[PathEstimate]) -> str:
    ship = next((o for o in options if o.path == "shipping"), None)
    online = [o for o in options if o.path != "shipping" and o.hours is not None]
    if ship is None or not online:
        return ""
    best = min(online, key=lambda o: o.hours or 0.0)
    if chosen is ship:
        return msg("shipping disks ({ship} days) is faster than the best online path ({online} h) for this size").format(
            ship=f"{(ship.hours or 0) / 24:g}", online=f"{best.hours:.1f}")  # fmt: skip
    return msg("online ({online} h) is faster than shipping disks ({ship} days) for this size").format(
        online=f"{best.hours:.1f}", ship=f"{(ship.hours or 0) / 24:g}")  # fmt: skip
