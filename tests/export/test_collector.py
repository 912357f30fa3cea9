"""The Collector: dcgm-exporter names and labels, gpuwise_* metrics, no stale or made-up values."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from prometheus_client import CollectorRegistry
from prometheus_client.parser import text_string_to_metric_families

from conftest import CAPTURES
from gpuwise.export.collector import DCGM_COUNTERS, DCGM_LABELS, GpuCollector
from gpuwise.export.exposition import render
from gpuwise.export.sample import Snapshot
from gpuwise.export.serve import write_textfile
from gpuwise.export.sources import ReplaySource, load_frames

H200 = CAPTURES / "h200-1gpu-kvm-vm"


def scrape(source) -> dict[str, list]:
    registry = CollectorRegistry()
    registry.register(GpuCollector(source))
    text = render(registry).decode()
    return {f.name: f.samples for f in text_string_to_metric_families(text)}


def test_h200_capture_gives_dcgm_names_labels_and_values():
    metrics = scrape(ReplaySource(load_frames(H200), "h200"))
    (util,) = metrics["DCGM_FI_DEV_GPU_UTIL"]
    assert set(util.labels) == set(DCGM_LABELS)
    assert util.labels["modelName"] == "NVIDIA H200" and util.labels["Hostname"] == "host-1"
    assert util.labels["device"] == "nvidia0" and util.labels["gpu"] == "0"
    assert metrics["DCGM_FI_DEV_FB_FREE"][0].value == 143156.0
    assert metrics["DCGM_FI_DEV_POWER_USAGE"][0].value == 77.97
    assert metrics["DCGM_FI_DEV_PCIE_TX_THROUGHPUT"][0].value == 55042.0
    # not in the recording: no sample rather than a zero
    assert metrics["DCGM_FI_DEV_XID_ERRORS"] == [] and metrics["DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL"] == []
    reasons = {s.labels["reason"]: s.value for s in metrics["gpuwise_clock_event_reason"]}
    assert reasons["gpu_idle"] == 1.0 and reasons["sw_power_cap"] == 0.0
    (info,) = metrics["gpuwise_gpu_info"]
    assert info.labels["environment"] == "cloud" and info.labels["pcie_gen_max"] == "5"
    assert info.labels["driver_version"] == "580.159.04" and info.labels["cuda_version"] == "13.0"
    signals = {s.labels["signal"]: s.value for s in metrics["gpuwise_signal"]}
    assert signals == dict.fromkeys(signals, 0.0) and "idle_while_held" in signals
    assert metrics["gpuwise_exporter_read_ok"][0].value == 1.0


def test_process_memory_is_published_per_pid(real):
    (frame,) = load_frames(real / "nvidia_smi_xml/datakit_tesla-v100-pcie-32gb.xml")
    metrics = scrape(ReplaySource([frame], "v100"))
    procs = metrics["gpuwise_process_gpu_memory_bytes"]
    assert len(procs) == 4 and all(s.value > 0 and s.labels["pid"].isdigit() for s in procs)


class _Failing:
    description = "failing"

    def __init__(self, error: str | None = None):
        self.error = error

    def read(self) -> Snapshot:
        if self.error is None:
            raise RuntimeError("driver went away")
        return Snapshot(taken_at=0.0, hostname="h", error=self.error)

    def close(self) -> None:
        pass


@pytest.mark.parametrize("source", [_Failing(), _Failing("NVML init failed: Driver Not Loaded")])
def test_a_failed_read_publishes_health_and_no_gpu_data(source):
    metrics = scrape(source)
    assert metrics["gpuwise_exporter_read_ok"][0].value == 0.0
    assert "DCGM_FI_DEV_GPU_UTIL" not in metrics


def test_each_scrape_reads_the_source_once():
    frames = load_frames(H200)
    source = ReplaySource(frames, "h200")
    registry = CollectorRegistry()
    registry.register(GpuCollector(source))
    for _ in range(3):
        render(registry)
    assert source._next == 3


def test_textfile_is_written_atomically_and_parses(tmp_path):
    registry = CollectorRegistry()
    registry.register(GpuCollector(ReplaySource(load_frames(H200), "h200")))
    path = write_textfile(registry, tmp_path)
    assert path.name == "gpuwise.prom" and [p.name for p in tmp_path.iterdir()] == ["gpuwise.prom"]
    names = {f.name for f in text_string_to_metric_families(path.read_text())}
    assert {"DCGM_FI_DEV_GPU_UTIL", "gpuwise_signal", "gpuwise_gpu_info"} <= names


# promtool's linter flags exactly what dcgm-exporter compatibility requires: its camelCase labels (which
# gpuwise_* metrics share so they join with DCGM_FI_* ones), its counters' names without _total, and its
# PCIE_REPLAY_COUNTER name. Anything else it says (a gpuwise_* counter or unit problem) is a real one.
CAMEL_CASE_LABELS = "label names should be written in 'snake_case' not 'camelCase'"
NO_TOTAL_SUFFIX = 'counter metrics should have "_total" suffix'


def expected_lint(name: str) -> set[str]:
    if name.startswith("gpuwise_"):
        return {CAMEL_CASE_LABELS}
    if not name.startswith("DCGM_FI_"):
        return set()
    allowed = {CAMEL_CASE_LABELS}
    if name in DCGM_COUNTERS:
        allowed.add(NO_TOTAL_SUFFIX)
    if name == "DCGM_FI_DEV_PCIE_REPLAY_COUNTER":
        allowed.add("metric name should not include type 'counter'")
    return allowed


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool not installed (make test installs it)")
def test_textfile_passes_promtool_check_metrics(tmp_path):
    registry = CollectorRegistry()
    registry.register(GpuCollector(ReplaySource(load_frames(H200), "h200")))
    path = write_textfile(registry, tmp_path)
    r = subprocess.run(
        ["promtool", "check", "metrics"], input=path.read_bytes(), capture_output=True, timeout=60
    )
    problems = [ln for ln in (r.stdout + r.stderr).decode().splitlines() if ln.strip()]
    assert r.returncode in (0, 3), problems  # 3 = lint findings only, 1 = unparseable
    assert problems, "the dcgm-compatible camelCase labels are expected to be flagged"
    for line in problems:
        name, _, message = line.partition(" ")
        assert message in expected_lint(name), line


def test_counters_are_counters_and_gpuwise_metrics_use_base_units():
    registry = CollectorRegistry()
    registry.register(GpuCollector(ReplaySource(load_frames(H200), "h200")))
    text = render(registry).decode()
    types = dict(re.findall(r"^# TYPE (\S+) (\S+)$", text, flags=re.M))
    # dcgm-exporter's counters keep its names byte for byte, typed counter, samples without _total
    for name in DCGM_COUNTERS:
        assert types[name] == "counter", name
    assert re.search(r"^DCGM_FI_DEV_ECC_DBE_VOL_TOTAL\{.*\} 0\.0$", text, flags=re.M)
    assert types["DCGM_FI_DEV_GPU_UTIL"] == "gauge" and types["DCGM_FI_DEV_PCIE_TX_THROUGHPUT"] == "gauge"
    # gpuwise counters end in _total; gauges end in a base unit where they have one
    assert types["gpuwise_exporter_reads_total"] == "counter"
    assert re.search(r"^gpuwise_exporter_reads_total 1\.0$", text, flags=re.M)
    gpuwise = {n for n in types if n.startswith("gpuwise_")}
    assert not any(n.endswith(("_mib", "_mhz", "_percent")) for n in gpuwise), gpuwise
    metrics = {f.name: f.samples for f in text_string_to_metric_families(text)}
    assert metrics["gpuwise_sm_clock_max_hertz"][0].value == 1.98e9  # nvidia-smi: Max SM 1980 MHz
    (total,) = metrics["gpuwise_memory_total_bytes"]
    used, free = metrics["DCGM_FI_DEV_FB_USED"][0].value, metrics["DCGM_FI_DEV_FB_FREE"][0].value
    assert total.value == (used + free) * 2**20
