"""Replay sources: recorded nvidia-smi -q -x, --query-gpu CSV and dmon output become Snapshots."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import CAPTURES, real_files
from gpuwise.errors import UserInputError
from gpuwise.export.replay_csv import snapshots_from_dmon, snapshots_from_query_csv
from gpuwise.export.replay_xml import snapshot_from_xml
from gpuwise.export.sources import load_frames
from tests.export.recordings import capture_section, exporter_captures

H200 = CAPTURES / "h200-1gpu-kvm-vm"


def test_h200_capture_replays_as_one_frame_with_its_readings():
    (snap,) = load_frames(H200)
    assert snap.hostname == "host-1" and snap.environment == "cloud"
    assert snap.driver_version == "580.159.04" and snap.cuda_version == "13.0"
    (g,) = snap.gpus
    assert g.name == "NVIDIA H200" and g.uuid == "GPU-00000000-0000-4000-8000-000000000001"
    assert (g.util_gpu_pct, g.fb_used_mib, g.fb_free_mib) == (0.0, 0.0, 143156.0)
    assert (g.power_w, g.power_limit_w, g.temperature_c) == (77.97, 700.0, 34.0)
    assert (g.sm_clock_mhz, g.sm_clock_max_mhz, g.mem_clock_mhz) == (345, 1980, 3201)
    assert g.clock_event_mask == 0x1  # gpu_idle only
    assert (g.pcie_gen, g.pcie_gen_max, g.pcie_width, g.pcie_width_max) == (5, 5, 16, 16)
    assert (g.pcie_tx_kbps, g.pcie_rx_kbps, g.pcie_replay) == (55042.0, 6565.0, 0)
    assert (g.ecc_dbe_volatile, g.ecc_sbe_aggregate, g.remap_pending, g.remap_failure) == (0, 0, False, False)
    assert g.xid_last is None and g.nvlink_tx_kib is None  # not in an XML report / no NVLink
    assert g.processes == []


@pytest.mark.parametrize("path", real_files("nvidia_smi_xml"), ids=lambda p: p.name)
def test_every_recorded_xml_replays(path: Path):
    snap = snapshot_from_xml(path.read_text(errors="replace"), hostname="h", taken_at=0.0)
    assert snap.gpus, "every fixture has at least one GPU"
    for g in snap.gpus:
        assert g.name
        for p in g.processes:
            assert p.pid > 0


def test_processes_come_from_the_xml(real):
    snap = snapshot_from_xml(
        (real / "nvidia_smi_xml/datakit_tesla-v100-pcie-32gb.xml").read_text(), hostname="h", taken_at=0.0
    )
    procs = snap.gpus[0].processes
    assert len(procs) == 4 and all(p.used_mib and p.used_mib > 0 for p in procs)


@pytest.mark.parametrize("path", real_files("nvidia_smi_csv"), ids=lambda p: p.name)
def test_every_recorded_query_csv_replays(path: Path):
    frames = snapshots_from_query_csv(path.read_text(), hostname="h", taken_at=0.0)
    assert len(frames) == 1
    g = frames[0].gpus[0]
    assert g.name and g.fb_free_mib is not None
    # with MIG on, the whole-GPU utilisation is [N/A]: no value, not a zero
    assert (g.util_gpu_pct is None) == ("mig" in path.name)


def test_h100_load_csv_carries_the_load(real):
    path = real / "nvidia_smi_captures/nvidia_gpu_exporter_linux-x86_64__nvidia-h100-80gb-hbm3__590.48.01.txt"
    (snap,) = snapshots_from_query_csv(
        capture_section(path, "load :: query-gpu"), hostname="fallback", taken_at=0.0
    )
    g = snap.gpus[0]
    assert g.util_gpu_pct == 100.0 and g.power_w > 400 and g.clock_event_mask is not None
    assert snap.driver_version == "590.48.01"


@pytest.mark.parametrize("path", exporter_captures(), ids=lambda p: p.name)
def test_dmon_recordings_replay_frame_by_frame(path: Path):
    frames = snapshots_from_dmon(capture_section(path, "load :: dmon"), hostname="h", taken_at=0.0)
    assert len(frames) == 5  # `nvidia-smi dmon -c 5` with one GPU
    assert all(f.gpus[0].power_w is not None for f in frames)


def test_query_csv_with_loop_gives_one_frame_per_iteration():
    text = "index, utilization.gpu [%], memory.used [MiB], memory.free [MiB]\n0, 5 %, 10 MiB, 90 MiB\n1, 7 %, 1 MiB, 9 MiB\n"
    frames = snapshots_from_query_csv(text + text.split("\n", 1)[1], hostname="h", taken_at=0.0)
    assert [len(f.gpus) for f in frames] == [2, 2]
    assert frames[1].gpus[1].util_gpu_pct == 7.0 and frames[0].gpus[0].fb_used_mib == 10.0


@pytest.mark.parametrize(
    "text",
    [
        "",
        "hello, world\n1, 2\n",
        "index, utilization.gpu\n0\n",
        "# gpu pwr\n# Idx W\nzero 10\n",
        "<nvidia_smi_log><gpu>",
    ],
)
def test_garbage_is_a_user_error(tmp_path, text):
    f = tmp_path / "rec.txt"
    f.write_text(text)
    with pytest.raises(UserInputError) as err:
        load_frames(f)
    assert "To fix:" in str(err.value)


def test_missing_file_and_capture_without_gpus(tmp_path):
    with pytest.raises(UserInputError, match="does not exist"):
        load_frames(tmp_path / "nope.csv")
    with pytest.raises(UserInputError, match="no nvidia-smi -q -x output"):
        load_frames(CAPTURES / "cpu-vm-kvm-docker")


def test_a_captured_kernel_log_gives_each_gpu_its_last_xid(tmp_path):
    import shutil

    capture = tmp_path / "gwexport-cap"
    shutil.copytree(H200, capture)
    (capture / "commands" / "dmesg.txt").write_text(
        "[  10.1] NVRM: Xid (PCI:0000:00:06): 13, pid=42, Graphics Exception\n"
        "[  99.9] NVRM: Xid (PCI:0000:00:06): 79, pid=42, GPU has fallen off the bus.\n"
        "[ 100.0] NVRM: Xid (PCI:0000:9a:00): 48, an other GPU's line\n"
    )
    (capture / "commands" / "dmesg.rc").write_text("0\n")
    (g,) = load_frames(capture)[0].gpus
    assert g.xid_last == 79
    (capture / "commands" / "dmesg.txt").write_text("[ 1.0] an ordinary boot\n")
    (g,) = load_frames(capture)[0].gpus
    assert g.xid_last == 0  # the log was captured and holds no Xid for this GPU


@pytest.mark.parametrize("trailer", ['{"end": 5}', '{"end": {"host": [1]}}', '{"end": {"host": null}}', ""])
def test_a_recording_replays_whatever_its_trailer(tmp_path, trailer):
    """The trailer is read through documents/watch.py: one that is not a host summary (a cut or
    hand-edited file) replays without the host side, never a traceback."""
    from typer.testing import CliRunner

    from gpuwise.cli import app

    frame = (
        '{"taken_at": %s, "hostname": "h", "gpus": [{"index": 0, "name": "H200", "utilization_gpu_pct": 50}]}'
    )
    rec = tmp_path / "rec.jsonl"
    rec.write_text("\n".join(['{"format": "gpuwise-watch/1"}', frame % 1.0, frame % 2.0, trailer]) + "\n")
    r = CliRunner().invoke(app, ["watch", "--from", str(rec)])
    assert r.exit_code == 0 and r.exception is None, r.output
    assert "replay of rec.jsonl" in r.output and "peak RSS" not in r.output
