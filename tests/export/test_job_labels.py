"""`gpuwise export --job-labels`: job and rank labels from Slurm / torchrun / SkyPilot variables."""

from __future__ import annotations

import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

from gpuwise.export.job_labels import MAX_VALUE_CHARS, from_environment, mapping
from tests.export.serving import serve, stop

SLURM = {
    "SLURM_JOB_ID": "4242",
    "SLURM_JOB_NAME": "llama-pretrain",
    "SLURM_PROCID": "3",
    "SLURM_LOCALID": "1",
    "SLURM_NODEID": "1",
    "SLURM_NTASKS": "4",
}
TORCHRUN = {
    "TORCHELASTIC_RUN_ID": "run-7",
    "RANK": "5",
    "LOCAL_RANK": "1",
    "WORLD_SIZE": "8",
    "GROUP_RANK": "2",
}


def test_each_launcher_gives_its_labels():
    assert from_environment(SLURM) == {
        "hpc_job": "4242",
        "hpc_job_name": "llama-pretrain",
        "rank": "3",
        "local_rank": "1",
        "world_size": "4",
        "node_rank": "1",
    }
    assert from_environment(TORCHRUN) == {
        "hpc_job": "run-7",
        "rank": "5",
        "local_rank": "1",
        "world_size": "8",
        "node_rank": "2",
    }
    assert from_environment({"SKYPILOT_TASK_ID": "sky-2026-12-02-abc", "SKYPILOT_NODE_RANK": "0"}) == {
        "hpc_job": "sky-2026-12-02-abc",
        "node_rank": "0",
    }
    assert from_environment({}) == {} and from_environment({"SLURM_JOB_ID": "  "}) == {}


def test_slurm_wins_over_torchrun_inside_a_slurm_job_and_values_are_bounded():
    labels = from_environment({**TORCHRUN, **SLURM, "SLURM_JOB_NAME": "x" * 10_000})
    assert labels["hpc_job"] == "4242" and labels["rank"] == "3"
    assert labels["hpc_job_name"] == "x" * MAX_VALUE_CHARS


def test_hpc_job_is_dcgm_exporters_label_name():
    assert "hpc_job" in mapping()  # dcgm-exporter's hpcJobAttribute


def scrape(url: str) -> dict[str, list]:
    with urllib.request.urlopen(url, timeout=10) as r:
        text = r.read().decode()
    return {f.name: f.samples for f in text_string_to_metric_families(text)}


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        (SLURM, {"hpc_job": "4242", "hpc_job_name": "llama-pretrain", "rank": "3", "node_rank": "1"}),
        (TORCHRUN, {"hpc_job": "run-7", "rank": "5", "local_rank": "1", "world_size": "8"}),
    ],
    ids=["slurm", "torchrun"],
)
def test_a_scrape_with_job_labels_carries_job_and_rank(env, expected):
    proc, url = serve("--job-labels", env=env)
    try:
        metrics = scrape(url)
        for family in ("DCGM_FI_DEV_GPU_UTIL", "gpuwise_signal", "gpuwise_sm_clock_max_hertz"):
            assert metrics[family], family
            for sample in metrics[family]:
                assert expected.items() <= sample.labels.items(), (family, sample.labels)
                assert sample.labels["Hostname"] == "host-1"
        assert proc.stderr.readline().startswith("job labels: hpc_job=")
    finally:
        stop(proc)


def test_without_the_flag_the_environment_adds_no_labels():
    proc, url = serve(env=SLURM)
    try:
        (util,) = scrape(url)["DCGM_FI_DEV_GPU_UTIL"]
        assert "hpc_job" not in util.labels and "rank" not in util.labels
    finally:
        stop(proc)


def test_hostile_label_values_are_escaped_and_parse_back():
    from pathlib import Path

    from prometheus_client import CollectorRegistry

    from gpuwise.export.collector import GpuCollector
    from gpuwise.export.exposition import render
    from gpuwise.export.sources import ReplaySource, load_frames
    from tests.export.serving import H200

    name = 'eval "quoted" \\ back\nslash}{'
    registry = CollectorRegistry()
    registry.register(
        GpuCollector(
            ReplaySource(load_frames(Path(H200)), "h200"), from_environment({"SLURM_JOB_NAME": name})
        )
    )
    families = {f.name: f.samples for f in text_string_to_metric_families(render(registry).decode())}
    (util,) = families["DCGM_FI_DEV_GPU_UTIL"]
    assert util.labels["hpc_job_name"] == name.strip()
