"""Data transfer estimate: the dataset's size over the link it crosses, as time and money.

Source document 003: "the dataset upload takes very long". A local dataset is uploaded over your own
link (`dataset.link_gbps`, which you measure: nothing in a catalog knows it); an object-store or NFS
dataset is read by the nodes over their catalogued network. On your own Slurm cluster a local path or
NFS export is read in place (no copy). Egress prices come from data/egress.csv (one sourced row per
store) or the job's `dataset.egress_price_per_gb`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from gpuwise.datafiles import read_rows
from gpuwise.launch.job import Dataset
from gpuwise.launch.resources import Resources

EGRESS_FILE = Path(__file__).parent / "data" / "egress.csv"
DEFAULT_WARN_SHARE = 0.10  # a policy, not a measured fact: --transfer-warn-share changes it
INGRESS_AWS = "https://aws.amazon.com/s3/pricing/ (Data Transfer IN To Amazon S3 From Internet: $0.00 per GB)"
MAX_WALK_FILES = 2_000_000  # a bounded walk: beyond this, ask for size_gb instead of counting on


@dataclass
class TransferEstimate:
    kind: str  # local | object-store | nfs
    size_bytes: int | None
    size_source: str
    link_gbps: float | None
    link_source: str
    hours: float | None
    cost: float | None
    currency: str | None
    cost_source: str
    copy_needed: bool
    warning: str | None = None


@cache
def egress_prices() -> dict[str, tuple[float, str, str, str]]:
    """scheme -> (price per GB, currency, the provider that reads it free in its region, source)."""
    out = {}
    columns = ["Scheme", "PricePerGB", "Currency", "FreeWithin", "Tier", "AsOf", "Source"]
    for row in read_rows(EGRESS_FILE, ["Scheme", "PricePerGB", "Currency", "Source"], columns):
        scheme = row.text("Scheme", required=True) or ""
        price = float(row.number("PricePerGB", required=True) or 0.0)
        currency = row.text("Currency", required=True) or ""
        out[scheme] = (price, currency, row.text("FreeWithin") or "", row.text("Source") or "")
    return out


def local_size_bytes(path: Path) -> tuple[int | None, str]:
    """The bytes under `path` (a file or a folder), without following symlinks; bounded by MAX_WALK_FILES."""
    if path.is_file():
        return path.stat().st_size, f"measured: size of {path}"
    if not path.is_dir():
        return None, f"{path} does not exist here; add dataset.size_gb"
    total, files = 0, 0
    for root, _dirs, names in os.walk(path):
        for name in names:
            files += 1
            if files > MAX_WALK_FILES:
                return None, f"more than {MAX_WALK_FILES:,} files under {path}: add dataset.size_gb"
            try:
                st = os.lstat(os.path.join(root, name))
            except OSError:
                continue
            total += st.st_size
    return total, f"measured: {files:,} files under {path}"


def estimate(
    ds: Dataset, res: Resources, target: str, warn_share: float = DEFAULT_WARN_SHARE
) -> TransferEstimate:
    kind = ds.kind
    if ds.size_gb is not None:
        size, size_source = int(ds.size_gb * 1e9), "the job's dataset.size_gb"
    elif kind == "local":
        size, size_source = local_size_bytes(Path(ds.source).expanduser())
    else:
        size, size_source = None, "unknown: add dataset.size_gb (a remote dataset is not listed)"
    if target == "slurm" and kind in ("local", "nfs"):
        return TransferEstimate(kind, size, size_source, None, "", 0.0, 0.0, None,
                                "read in place on the cluster's shared filesystem", copy_needed=False)  # fmt: skip
    link, link_source = _link(ds, res, kind)
    hours = size * 8 / (link * 1e9) / 3600 if size is not None and link else None
    cost, currency, cost_source = _cost(ds, size, res)
    est = TransferEstimate(
        kind, size, size_source, link, link_source, hours, cost, currency, cost_source, True
    )
    if hours is not None and res.hours and hours > warn_share * res.hours:
        est.warning = (
            f"moving the dataset takes {hours:.1f} h, more than {warn_share:.0%} of the {res.hours:g} h "
            "of training: stage it in the target region's object store or on a disk snapshot first"
        )
    elif hours is None:
        est.warning = "transfer time unknown: " + (size_source if size is None else link_source)
    return est


def _link(ds: Dataset, res: Resources, kind: str) -> tuple[float | None, str]:
    if ds.link_gbps:
        return ds.link_gbps, "the job's dataset.link_gbps (your measurement)"
    if kind == "local":
        return None, "your upload bandwidth is unknown: measure it and add dataset.link_gbps"
    if res.network_gbps:
        return res.network_gbps, (
            f"catalogued network of {res.instance_type}, one node reading: an upper bound, "
            "an object store or NFS server usually delivers less"
        )
    return None, "no catalogued network bandwidth for the target: add dataset.link_gbps"


def _cost(ds: Dataset, size: int | None, res: Resources) -> tuple[float | None, str | None, str]:
    if ds.egress_price_per_gb is not None:
        price, currency, source = ds.egress_price_per_gb, None, "the job's dataset.egress_price_per_gb"
    elif ds.scheme in egress_prices():
        price, currency, free_within, source = egress_prices()[ds.scheme]
        if free_within and (res.provider or "").startswith(free_within):
            return 0.0, currency, f"free from a bucket in the instances' region: {source}"
    elif ds.kind == "local" and res.provider == "aws":
        return 0.0, "USD", INGRESS_AWS
    elif ds.kind == "local":
        return (
            None,
            None,
            f"check {res.provider or 'the provider'}'s inbound transfer price (AWS charges none)",
        )
    else:
        return None, None, f"no egress price known for {ds.scheme}: add dataset.egress_price_per_gb"
    if size is None:
        return None, currency, source
    return price * size / 1e9, currency, source
