"""One memory policy: GiB = bytes / 2**30 from the byte count, one decimal (units.gib). One H200 (the
recorded capture tests/captures/h200-1gpu-kvm-vm: nvidia-smi 143771 MiB) reads 140.4 GiB in probe,
in watch replaying the same capture, and in the catalog (which shows NVIDIA's "141 GB" beside it)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuwise import units
from gpuwise.cli import app

H200 = Path(__file__).parent / "captures" / "h200-1gpu-kvm-vm"
NVIDIA_SMI_TOTAL_MIB = 143771  # `nvidia-smi` in the capture: "0MiB / 143771MiB"


def test_gib_is_bytes_over_2_30_with_one_decimal():
    assert units.mib_to_bytes(NVIDIA_SMI_TOTAL_MIB) == 150754820096  # NVML's memory_total_bytes
    assert units.gib(150754820096) == "140.4 GiB" and units.gib(150754820096, unit=False) == "140.4"
    assert units.gib(80 * 2**30) == "80 GiB" and units.gib(None) == units.UNKNOWN
    assert units.gib(2**29) == "0.5 GiB" and units.mib_to_bytes(None) is None


def _run(*args: str) -> str:
    r = CliRunner().invoke(app, list(args))
    assert r.exit_code == 0, r.output
    return r.output


@pytest.mark.parametrize(
    "args",
    [
        ("probe", "--from", str(H200)),
        ("watch", "--from", str(H200)),
        ("catalog", "show", "H200"),
        ("catalog", "gpus"),
    ],
    ids=["probe", "watch", "catalog show", "catalog gpus"],
)
def test_one_h200_shows_one_memory_figure(args):
    text = _run(*args)
    assert "140.4" in text, text
    for other in ("139.8", "140.5", "131.3"):  # used + free (watch before), rounding, 141e9 bytes
        assert other not in text


def test_the_catalog_keeps_the_vendor_figure_beside_it():
    text = " ".join(_run("catalog", "show", "H200").split())
    assert "140.4 GiB as nvidia-smi reports it (143,771 MiB" in text
    assert "141 GB (vendor's figure" in text
