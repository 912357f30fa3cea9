"""The options file (`gpuwise plan --options FILE`): which cloud offers and which on-prem builds to compare.

Without a file the planner compares every catalog offer that can run the workload with the
catalog's default on-prem builds. Every on-prem cost input can be overridden per build; anything
left out comes from the catalog's sourced on-prem defaults.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import ConfigDict, Field

from gpuwise.catalog.yamlfile import validate_file
from gpuwise.i18n import joined, msg
from gpuwise.textmodel import TextModel

Pricing = Literal["on_demand", "spot", "reserved_1y", "reserved_3y"]
StorageClass = Literal["local-nvme", "cloud-ssd", "network-fs"]


class _Strict(TextModel):
    model_config = ConfigDict(extra="forbid")


class CloudSelection(_Strict):
    include: bool = True
    providers: list[str] = Field(default_factory=list, description="empty = all providers")
    instance_types: list[str] = Field(default_factory=list)
    gpus: list[str] = Field(
        default_factory=list,
        description="GPU names as `gpuwise catalog offers --gpu` takes them: A100 (also A100-80GB, "
        "never A10), a catalog key, or an nvidia-smi name",
    )
    regions: list[str] = Field(default_factory=list)
    pricing: list[Pricing] = Field(
        default_factory=lambda: ["on_demand", "spot", "reserved_1y", "reserved_3y"]
    )
    storage: StorageClass = "cloud-ssd"
    derive_missing_prices: bool = Field(True, description="reserved from on-demand × catalog discounts")
    offers_dirs: list[str] = Field(
        default_factory=list, description="extra offer CSV folders for the catalog"
    )
    min_gpus_per_node: int = Field(1, ge=1)
    max_offers: int = Field(6, ge=1, le=200, description="show the N best offers (all are evaluated)")


class OnpremCosts(_Strict):
    """Per-node TCO inputs; None = take the catalog default."""

    server_price_per_node: float | None = Field(None, ge=0)
    network_cost_per_node: float | None = Field(None, ge=0)
    network_cost_fraction: float | None = Field(
        None, ge=0, lt=1, description="network as share of cluster cost"
    )
    storage_cost_per_node: float | None = Field(None, ge=0)
    management_network_cost_per_node: float | None = Field(
        None, ge=0, description="front-end and out-of-band Ethernet per node"
    )
    spares_fraction: float | None = Field(None, ge=0, le=1)
    power_kw_per_node: float | None = Field(None, gt=0)
    load_fraction: float | None = Field(None, gt=0, le=1)
    pue: float | None = Field(None, ge=1, le=3)
    electricity_per_kwh: float | None = Field(None, ge=0)
    colo_per_kw_month: float | None = Field(None, ge=0)
    staff_per_year: float | None = Field(
        None, ge=0, description="whole cluster: FTE × loaded salary; replaces the per-node staff default"
    )
    staff_fte_per_node: float | None = Field(None, ge=0, le=10)
    staff_cost_per_fte_year: float | None = Field(None, ge=0)
    support_fraction_per_year: float | None = Field(
        None, ge=0, le=1, description="support as a share of capex; replaces support_per_gpu_year"
    )
    support_per_gpu_year: float | None = Field(None, ge=0)
    lifetime_years: float | None = Field(None, gt=0, le=15)
    interest_rate: float | None = Field(None, ge=0, le=1)
    residual_fraction: float | None = Field(
        None, ge=0, le=1, description="resale value at the end of lifetime_years, share of capex"
    )
    lead_time_days: float | None = Field(None, ge=0)
    currency: str | None = None


class OnpremBuild(_Strict):
    name: str
    gpu: str = Field(..., description="GPU name the catalog knows, e.g. H100-SXM, A100-SXM-80GB")
    gpus_per_node: int = Field(8, ge=1, le=72)
    fabric: str | None = Field(None, description="catalog fabric key, e.g. ib-ndr")
    nics_per_node: int = Field(
        8, ge=1, le=64, description="ports of `fabric` per node (rail-optimised: one per GPU)"
    )
    network_gbps: float | None = Field(
        None, gt=0, description="per-node total; overrides fabric × nics_per_node"
    )
    network_latency_us: float | None = Field(None, gt=0)
    network_achieved_fraction: float | None = Field(None, gt=0, le=1)
    rdma: bool = True
    storage: StorageClass = "local-nvme"
    costs: OnpremCosts = Field(default_factory=OnpremCosts)


class OptionsFile(_Strict):
    cloud: CloudSelection = Field(default_factory=CloudSelection)
    onprem: list[OnpremBuild] | None = Field(None, description="None = catalog default builds; [] = none")
    exchange_rates: dict[str, float] = Field(
        default_factory=dict, description="1 unit of KEY = value plan-currency units"
    )
    model_overrides: dict[str, float] = Field(default_factory=dict, description="dotted plan_defaults keys")


def load_options(path: str | Path | None) -> OptionsFile:
    """Validate an options file (file:line errors), or return the defaults when no file is given."""
    return (
        OptionsFile()
        if path is None
        else validate_file(OptionsFile, path, see_also=msg("see the examples/ folder for valid files"))
    )


def for_target(opts: OptionsFile, target: str) -> OptionsFile:
    """Only what `gpuwise launch --target TARGET` can launch: slurm, torchrun = the on-prem builds (yours);
    a cloud target = the offers of the providers it launches on (catalog/launchable.py), no builds."""
    from gpuwise.catalog.launchable import TARGET_PROVIDERS
    from gpuwise.errors import UserInputError

    if target not in TARGET_PROVIDERS:
        raise UserInputError(
            msg("--target {target!r} is not one of {targets}").format(
                target=target, targets=joined(", ", TARGET_PROVIDERS)
            ),
            msg("pick one of them"),
        )
    if not TARGET_PROVIDERS[target]:  # your own machines
        return opts.model_copy(update={"cloud": opts.cloud.model_copy(update={"include": False})})
    wanted = TARGET_PROVIDERS[target]
    chosen = [p for p in wanted if not opts.cloud.providers or p in {x.lower() for x in opts.cloud.providers}]
    if not chosen:
        raise UserInputError(
            msg("the options file's cloud providers ({providers}) include none that --target {target} launches "
              "on ({launchable})").format(providers=joined(", ", opts.cloud.providers), target=target,
                                          launchable=joined(", ", wanted)),
            msg("add one of them to cloud.providers, or pick another --target"),
        )  # fmt: skip
    cloud = opts.cloud.model_copy(update={"providers": chosen})
    return opts.model_copy(update={"cloud": cloud, "onprem": []})
