"""Data transfer estimate: the dataset's size over the path it crosses, as time and money in the run's currency.

Source document 003: "the dataset upload takes very long; use a dedicated line". The path model is
catalog/data_paths.py (same-region object store, internet, dedicated line, shipping disks, each with
its sourced limits or labelled assumption); this module applies it to the job's dataset and the
launch's resources, and converts the source's egress price to the run's currency with
plan/currency.py. On your own Slurm cluster a local path or NFS export is read in place (no copy).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from gpuwise.catalog import data_paths
from gpuwise.i18n import msg
from gpuwise.launch.job import Dataset
from gpuwise.launch.resources import Resources
from gpuwise.plan.currency import conversion, describe

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
    path: str = ""  # same-region | internet | dedicated-line | upload | shipping (data_paths.PathKind)
    alternatives: list[dict] = field(default_factory=list)  # the other paths: path, gbps, hours
    comparison: str = ""  # online vs shipping disks, when both apply


def local_size_bytes(path: Path) -> tuple[int | None, str]:
    """The bytes under `path` (a file or a folder), without following symlinks; bounded by MAX_WALK_FILES."""
    if path.is_file():
        return path.stat().st_size, msg("measured: size of {path}").format(path=path)
    if not path.is_dir():
        return None, msg("{path} does not exist here; add dataset.size_gb").format(path=path)
    total, files = 0, 0
    for root, _dirs, names in os.walk(path):
        for name in names:
            files += 1
            if files > MAX_WALK_FILES:
                return None, msg("more than {n} files under {path}: add dataset.size_gb").format(
                    n=f"{MAX_WALK_FILES:,}", path=path
                )
            try:
                st = os.lstat(os.path.join(root, name))
            except OSError:
                continue
            total += st.st_size
    return total, msg("measured: {n} files under {path}").format(n=f"{files:,}", path=path)


def source_of(ds: Dataset) -> data_paths.Source:
    return data_paths.Source(ds.kind, ds.scheme, ds.region, ds.link_gbps, ds.dedicated_line_gbps)


def target_of(res: Resources) -> data_paths.Target:
    return data_paths.Target(res.provider, res.region, res.nodes, res.network_gbps, res.fabric)


def estimate(
    ds: Dataset, res: Resources, shared_filesystem: bool, warn_share: float = DEFAULT_WARN_SHARE
) -> TransferEstimate:
    """shared_filesystem: the target's nodes read a local or NFS dataset in place (Slurm), nothing moves."""
    kind = ds.kind
    if ds.size_gb is not None:
        size, size_source = int(ds.size_gb * 1e9), msg("the job's dataset.size_gb")
    elif kind == "local":
        size, size_source = local_size_bytes(Path(ds.source).expanduser())
    else:
        size, size_source = None, msg("unknown: add dataset.size_gb (a remote dataset is not listed)")
    if shared_filesystem and kind in ("local", "nfs"):
        return TransferEstimate(kind, size, size_source, None, "", 0.0, 0.0, None,
                                msg("read in place on the cluster's shared filesystem"), copy_needed=False)  # fmt: skip
    move = data_paths.move(size, source_of(ds), target_of(res))
    p = move.chosen
    cost, currency, cost_source = _cost(ds, size, res, p)
    est = TransferEstimate(
        kind, size, size_source, p.gbps, p.bound, p.hours, cost, currency, cost_source, True,
        path=p.path, comparison=move.note,
        alternatives=[{"path": o.path, "gbps": o.gbps, "hours": o.hours} for o in move.options if o is not p],
    )  # fmt: skip
    if p.hours is not None and res.hours and p.hours > warn_share * res.hours:
        est.warning = msg(
            "moving the dataset takes {hours} h, more than {share} of the {training} h of training: "
            "stage it in the target region's object store, use a dedicated line or ship disks first"
        ).format(hours=f"{p.hours:.1f}", share=f"{warn_share:.0%}", training=f"{res.hours:g}")
    elif p.hours is None:
        est.warning = msg("transfer time unknown: {reason}").format(
            reason=size_source if size is None else p.bound
        )
    return est


def _cost(
    ds: Dataset, size: int | None, res: Resources, p: data_paths.PathEstimate
) -> tuple[float | None, str | None, str]:
    """The chosen path's price, in the source's currency converted to the run's (the offer's) currency."""
    if ds.egress_price_per_gb is not None:
        price, currency, source = (
            ds.egress_price_per_gb,
            res.currency,
            msg("the job's dataset.egress_price_per_gb"),
        )
        return (None if size is None else price * size / 1e9), currency, source
    if p.path == "upload" and res.provider and res.provider.startswith("aws"):
        return 0.0, res.currency or "USD", INGRESS_AWS
    if p.path == "upload":
        return None, None, (
            msg("check {provider}'s inbound transfer price (AWS charges none)").format(provider=res.provider)
            if res.provider
            else msg("check the provider's inbound transfer price (AWS charges none)")
        )  # fmt: skip
    cost = p.cost(size)
    run_ccy = res.currency
    if cost == 0.0:
        return 0.0, run_ccy or p.currency, p.cost_source
    if cost is None or not p.currency or not run_ccy or p.currency.upper() == run_ccy.upper():
        return cost, p.currency, p.cost_source
    rate = conversion(p.currency, run_ccy, {})
    if rate is None:
        return cost, p.currency, p.cost_source
    return (
        cost * rate.value,
        rate.target,
        msg("{source}; {rate}").format(source=p.cost_source, rate=describe(rate)),
    )
