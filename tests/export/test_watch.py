"""`gpuwise watch`: a real short process watched on this GPU-less VM, recordings replayed at 80 columns,
and the summary's arithmetic and findings on recorded and constructed frames."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CAPTURES
from gpuwise.advise.watch import watch_findings
from gpuwise.export.sample import GpuSample, ProcessSample, Snapshot
from gpuwise.export.sources import load_frames
from gpuwise.export.watch import summarize
from tests.export.recordings import capture_section, exporter_captures

HAS_GPU = Path("/dev/nvidia0").exists()
BUSY = "import time; x = bytearray(64 * 2**20); t = time.process_time()\nwhile time.process_time() - t < 0.5: pass"


def gpuwise(*args: str, columns: int = 80, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": str(columns)}
    return subprocess.run(
        [sys.executable, "-m", "gpuwise.cli", *args], capture_output=True, text=True, timeout=timeout, env=env
    )


def fits(text: str, width: int = 80) -> None:
    long = [line for line in text.splitlines() if len(line) > width]
    assert long == [], long


def test_watch_runs_a_real_process_and_summarises_it():
    r = gpuwise("watch", "--interval", "0.2", "--", sys.executable, "-c", BUSY)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "wall time" in out and "CPU time" in out and "peak RSS" in out
    fits(out)
    if not HAS_GPU:
        assert "GPU: no GPU (NVML init failed" in out


def test_watch_json_has_the_measured_host_side():
    r = gpuwise("watch", "--json", "--interval", "0.2", "--", sys.executable, "-c", BUSY)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    host = doc["host"]
    assert doc["schema"] == "gpuwise-watch-summary/1" and host["exit_code"] == 0
    assert host["cpu_s"] >= 0.5  # the child spun 0.5 s of its own CPU time (kernel rusage via wait4)
    assert host["peak_rss_bytes"] >= 64 * 2**20  # it held a 64 MiB buffer
    assert host["wall_s"] >= host["cpu_s"] * 0.9
    assert doc["samples"] >= 2  # one at the start, one after the process ended


def test_watch_passes_on_the_exit_code_and_options_after_the_command():
    r = gpuwise("watch", "--", sys.executable, "-c", "import sys; sys.exit(7)", "--json")
    assert r.returncode == 7, r.stderr  # --json after `--` belongs to the command, not to watch
    assert re.search(r"exit code:?\s+7\b", r.stdout)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--", "/nonexistent-gwexport-cmd"], "cannot run"),
        (["--pid", "999999999"], "no process with PID"),
        (["--pid", "1", "--", "true"], "both --pid and a command"),
        (["--from", str(CAPTURES / "h200-1gpu-kvm-vm"), "--", "true"], "--from replays a recording"),
    ],
)
def test_bad_watch_requests_are_clean_errors(args, message):
    r = gpuwise("watch", *args)
    assert r.returncode == 3, r.stderr
    assert message in r.stderr and "To fix:" in r.stderr and "Traceback" not in r.stderr


def test_record_then_replay_at_80_columns(tmp_path):
    rec = tmp_path / "run.jsonl"
    r = gpuwise("watch", "--record", str(rec), "--interval", "0.2", "--", sys.executable, "-c", BUSY)
    assert r.returncode == 0, r.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["run.jsonl"]  # no temporary file left behind
    lines = rec.read_text().splitlines()
    assert json.loads(lines[0])["format"] == "gpuwise-watch/1" and "end" in json.loads(lines[-1])
    replay = gpuwise("watch", "--from", str(rec))
    assert replay.returncode == 0, replay.stderr
    fits(replay.stdout)
    assert "gpuwise watch — replay of run.jsonl" in replay.stdout and "peak RSS" in replay.stdout


def test_capture_replay_renders_at_80_columns():
    r = gpuwise("watch", "--from", str(CAPTURES / "h200-1gpu-kvm-vm"))
    assert r.returncode == 0, r.stderr
    fits(r.stdout)
    assert "345/1,980" in r.stdout and "78/700" in r.stdout  # SM clock and power against their limits


@pytest.mark.parametrize("path", exporter_captures(), ids=lambda p: p.name)
def test_dmon_load_replay_is_busy_not_idle(tmp_path, path):
    rec = tmp_path / "dmon.txt"
    rec.write_text(capture_section(path, "load :: dmon"))
    r = gpuwise("watch", "--from", str(rec), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["samples"] == 5 and doc["gpus"]
    for g in doc["gpus"]:
        assert g["samples"] == 5


def frames(utils: list[float], *, held: bool = True, mask: int = 0) -> list[Snapshot]:
    procs = [ProcessSample(pid=10, used_mib=500.0)] if held else []
    return [
        Snapshot(
            taken_at=float(t),
            hostname="h",
            gpus=[
                GpuSample(index=0, util_gpu_pct=u, fb_used_mib=500.0 + t, fb_free_mib=1000.0, clock_event_mask=mask, processes=list(procs))
            ],
        )
        for t, u in enumerate(utils)
    ]  # fmt: skip


def test_summary_times_idle_and_power_limited_and_peak_memory():
    s = summarize(frames([0, 0, 0, 90, 95, 99, 100, 100, 0, 97], mask=0x4), "test", 1.0)
    (g,) = s.gpus
    assert g.seconds == 10 and g.idle_s == 4 and g.power_limited_s == 10
    assert g.peak_memory_mib == 509.0 and g.memory_total_mib == 1509.0
    assert g.fraction("idle_while_held") == 0.4
    ids = [f.id for f in watch_findings(s)]
    assert ids == ["watch-idle-while-held", "watch-power-limited"]


def test_no_finding_below_the_reporting_share():
    s = summarize(frames([0] + [99] * 19), "test", 1.0)  # idle 5% of the time: under the 10% bar
    assert watch_findings(s) == []


def test_summary_without_gpus_says_why():
    s = summarize(
        [Snapshot(taken_at=0.0, hostname="h", error="NVML init failed: Driver Not Loaded")], "live", 1.0
    )
    assert s.gpus == [] and s.gpu_error == "NVML init failed: Driver Not Loaded"


def test_live_frame_with_signals_renders_at_80_columns():
    from gpuwise.advise.watch import frame_signals
    from gpuwise.export.signals import load_config
    from gpuwise.report.document import Styled, Table
    from gpuwise.report.formats import get_renderer
    from gpuwise.report.views.watch import frame_view

    (frame,) = load_frames(CAPTURES / "h200-1gpu-kvm-vm")
    frame.gpus[0].clock_event_mask = 0x4 | 0x40  # sw_power_cap + hw_thermal_slowdown
    frame.gpus[0].processes = [ProcessSample(pid=1, used_mib=10.0)]
    doc = frame_view(frame, 12.0, frame_signals(frame, load_config()))
    (table,) = [b for b in doc.blocks if isinstance(b, Table)]
    cell = table.rows[0][-1]
    assert isinstance(cell, Styled) and cell.style == "warn"
    assert "power_limited" in cell.text and "thermal_limited" in cell.text and "idle_while_held" in cell.text
    fits(get_renderer("text")(doc, width=80, color=False))


def test_the_frame_view_shows_the_judged_signals_it_is_given():
    """advise.watch judges each GPU of a frame; the view formats that and evaluates nothing itself."""
    from gpuwise.advise.watch import GpuSignals, frame_signals
    from gpuwise.export.signals import load_config
    from gpuwise.report.document import Styled, Table
    from gpuwise.report.views.watch import frame_view

    (frame,) = load_frames(CAPTURES / "h200-1gpu-kvm-vm")
    assert frame_signals(frame, load_config()) == [GpuSignals(on=(), clock_reasons=())]  # an idle capture
    given = [GpuSignals(on=("memory_errors",), clock_reasons=("hw_thermal_slowdown",))]
    (table,) = [b for b in frame_view(frame, 1.0, given).blocks if isinstance(b, Table)]
    cell = table.rows[0][-1]
    assert isinstance(cell, Styled) and cell.style == "warn"
    assert cell.text == "memory_errors, clocks: hw_thermal_slowdown"
    (table,) = [
        b for b in frame_view(frame, 1.0, frame_signals(frame, load_config())).blocks if isinstance(b, Table)
    ]
    assert table.rows[0][-1] == "—"


def test_the_live_view_draws_on_a_terminal():
    """stderr on a pseudo-terminal: the Rich Live path runs, and the summary still goes to stdout."""
    import pty

    leader, follower = pty.openpty()
    try:
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "gpuwise.cli",
                "watch",
                "--interval",
                "0.2",
                "--",
                sys.executable,
                "-c",
                BUSY,
            ],
            stdout=subprocess.PIPE,
            stderr=follower,
            text=True,
            timeout=120,
            env={**os.environ, "COLUMNS": "80"},
        )
    finally:
        os.close(follower)
    drawn = b""
    try:
        while chunk := os.read(leader, 65536):
            drawn += chunk
    except OSError:  # EIO once the terminal has no writer left
        pass
    os.close(leader)
    assert r.returncode == 0
    assert "gpuwise watch — summary" in r.stdout
    assert b"gpuwise watch" in drawn  # the live frame's heading was drawn on the terminal
