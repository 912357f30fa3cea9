"""Tuning signals: each turns on exactly when its readings say so, and is None when the source cannot tell."""

from __future__ import annotations

import yaml

from gpuwise.export.sample import GpuSample, ProcessSample
from gpuwise.export.signals import evaluate, load_config


def gpu(**kw) -> GpuSample:
    base = dict(
        index=0,
        util_gpu_pct=90.0,
        clock_event_mask=0,
        pcie_gen=5,
        pcie_gen_max=5,
        pcie_width=16,
        pcie_width_max=16,
        ecc_dbe_volatile=0,
        remap_pending=False,
        remap_failure=False,
        xid_last=0,
    )
    return GpuSample(**{**base, **kw})


HELD = [ProcessSample(pid=1, used_mib=1000.0, cpu_pct=20.0)]


def test_a_busy_healthy_gpu_has_every_signal_off():
    assert set(evaluate(gpu(processes=HELD)).values()) == {False}


def test_idle_while_held_needs_a_process_and_low_utilisation():
    assert evaluate(gpu(util_gpu_pct=0.0, processes=HELD))["idle_while_held"] is True
    assert evaluate(gpu(util_gpu_pct=0.0))["idle_while_held"] is False  # nobody holds it
    assert evaluate(gpu(util_gpu_pct=40.0, processes=HELD))["idle_while_held"] is False
    assert evaluate(gpu(util_gpu_pct=None, processes=HELD))["idle_while_held"] is None


def test_data_starved_needs_the_process_busy_on_cpu_or_in_iowait():
    busy = [ProcessSample(pid=1, cpu_pct=99.0)]
    waiting = [ProcessSample(pid=1, cpu_pct=5.0, iowait_pct=40.0)]
    assert evaluate(gpu(util_gpu_pct=30.0, processes=busy))["data_starved"] is True
    assert evaluate(gpu(util_gpu_pct=30.0, processes=waiting))["data_starved"] is True
    assert evaluate(gpu(util_gpu_pct=30.0, processes=HELD))["data_starved"] is False
    assert evaluate(gpu(util_gpu_pct=95.0, processes=busy))["data_starved"] is False
    # a replay without per-process CPU readings cannot tell starved from merely idle
    assert evaluate(gpu(util_gpu_pct=30.0, processes=[ProcessSample(pid=1)]))["data_starved"] is None


def test_power_and_thermal_come_from_the_clock_event_mask():
    assert evaluate(gpu(clock_event_mask=0x4))["power_limited"] is True  # sw_power_cap
    assert evaluate(gpu(clock_event_mask=0x80))["power_limited"] is True  # hw_power_brake_slowdown
    assert evaluate(gpu(clock_event_mask=0x1))["power_limited"] is False  # gpu_idle
    assert evaluate(gpu(clock_event_mask=0x40))["thermal_limited"] is True
    assert evaluate(gpu(clock_event_mask=None))["thermal_limited"] is None


def test_pcie_degraded_only_under_load():
    assert evaluate(gpu(pcie_gen=3))["pcie_degraded"] is True
    assert evaluate(gpu(pcie_width=8))["pcie_degraded"] is True
    assert evaluate(gpu(pcie_gen=1, util_gpu_pct=0.0))["pcie_degraded"] is False  # idle links downshift
    assert evaluate(gpu(pcie_gen=None))["pcie_degraded"] is None


def test_memory_errors_from_ecc_remap_or_xid():
    assert evaluate(gpu(ecc_dbe_volatile=2))["memory_errors"] is True
    assert evaluate(gpu(remap_pending=True))["memory_errors"] is True
    assert evaluate(gpu(xid_last=79))["memory_errors"] is True
    unknown = gpu(ecc_dbe_volatile=None, remap_pending=None, remap_failure=None, xid_last=None)
    assert evaluate(unknown)["memory_errors"] is None


def test_every_threshold_and_signal_cites_an_openable_source():
    from importlib import resources

    raw = yaml.safe_load(resources.files("gpuwise.export").joinpath("data/signals.yaml").read_text())
    for name, row in raw["thresholds"].items():
        assert "https://" in row["source"] or row["source"].startswith("heuristic:"), name
    for sid, info in load_config().signals.items():
        assert info.source.startswith("https://") and info.title and info.advice, sid
    assert set(evaluate(gpu())) == set(load_config().signals)
