"""Cloud GPU offers: SkyPilot v8 catalog columns plus gpuwise's own, from shipped and user CSV files.

Columns (SkyPilot v8): InstanceType, AcceleratorName, AcceleratorCount, vCPUs, MemoryGiB, Price,
SpotPrice, Region, AvailabilityZone. Ours, all optional: Provider (default: the file name without
.csv), NetworkGbps, Fabric, RdmaGbps, Currency, PriceSource, AsOf, Reserved1yPrice,
Reserved3yPrice, MonthlyPrice (a monthly subscription, per instance-month), Status, GpuKey (a gpus.csv key when AcceleratorName is ambiguous), NetworkSource (where the network columns come from;
with Fabric "single-node", where the provider says the offer has no multi-node fabric), Notes, Tier
("secure" or "community": a community / unsecured marketplace row, e.g. RunPod Community Cloud,
which production serving leaves out unless org.allow_community_cloud is true; empty = the
provider's own data centres).
Columns gpuwise does not know (SkyPilot's GpuInfo, Arch) are ignored.

Sources, later overriding earlier on the same (provider, InstanceType, Region, AvailabilityZone):
the shipped data/offers/*.csv that the providers name (gpuwise/providers/, one module per cloud),
then ~/.config/gpuwise/offers/*.csv ($XDG_CONFIG_HOME respected), then each directory in `extra_dirs`. A shipped row without a region is a spec template: once a
user file lists the same provider and instance type in some region (a fetched price list, say),
the template is dropped. gpuwise only reads these files; it never rewrites a user's file.
"""

from __future__ import annotations

import datetime as dt
import functools
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from gpuwise.catalog import gpus
from gpuwise.datafiles import Row, read_rows
from gpuwise.errors import UserInputError
from gpuwise.i18n import msg
from gpuwise.providers import Provider, providers
from gpuwise.registry import Registry

SKYPILOT_COLUMNS = (
    "InstanceType",
    "AcceleratorName",
    "AcceleratorCount",
    "vCPUs",
    "MemoryGiB",
    "Price",
    "SpotPrice",
    "Region",
    "AvailabilityZone",
)
OUR_COLUMNS = (
    "Provider",
    "NetworkGbps",
    "Fabric",
    "RdmaGbps",
    "Currency",
    "PriceSource",
    "AsOf",
    "Reserved1yPrice",
    "Reserved3yPrice",
    "MonthlyPrice",
    "Status",
    "GpuKey",
    "NetworkSource",
    "Notes",
    "Tier",
)
COLUMNS = ("Provider",) + SKYPILOT_COLUMNS + OUR_COLUMNS[1:]
# SkyPilot columns gpuwise reads past (GPU details as a Python dict, CPU architecture).
SKYPILOT_IGNORED = ("GpuInfo", "Arch")
REQUIRED = ("InstanceType",)
# single-node: the provider documents no fabric between instances of this offer (NetworkSource says where)
FABRICS = ("vpc-tcp", "roce", "infiniband", "efa", "tcpx", "single-node")
CURRENCIES = ("USD", "CNY", "EUR")
STATUSES = ("available", "sold-out")


@dataclass(frozen=True)
class Offer:
    """One rentable instance type in one region. Prices are per instance-hour in `currency` (monthly_price:
    per instance-month of a monthly subscription); None = no source."""

    provider: str
    instance_type: str
    accelerator_name: str | None
    accelerator_count: float | None
    vcpus: float | None
    memory_gib: float | None
    price: float | None
    spot_price: float | None
    reserved_1y_price: float | None
    reserved_3y_price: float | None
    region: str | None
    zone: str | None
    network_gbps: float | None  # per-instance network bandwidth, Gbit/s
    fabric: str | None  # vpc-tcp | roce | infiniband | efa | tcpx
    rdma_gbps: float | None  # aggregate RDMA bandwidth per instance, Gbit/s
    currency: str
    price_source: str | None
    as_of: dt.date | None
    status: str | None = None
    gpu_key: str | None = None
    monthly_price: float | None = None
    network_source: str | None = None  # where the network columns (or "single node only") come from
    notes: str = ""
    tier: str = ""  # "" / "secure": the provider's data centres; "community": third-party hosts
    file: str = ""
    line: int = 0

    @property
    def key(self) -> tuple[str, str, str, str]:
        """Identity for overriding: (provider, instance type, region, zone)."""
        return (
            self.provider,
            self.instance_type.lower(),
            (self.region or "").lower(),
            (self.zone or "").lower(),
        )

    @property
    def best_network_gbps(self) -> float | None:
        """The faster of the instance's network and RDMA bandwidth (what multi-node training can use)."""
        known = [v for v in (self.network_gbps, self.rdma_gbps) if v is not None]
        return max(known) if known else None

    @property
    def price_per_gpu_hour(self) -> float | None:
        if self.price is None or not self.accelerator_count:
            return None
        return self.price / self.accelerator_count

    def gpu_spec(self) -> gpus.GpuSpec | None:
        """The GPU row for this offer: GpuKey when given, else matching AcceleratorName; None if unknown."""
        if self.gpu_key:
            return gpus.get_gpu(self.gpu_key)
        return gpus.match_gpu(self.accelerator_name, warn=False) if self.accelerator_name else None


TIERS = ("secure", "community")  # empty: the provider's own data centres


def _offer_from_row(row: Row, default_provider: str) -> Offer:
    gpu_key = row.text("GpuKey")
    if gpu_key and gpus.get_gpu(gpu_key) is None:
        row.choice("GpuKey", [s.key for s in gpus.load_gpu_specs()])  # raises, with a did-you-mean
    currency = row.choice("Currency", CURRENCIES) or "USD"
    return Offer(
        provider=(row.text("Provider") or default_provider).lower(),
        instance_type=row.text("InstanceType", required=True),
        accelerator_name=row.text("AcceleratorName"),
        accelerator_count=row.number("AcceleratorCount"),
        vcpus=row.number("vCPUs"),
        memory_gib=row.number("MemoryGiB"),
        price=row.number("Price"),
        spot_price=row.number("SpotPrice"),
        reserved_1y_price=row.number("Reserved1yPrice"),
        reserved_3y_price=row.number("Reserved3yPrice"),
        monthly_price=row.number("MonthlyPrice"),
        region=row.text("Region"),
        zone=row.text("AvailabilityZone"),
        network_gbps=row.number("NetworkGbps"),
        fabric=row.choice("Fabric", FABRICS),
        rdma_gbps=row.number("RdmaGbps"),
        currency=currency,
        price_source=row.text("PriceSource"),
        as_of=row.date("AsOf"),
        status=row.choice("Status", STATUSES),
        gpu_key=gpu_key,
        network_source=row.text("NetworkSource"),
        notes=row.text("Notes") or "",
        tier=row.choice("Tier", TIERS) or "",
        file=str(row.path),
        line=row.line,
    )


def read_offers_file(path: Path) -> list[Offer]:
    """Parse and validate one offers CSV. Raises DataValidationError with file:line on a bad row."""
    path = Path(path)
    return [_offer_from_row(row, path.stem) for row in read_rows(path, REQUIRED, COLUMNS + SKYPILOT_IGNORED)]


def shipped_offers_dir() -> Path:
    return Path(str(resources.files("gpuwise.catalog") / "data" / "offers"))


def user_offers_dir() -> Path:
    """~/.config/gpuwise/offers (or $XDG_CONFIG_HOME/gpuwise/offers)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "gpuwise" / "offers"


def shipped_offers_files(registry: Registry[Provider] | None = None) -> list[Path]:
    """The shipped offers files, as the providers (gpuwise/providers/) name them, by file name."""
    return sorted(shipped_offers_dir() / name for p in providers(registry) for name in p.offers_files)


@functools.lru_cache(maxsize=1)
def _default_shipped_offers() -> tuple[Offer, ...]:
    return tuple(o for path in shipped_offers_files() for o in read_offers_file(path))


def load_shipped_offers(registry: Registry[Provider] | None = None) -> tuple[Offer, ...]:
    """Offers shipped with gpuwise (cached), or those the providers of `registry` name."""
    if registry is None:
        return _default_shipped_offers()
    return tuple(o for path in shipped_offers_files(registry) for o in read_offers_file(path))


def load_offers(
    extra_dirs: list[Path] | None = None, providers: Registry[Provider] | None = None
) -> list[Offer]:
    """Shipped offers, overridden and extended by the user's offers files and then by `extra_dirs`.

    A row in a later file replaces an earlier row with the same (provider, InstanceType, Region).
    A missing extra directory is a UserInputError; a malformed file is a DataValidationError naming
    file:line. Order: shipped order, then new rows in the order they were read. `providers`: whose
    shipped offers (default: every provider module of gpuwise/providers/).
    """
    shipped_offers = load_shipped_offers(providers)
    merged: dict[tuple[str, str, str, str], Offer] = {o.key: o for o in shipped_offers}
    dirs = [user_offers_dir()]
    for extra in extra_dirs or []:
        extra = Path(extra).expanduser()
        if not extra.is_dir():
            raise UserInputError(
                msg("offers directory {extra} does not exist").format(extra=extra),
                msg("pass a directory that holds *.csv offers files"),
            )
        dirs.append(extra)
    regional: set[tuple[str, str]] = set()
    for directory in dirs:
        if directory.is_dir():
            for path in sorted(directory.glob("*.csv")):
                for offer in read_offers_file(path):
                    merged[offer.key] = offer
                    if offer.region:
                        regional.add(offer.key[:2])
    shipped = set(shipped_offers)
    return [o for o in merged.values() if not (o in shipped and not o.region and o.key[:2] in regional)]


def _name_matches(candidate: str | None, wanted: str) -> bool:
    # "A100" matches "A100" and "A100-80GB" but not "A10"; "A10" matches "A10" but not "A10G".
    if not candidate:
        return False
    candidate, wanted = candidate.upper(), wanted.upper()
    return candidate == wanted or candidate.startswith(wanted + "-")


def offer_matches_gpu(offer: Offer, gpu: str, spec: gpus.GpuSpec | None = None) -> bool:
    """Is `offer`'s GPU the one named `gpu`? By name ("A100" also matches "A100-80GB", never "A10"), or by
    catalog row when `gpu` is a catalog key or an nvidia-smi name (`spec`: its match, looked up if None)."""
    if _name_matches(offer.accelerator_name, gpu) or _name_matches(offer.gpu_key, gpu):
        return True
    spec = spec if spec is not None else gpus.match_gpu(gpu, warn=False)
    offer_spec = offer.gpu_spec() if spec is not None else None
    return offer_spec is not None and offer_spec.key == spec.key


def filter_offers(
    offers: list[Offer],
    gpu: str | None = None,
    provider: str | None = None,
    min_network_gbps: float | None = None,
) -> list[Offer]:
    """Offers whose GPU is `gpu`, from `provider`, with at least this much network (or RDMA) bandwidth.

    `gpu` may be an offers-style name ("A100" also matches "A100-80GB", never "A10"), a catalog key
    ("A100-SXM-40GB") or a name as nvidia-smi reports it ("NVIDIA A100-SXM4-40GB").
    """
    spec = gpus.match_gpu(gpu, warn=False) if gpu else None
    out = []
    for offer in offers:
        if gpu and not offer_matches_gpu(offer, gpu, spec):
            continue
        if provider and offer.provider != provider.lower():
            continue
        if min_network_gbps is not None and (offer.best_network_gbps or 0) < min_network_gbps:
            continue
        out.append(offer)
    return out


def find_offer(instance_type: str, offers: list[Offer] | None = None) -> list[Offer]:
    """All offers (any provider or region) whose InstanceType equals `instance_type`, case-insensitive."""
    wanted = instance_type.strip().lower()
    return [o for o in (offers if offers is not None else load_offers()) if o.instance_type.lower() == wanted]
