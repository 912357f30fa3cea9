"""GPU names as NVML / nvidia-smi report them resolve to the intended spec row, or to nothing."""

from __future__ import annotations

import csv
import logging
import re
from pathlib import Path

import pytest

from gpuwise.catalog import gpus

# Every GPU name reported anywhere in ../shared/fixtures/real/, with the row it must resolve to.
# None = intentionally unknown: a vGPU profile, a name the driver did not know, a non-NVIDIA part.
FIXTURE_NAMES = {
    "NVIDIA A100-SXM4-80GB": "A100-SXM-80GB",
    "A100-SXM4-40GB": "A100-SXM-40GB",  # old drivers omit the "NVIDIA " prefix
    "NVIDIA A10": "A10",
    "NVIDIA A40": "A40",
    "NVIDIA H100 80GB HBM3": "H100-SXM",
    "NVIDIA H100 NVL": "H100-NVL",
    "NVIDIA H200": "H200",
    "NVIDIA GH200 480GB": "GH200",
    "NVIDIA L4": "L4",
    "NVIDIA L40S": "L40S",
    "Tesla V100-SXM2-16GB": "V100-SXM2-16GB",
    "Tesla V100-SXM2-32GB": "V100-SXM2-32GB",
    "Tesla V100-PCIE-32GB": "V100-PCIE-32GB",
    "Tesla P100-PCIE-16GB": "P100-PCIE-16GB",
    "NVIDIA GeForce RTX 5090": "RTX-5090",
    "NVIDIA GeForce RTX 4090": "RTX-4090",
    "NVIDIA GeForce RTX 4080 SUPER": "RTX-4080-SUPER",
    "NVIDIA GeForce RTX 4060 Ti": "RTX-4060-TI",
    "NVIDIA GeForce RTX 3090": "RTX-3090",
    "NVIDIA GeForce RTX 3080": "RTX-3080",
    "NVIDIA GeForce RTX 3060": "RTX-3060",
    "NVIDIA GeForce RTX 3060 Laptop GPU": "RTX-3060-LAPTOP",
    "NVIDIA GeForce RTX 2080 SUPER": "RTX-2080-SUPER",
    "NVIDIA GeForce RTX 2080": "RTX-2080",
    "NVIDIA GeForce RTX 2070": "RTX-2070",
    "GeForce GTX 1070 Ti": "GTX-1070-TI",
    "NVIDIA GeForce GTX 1050": "GTX-1050",
    "NVIDIA GeForce GT 1030": "GT-1030",
    "NVIDIA RTX A6000": "RTX-A6000",
    "NVIDIA RTX 6000 Ada Generation": "RTX-6000-ADA",
    "NVIDIA RTX 4000 Ada Generation": "RTX-4000-ADA",
    "NVIDIA RTX 4000 SFF Ada Generation": "RTX-4000-SFF-ADA",
    "NVIDIA RTX 2000 Ada Generation": "RTX-2000-ADA",
    "Quadro P2000": "QUADRO-P2000",
    "Quadro P400": "QUADRO-P400",
    "GRID P4-1Q": None,  # a vGPU slice of a Tesla P4: a full-GPU peak would be wrong
    "Graphics Device": None,  # a GTX 1660 Ti the old driver did not name
    "Iluvatar BI-V100": None,  # not NVIDIA: ixsmi writes nvidia-smi's XML format
}

# Names the brief and the issue list, beyond the fixtures.
OTHER_NAMES = {
    "NVIDIA H100 PCIe": "H100-PCIE",
    "NVIDIA A100-SXM4-40GB": "A100-SXM-40GB",
    "NVIDIA A100-PCIE-40GB": "A100-PCIE-40GB",
    "NVIDIA A100 80GB PCIe": "A100-PCIE-80GB",
    "Tesla V100-PCIE-32GB": "V100-PCIE-32GB",
    "Tesla V100S-PCIE-32GB": "V100S-PCIE-32GB",
    "NVIDIA A10G": "A10G",
    "NVIDIA H800": "H800-SXM",
    "NVIDIA A800-SXM4-80GB": "A800-SXM-80GB",
    "Tesla T4": "T4",
    "NVIDIA L20": "L20",
    "NVIDIA L40": "L40",
    "NVIDIA H20": "H20",
    "NVIDIA B200": "B200",
    "AMD Instinct MI300X": "MI300X",
    "  nvidia   h100   80GB hbm3 ": "H100-SXM",  # spacing and case do not matter
}

UNKNOWN = ["H100", "NVIDIA H100", "A100", "NVIDIA H200 NVL", "NVIDIA A10 extra", "NVIDIA A100X", "Tesla", ""]


def _names_in(path: Path) -> set[str]:
    text = path.read_text(encoding="utf-8", errors="replace")
    names = set(re.findall(r"<product_name>([^<]*)</product_name>", text))
    names |= {m.strip() for m in re.findall(r"^\s*Product Name\s+:\s*(.+)$", text, flags=re.M)}
    names |= {m.strip() for m in re.findall(r"^GPU \d+: (.+?) \(UUID", text, flags=re.M)}
    if path.suffix == ".csv":
        rows = list(csv.reader(text.splitlines()))
        if rows and rows[0] and rows[0][0].strip() == "name":
            names |= {r[0].strip() for r in rows[1:] if r}
    return names


def fixture_gpu_names(real: Path) -> set[str]:
    names: set[str] = set()
    for sub in ("nvidia_smi_xml", "nvidia_smi_text", "nvidia_smi_captures", "nvidia_smi_csv"):
        for path in sorted((real / sub).glob("*")):
            if path.is_file():
                names |= _names_in(path)
    return names


def test_every_fixture_gpu_name_is_in_the_expected_mapping(real):
    found = fixture_gpu_names(real)
    assert len(found) >= 30
    missing = sorted(found - set(FIXTURE_NAMES))
    assert not missing, f"new GPU names in the real fixtures; add them to FIXTURE_NAMES: {missing}"


@pytest.mark.parametrize("name,key", sorted(FIXTURE_NAMES.items()) + sorted(OTHER_NAMES.items()))
def test_reported_name_resolves_to_intended_row(name, key):
    spec = gpus.match_gpu(name)
    assert (spec.key if spec else None) == key


def test_fixture_names_resolve_when_read_from_the_files(real):
    # The same check, driven by what the files actually say rather than by the table above.
    for name in fixture_gpu_names(real):
        spec = gpus.match_gpu(name)
        assert (spec.key if spec else None) == FIXTURE_NAMES[name], name


@pytest.mark.parametrize("name", UNKNOWN)
def test_unknown_or_ambiguous_names_match_nothing(name, caplog):
    with caplog.at_level(logging.WARNING, logger="gpuwise.catalog.gpus"):
        assert gpus.match_gpu(name) is None
    if name.strip():
        assert "not in the gpuwise catalog" in caplog.text


def test_a10_and_a10g_never_cross():
    assert gpus.match_gpu("NVIDIA A10").key == "A10"
    assert gpus.match_gpu("NVIDIA A10G").key == "A10G"
    assert gpus.match_gpu("NVIDIA A100-SXM4-80GB").key != "A10"


def _gpu_csv(path: Path, *rows: dict) -> Path:
    base = {"vendor": "NVIDIA", "verified": "false", "source": "test", "as_of": "2026-01-01"}
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=gpus.COLUMNS)
        writer.writeheader()
        for row in rows:
            writer.writerow({**base, **row})
    return path


def test_most_specific_pattern_wins(tmp_path):
    path = _gpu_csv(
        tmp_path / "gpus.csv",
        {"key": "GENERIC", "name": "Generic", "match": "rtx .*"},
        {"key": "SPECIFIC", "name": "Specific", "match": "rtx 4090"},
    )
    specs = gpus.read_gpu_specs(path)
    assert [s.key for s in specs] == ["GENERIC", "SPECIFIC"]
    # exercise the matcher on this table
    import gpuwise.catalog.gpus as mod

    original = mod.load_gpu_specs
    try:
        mod.load_gpu_specs = lambda: specs
        mod._match.cache_clear()
        assert mod.match_gpu("NVIDIA RTX 4090").key == "SPECIFIC"
        assert mod.match_gpu("NVIDIA RTX 3090").key == "GENERIC"
    finally:
        mod.load_gpu_specs = original
        mod._match.cache_clear()


def test_bad_gpu_rows_are_rejected_with_file_and_line(tmp_path):
    from gpuwise.errors import DataValidationError

    path = tmp_path / "gpus.csv"
    _gpu_csv(
        path,
        {"key": "OK", "name": "ok", "match": "ok"},
        {"key": "X", "name": "X", "vendor": "Nvidai", "match": "x"},
    )
    with pytest.raises(DataValidationError) as err:
        gpus.read_gpu_specs(path)
    message = str(err.value)
    assert message.startswith(f"{path}:3: column 'vendor'") and 'did you mean "NVIDIA"' in message
    assert "To fix:" in message
    _gpu_csv(path, {"key": "X", "name": "X", "match": "x", "fp32_tflops": "fast"})
    with pytest.raises(
        DataValidationError, match=r"gpus.csv:2: column 'fp32_tflops': 'fast' is not a number"
    ):
        gpus.read_gpu_specs(path)
    _gpu_csv(path, {"key": "X", "name": "X", "match": "x(", "mamf_fraction": "0.5"})
    with pytest.raises(DataValidationError, match="not a valid regular expression"):
        gpus.read_gpu_specs(path)
    _gpu_csv(path, {"key": "X", "name": "X", "match": "x", "mamf_fraction": "80"})
    with pytest.raises(DataValidationError, match="above the maximum 1"):
        gpus.read_gpu_specs(path)
    _gpu_csv(path, {"key": "X", "name": "X", "match": "x"}, {"key": "X", "name": "Y", "match": "y"})
    with pytest.raises(DataValidationError, match="duplicate key 'X'"):
        gpus.read_gpu_specs(path)
