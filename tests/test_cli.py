"""The CLI shell: version, help, fast imports, clean errors."""

from __future__ import annotations

import subprocess
import sys

from typer.testing import CliRunner

from gpuwise import __version__
from gpuwise.cli import app

runner = CliRunner()


def test_version_and_help():
    r = runner.invoke(app, ["--version"])
    assert r.exit_code == 0 and __version__ in r.output
    r = runner.invoke(app, ["--help"])
    assert r.exit_code == 0
    for cmd in ("probe", "capture", "bench", "doctor", "plan", "catalog"):
        assert cmd in r.output


def test_cli_import_does_not_load_torch_or_nvml():
    code = (
        "import sys, gpuwise.cli; print(sorted(m for m in ('torch', 'pynvml', 'numpy') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300
    ).stdout
    assert out.strip() == "[]"


def test_bad_capture_path_is_a_clean_error(tmp_path):
    r = subprocess.run(
        [sys.executable, "-m", "gpuwise.cli", "probe", "--from", str(tmp_path / "nope")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 3
    assert "capture not found" in r.stderr and "To fix:" in r.stderr and "Traceback" not in r.stderr


def test_unknown_layer_suggests(tmp_path):
    r = subprocess.run(
        [sys.executable, "-m", "gpuwise.cli", "probe", "--layer", "netwrk"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 3 and "did you mean 'network'" in r.stderr


def test_probe_text_survives_markup_like_values(tmp_path):
    """Values such as a mount point '[/run/netns]' or an md device list must print literally."""
    from gpuwise.facts.models import Facts, MdArray, Mount
    from gpuwise.report.formats import render
    from gpuwise.report.views.probe import probe_view

    f = Facts()
    f.storage.mounts = [Mount(mountpoint="[/run/netns]", device="[bold]x", fstype="ext4")]
    f.storage.md_arrays = [MdArray(name="md0", level="raid0", devices=["nvme0n1[0]", "nvme1n1[1]"])]
    f.gpu_probe.error = "NVML [/oops]"
    text = render(probe_view(f), "text", width=200, color=True)
    assert "[/run/netns]" in text and "nvme0n1[0]" in text and "NVML [/oops]" in text
