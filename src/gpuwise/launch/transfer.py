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
from gpuwise.i18n import _
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
        return path.stat().st_size, _("measured: size of {path}").format(path=path)
    if not path.is_dir():
        return None, _("{path} does not exist here; add dataset.size_gb").format(path=path)
    total, files = 0, 0
    for root, _dirs, names in os.walk(path):
        for name in names:
            files += 1
            if files > MAX_WALK_FILES:
                return None, _("more than {n} files under {path}: add dataset.size_gb").format(
                    n=f"{MAX_WALK_FILES:,}", path=path
                )
            try:
                st = os.lstat(os.path.join(root, name))
            except OSError:
                continue
            total += st.st_size
    return total, _("measured: {n} files under {path}").format(n=f"{files:,}", path=path)


def estimate(
    ds: Dataset, res: Resources, target: str, warn_share: float = DEFAULT_WARN_SHARE
) -> TransferEstimate:
    kind = ds.kind
    if ds.size_gb is not None:
        size, size_source = int(ds.size_gb * 1e9), _("the job's dataset.size_gb")
    elif kind == "local":
        size, size_source = local_size_bytes(Path(ds.source).expanduser())
    else:
        size, size_source = None, _("unknown: add dataset.size_gb (a remote dataset is not listed)")
    if target == "slurm" and kind in ("local", "nfs"):
        return TransferEstimate(kind, size, size_source, None, "", 0.0, 0.0, None,
                                _("read in place on the cluster's shared filesystem"), copy_needed=False)  # fmt: skip
    link, link_source = _link(ds, res, kind)
    hours = size * 8 / (link * 1e9) / 3600 if size is not None and link else None
    cost, currency, cost_source = _cost(ds, size, res)
    est = TransferEstimate(
        kind, size, size_source, link, link_source, hours, cost, currency, cost_source, True
    )
    if hours is not None and res.hours and hours > warn_share * res.hours:
        est.warning = _(
            "moving the dataset takes {hours} h, more than {share} of the {training} h of training: "
            "stage it in the target region's object store or on a disk snapshot first"
        ).format(hours=f"{hours:.1f}", share=f"{warn_share:.0%}", training=f"{res.hours:g}")
    elif hours is None:
        est.warning = _("transfer time unknown: {reason}").format(
            reason=size_source if size is None else link_source
        )
    return est


def _link(ds: Dataset, res: Resources, kind: str) -> tuple[float | None, str]:
    if ds.link_gbps:
        return ds.link_gbps, _("the job's dataset.link_gbps (your measurement)")
    if kind == "local":
        return None, _("your upload bandwidth is unknown: measure it and add dataset.link_gbps")
    if res.network_gbps:
        return res.network_gbps, _(
            "catalogued network of {instance}, one node reading: an upper bound, "
            "an object store or NFS server usually delivers less"
        ).format(instance=res.instance_type)
    return None, _("no catalogued network bandwidth for the target: add dataset.link_gbps")


def _cost(ds: Dataset, size: int | None, res: Resources) -> tuple[float | None, str | None, str]:
    if ds.egress_price_per_gb is not None:
        price, currency, source = ds.egress_price_per_gb, None, _("the job's dataset.egress_price_per_gb")
    elif ds.scheme in egress_prices():
        price, currency, free_within, source = egress_prices()[ds.scheme]
        if free_within and (res.provider or "").startswith(free_within):
            return (
                0.0,
                currency,
                _("free from a bucket in the instances' region: {source}").format(source=source),
            )
    elif ds.kind == "local" and res.provider == "aws":
        return 0.0, "USD", INGRESS_AWS
    elif ds.kind == "local":
        return (
            None,
            None,
            _("check {provider}'s inbound transfer price (AWS charges none)").format(provider=res.provider)
            if res.provider
            else _("check the provider's inbound transfer price (AWS charges none)"),
        )
    else:
        return (
            None,
            None,
            _("no egress price known for {scheme}: add dataset.egress_price_per_gb").format(scheme=ds.scheme),
        )
    if size is None:
        return None, currency, source
    return price * size / 1e9, currency, source
