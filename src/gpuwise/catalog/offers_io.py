"""Writing offers CSV files, and importing a SkyPilot `vms.csv` catalog into gpuwise's offers format.

Written files use the same columns the loader reads (SkyPilot v8 + ours), are written atomically
(temp file + rename), and never replace a file gpuwise did not write itself unless `force=True`:
a user's hand-made offers file is never overwritten.
"""

from __future__ import annotations

import csv
import dataclasses
import datetime as dt
import io
import tempfile
from pathlib import Path

from gpuwise.atomic import write_text_atomic
from gpuwise.catalog import offers as offers_mod
from gpuwise.catalog.offers import Offer
from gpuwise.errors import DataValidationError, UserInputError
from gpuwise.i18n import msg

# Column name -> Offer attribute, in file order.
_FIELDS = {
    "Provider": "provider",
    "InstanceType": "instance_type",
    "AcceleratorName": "accelerator_name",
    "AcceleratorCount": "accelerator_count",
    "vCPUs": "vcpus",
    "MemoryGiB": "memory_gib",
    "Price": "price",
    "SpotPrice": "spot_price",
    "Region": "region",
    "AvailabilityZone": "zone",
    "NetworkGbps": "network_gbps",
    "Fabric": "fabric",
    "RdmaGbps": "rdma_gbps",
    "Currency": "currency",
    "PriceSource": "price_source",
    "AsOf": "as_of",
    "Reserved1yPrice": "reserved_1y_price",
    "Reserved3yPrice": "reserved_3y_price",
    "MonthlyPrice": "monthly_price",
    "Status": "status",
    "GpuKey": "gpu_key",
    "NetworkSource": "network_source",
    "Notes": "notes",
    "Tier": "tier",
}
assert tuple(_FIELDS) == offers_mod.COLUMNS, "writer columns must match the loader's"


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


def offers_csv_text(offers: list[Offer]) -> str:
    """The CSV text for these offers, header first."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(_FIELDS)
    for offer in offers:
        writer.writerow([_cell(getattr(offer, attr)) for attr in _FIELDS.values()])
    return buffer.getvalue()


def write_offers_file(path: Path, offers: list[Offer], written_by: str, force: bool = False) -> Path:
    """Atomically write `offers` to `path`.

    `written_by` is a PriceSource prefix that marks files gpuwise generated (for example
    "tencentcloud API"). An existing file is replaced only when every row's PriceSource starts with
    it (gpuwise wrote it) or `force` is set; otherwise UserInputError, and the file is untouched.
    The written text is read back through the loader before it replaces anything.
    """
    path = Path(path).expanduser()
    if path.exists() and not force and not _written_by(path, written_by):
        raise UserInputError(
            msg("{path} exists and was not written by gpuwise; it was left untouched").format(path=path),
            msg("choose another output file with -o, or pass --force to replace it"),
        )
    text = offers_csv_text(offers)
    _check_round_trip(path, text)
    write_text_atomic(path, text)
    return path


def _written_by(path: Path, marker: str) -> bool:
    try:
        rows = offers_mod.read_offers_file(path)
    except DataValidationError:
        return False
    return bool(rows) and all((o.price_source or "").startswith(marker) for o in rows)


def _check_round_trip(path: Path, text: str) -> None:
    # Validate what we are about to write with the same loader users will run, so gpuwise never
    # writes a file it cannot read back.
    with tempfile.TemporaryDirectory(prefix="gpuwise-offers-") as tmp:
        probe = Path(tmp) / path.name
        probe.write_text(text, encoding="utf-8")
        offers_mod.read_offers_file(probe)


def import_skypilot(source: Path, provider: str | None = None, gpu_only: bool = True) -> list[Offer]:
    """Read a SkyPilot v8 `vms.csv` (InstanceType, AcceleratorName, ..., Price, SpotPrice, Region, ...).

    The provider defaults to the folder name (catalogs/v8/<cloud>/vms.csv → <cloud>). Rows without
    an accelerator are dropped unless `gpu_only` is False. PriceSource names the file; AsOf is the
    file's modification date (when it was downloaded), since SkyPilot's files carry no date column.
    """
    source = Path(source).expanduser()
    if not source.is_file():
        raise UserInputError(
            msg("{source} is not a file").format(source=source), msg("pass the path of a SkyPilot vms.csv")
        )
    try:
        with source.open(encoding="utf-8") as fh:
            header = fh.readline(64 * 1024)  # bounded: a 1 GB single-line file is not read whole here
    except UnicodeDecodeError:
        header = "InstanceType"  # not text at all: the offers reader says so, with the byte offset
    if "InstanceType" not in header:
        raise DataValidationError(
            msg("not a SkyPilot catalog: the header has no InstanceType column"),
            msg("pass a SkyPilot v8 vms.csv (catalogs/v8/<cloud>/vms.csv)"),
            path=str(source),
            line=1,
        )
    name = (provider or source.parent.name or "").strip().lower()
    if not name or name in (".", "/"):
        raise UserInputError(
            msg("cannot tell the cloud of this catalog file"), msg("pass --provider, e.g. --provider aws")
        )
    as_of = dt.date.fromtimestamp(source.stat().st_mtime)
    label = f"SkyPilot catalog {source.name} (imported; dated by file time)"
    imported = []
    for offer in offers_mod.read_offers_file(source):
        if gpu_only and not offer.accelerator_name:
            continue
        imported.append(
            dataclasses.replace(
                offer,
                provider=name,
                price_source=offer.price_source or label,
                as_of=offer.as_of or as_of,
                file="",
                line=0,
            )
        )
    if not imported:
        raise UserInputError(
            msg("{source} has no GPU rows").format(source=source),
            msg("check that it is a SkyPilot vms.csv, or pass --all"),
        )
    return imported


def default_import_path(provider: str) -> Path:
    """Where an import goes when no -o is given: the user's offers folder, one file per provider."""
    return offers_mod.user_offers_dir() / f"{provider}-skypilot.csv"
