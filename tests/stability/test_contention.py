"""Injected contention, end to end: `gpuwise stability` runs in a subprocess while the test changes the
machine for a window of seconds 8-16 of a 24 s run at 1 s intervals; the slow window found must match
the injected one within one interval (both ends), and for CPU contention the context signal that moved
with it must be named. A quiet run through a rate-limited link is stable.

The machine is shared (other test runs load its two cores), so each injected effect is large: the
probe and three hogs share one CPU, each in its own session raised to autogroup nice -10 (other users'
sessions at nice 0 barely get that CPU), a cgroup quota of 5% of one CPU, a tbf rate cut from 100 to 20 Mbit/s.
"""

from __future__ import annotations

import os

import pytest

from tests.stability.contention import (
    CpuCgroup,
    Injection,
    NamespacedPeer,
    cpu_signal_that_moved,
    describe,
    matching_window,
    outside_cv,
    run_with_injection,
    start_hogs,
    stop_hogs,
)

pytestmark = [pytest.mark.root, pytest.mark.slow]
INTERVAL = 1.0
RUN = ["--for", "24s", "--interval", "1s"]


def _cpu() -> int:
    return max(os.sched_getaffinity(0))


# The hog halves the probe's CPU (a 50% drop); when the machine's own noise outside the window is a
# large fraction of that (another suite's load: a robust cv of 27% was measured in a CI run), PELT cannot
# separate the window from the noise, and that says nothing about the detector. Such a run is repeated;
# a quiet run that misses the window fails at once.
NOISY_CV = 0.10  # twice the stable_cv_max of stability.yaml


def test_cpu_hog_on_the_probe_cpu_is_found_with_run_queue_wait(tmp_path):
    cpu = _cpu()
    metric = "compute.matmul_fp32"
    noise = []
    for attempt in range(3):
        hogs: list = []
        inj = Injection(
            8.0,
            16.0,
            lambda hogs=hogs: hogs.append(start_hogs(cpu)),
            lambda hogs=hogs: [stop_hogs(h) for h in hogs],
        )
        doc, inj, _err = run_with_injection(
            [*RUN, "--layers", "compute"],
            tmp_path / f"s{attempt}.json",
            inj,
            prefix=["taskset", "-c", str(cpu)],
        )
        w = matching_window(doc, metric, inj, INTERVAL)
        if w is not None:
            break
        noise.append(outside_cv(doc, metric, inj))
        assert noise[-1] > NOISY_CV, describe(doc, metric, inj)  # a quiet machine and no window: a real miss
    else:
        pytest.skip(f"the machine's own noise outside the window (robust cv {noise}) hid the hog in 3 runs")
    assert w["context"] and w["context"][0]["signal"] == "runq_wait_ms_per_s", describe(doc, metric, inj)
    assert w["change"] >= 0.3, describe(doc, metric, inj)  # the hogs' session takes about half the CPU


def test_cgroup_cpu_quota_cut_is_found_with_throttled_time(tmp_path):
    try:
        group = CpuCgroup(f"gw-st-{os.getpid()}")
    except RuntimeError as exc:
        pytest.skip(str(exc))
    try:
        inj = Injection(8.0, 16.0, lambda: group.limit(0.05), lambda: group.limit(None))
        # the shell joins the cgroup, then becomes gpuwise: every thread and child of the run is in it
        prefix = ["sh", "-c", f'echo $$ > {group.procs} && exec "$@"', "sh"]
        doc, inj, _err = run_with_injection(
            [*RUN, "--layers", "compute"], tmp_path / "s.json", inj, prefix=prefix
        )
        metric = "compute.matmul_fp32"
        assert "cgroup_cpu_stat" in doc["environment"], doc["environment"]
        w = matching_window(doc, metric, inj, INTERVAL)
        assert w is not None, describe(doc, metric, inj)
        assert w["context"] and w["context"][0]["signal"] == "throttled_ms_per_s", describe(doc, metric, inj)
    finally:
        group.remove()


@pytest.fixture
def peer():
    p = NamespacedPeer(str(os.getpid() % 100000), os.getpid() % 250, "100mbit")
    try:
        yield p
    finally:
        p.close()


def test_tbf_rate_cut_on_a_namespaced_link_is_found(tmp_path, peer):
    inj = Injection(8.0, 16.0, lambda: peer.tbf("change", "20mbit"), lambda: peer.tbf("change", "100mbit"))
    doc, inj, _err = run_with_injection(
        [*RUN, "--layers", "network", "--peer", peer.peer], tmp_path / "s.json", inj
    )
    metric = "network.tcp_gbit_s"
    w = matching_window(doc, metric, inj, INTERVAL)
    assert w is not None, describe(doc, metric, inj)
    assert 0.6 <= w["change"] <= 0.95, describe(doc, metric, inj)  # 100 -> 20 Mbit/s is 80% less


def test_a_quiet_run_is_stable(tmp_path, peer):
    doc, _inj, _err = run_with_injection(
        ["--for", "16s", "--interval", "1s", "--layers", "network", "--peer", peer.peer],
        tmp_path / "s.json",
        None,
    )
    metric = "network.tcp_gbit_s"
    # no change window and no "unstable" alarm. "variable" (a spread above stable_cv_max, no window) only
    # where the run's own context shows CPU contention moving: a neighbour's steal on the CI VM (8-20%
    # measured in a clean-clone run) or other test runs taking the probe's CPU are real variation, a
    # spread with the CPU signals flat is not
    verdicts = [lv["verdict"] for lv in doc["layers"]]
    assert verdicts in (["stable"], ["variable"]), describe(doc, metric, None)
    if verdicts == ["variable"]:
        assert cpu_signal_that_moved(doc) is not None, describe(doc, metric, None)
    assert doc["results"][0]["windows"] == [], describe(doc, metric, None)
