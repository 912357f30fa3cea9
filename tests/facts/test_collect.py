"""collect_facts uses the Host protocol only: any host (here a dict-backed fake) gives Facts."""

from __future__ import annotations

import re
from pathlib import Path

from facts.fake_host import FakeHost, missing
from gpuwise.capture.host import CommandResult
from gpuwise.facts.collect import collect_facts

SRC = Path(__file__).resolve().parents[2] / "src" / "gpuwise"


def test_any_host_gives_facts_with_its_meta_and_command_summary():
    host = FakeHost(
        files={"/proc/meminfo": "MemTotal:       16384 kB\nMemAvailable:    8192 kB\n"},
        commands={"ibstat": missing("ibstat"), "numactl-H": CommandResult("numactl-H", "", "", 1)},
    )
    facts = collect_facts(host)
    assert (facts.meta.hostname, facts.meta.source) == ("fake-host", "fake")
    assert facts.meta.commands == {"ibstat": "missing", "numactl-H": "rc=1"}
    assert facts.memory.total_bytes == 16384 * 1024


def test_no_module_outside_capture_peeks_at_a_concrete_host():
    """Branching on LiveHost/CaptureHost or reading their private state outside capture/ breaks replay;
    so does facts/ asking the live machine for its name instead of the host."""
    peeking = re.compile(r"isinstance\([^)]*(LiveHost|CaptureHost)|\._cache\b|\.recorded_meta\b")
    offenders = [
        f"{path.relative_to(SRC)}:{n}"
        for path in SRC.rglob("*.py")
        if path.parent.name != "capture"
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if peeking.search(line) or (path.parent.name == "facts" and "gethostname" in line)
    ]
    assert offenders == []
