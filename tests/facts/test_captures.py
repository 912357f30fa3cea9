"""Recorded captures (tests/captures/, one per real machine) → golden facts; live probe == its capture."""

from __future__ import annotations

import pytest

from conftest import capture_dirs
from gpuwise.capture import writer
from gpuwise.capture.host import CaptureHost, LiveHost
from gpuwise.facts.collect import collect_facts

# Values that legitimately change between two reads a second apart.
VOLATILE = {
    ("meta",),
    ("memory", "available_bytes"),
    ("cpu", "numa", "*", "memory_free_bytes"),
    ("storage", "mounts", "*", "free_bytes"),
    ("storage", "mounts", "*", "total_bytes"),  # tmpfs/overlay sizes move with usage on some kernels
    ("gpus", "*", "temperature_c"),
    ("gpus", "*", "sm_clock_mhz"),
    ("gpus", "*", "clock_event_reasons"),
    # the kernel log grows between two reads (other processes' netns, docker, USB, ...): its events are
    # compared by the evidence tests, not here
    ("evidence", "kernel_logs"),
}


def _strip(data, path=()):
    if any(
        len(v) == len(path) and all(a in ("*", b) for a, b in zip(v, path, strict=True)) for v in VOLATILE
    ):
        return None
    if isinstance(data, dict):
        return {k: _strip(v, (*path, k)) for k, v in data.items()}
    if isinstance(data, list):
        return [_strip(v, (*path, "*")) for v in data]
    return data


@pytest.mark.parametrize("capture", capture_dirs(), ids=lambda p: p.name)
def test_capture_facts_match_golden(capture, golden):
    facts = collect_facts(CaptureHost(capture)).to_json_dict()
    facts["meta"]["source"] = capture.name  # the checkout path differs between machines
    golden(f"facts/{capture.name.removesuffix('.tar.gz')}.json", facts)


def test_live_probe_equals_replayed_capture(tmp_path):
    """Probing this machine live and probing a capture of it give the same facts (volatile fields aside)."""
    writer.write_capture(tmp_path / "here")
    live = collect_facts(LiveHost()).to_json_dict()
    replayed = collect_facts(CaptureHost(tmp_path / "here")).to_json_dict()
    assert _strip(replayed) == _strip(live)


def test_every_capture_has_the_core_facts():
    for capture in capture_dirs():
        f = collect_facts(CaptureHost(capture))
        assert f.cpu.threads and f.memory.total_bytes and f.kernel.release, capture.name
        assert f.platform.environment_reason, capture.name
