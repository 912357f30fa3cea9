"""End to end with the real Prometheus server (Debian `prometheus`; `make test` installs it).

Two `gpuwise export --from` processes serve recordings (the H200 capture, and a V100 nvidia-smi XML
with running processes); a real Prometheus on a free loopback port scrapes them and loads the shipped
rules. Then every PromQL expression in dashboards/gpuwise.json and dashboards/gpuwise-rules.yml is
sent to its HTTP API and must return data.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
import yaml

from conftest import CAPTURES

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "dashboards" / "gpuwise.json"
RULES = ROOT / "dashboards" / "gpuwise-rules.yml"

# No real recording holds these (no XID happened; the recorded GPUs have no NVLink): their queries must
# be valid PromQL, and the collector test checks the families are published without samples.
NOT_IN_ANY_RECORDING = ("DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL")
# the H200 exporter runs with --job-labels inside this (pretend) Slurm job; the V100 one without
SLURM_JOB = {
    "SLURM_JOB_ID": "4242",
    "SLURM_JOB_NAME": "llama-pretrain",
    "SLURM_PROCID": "0",
    "SLURM_NODEID": "0",
}

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        shutil.which("prometheus") is None, reason="prometheus not installed (make test does)"
    ),
]


def dashboard_exprs() -> list[str]:
    exprs = []
    for panel in json.loads(DASHBOARD.read_text())["panels"]:
        for target in panel.get("targets", []):
            exprs.append(target["expr"])
    return exprs


def rule_exprs() -> list[str]:
    return [r["expr"] for g in yaml.safe_load(RULES.read_text())["groups"] for r in g["rules"]]


def as_promql(expr: str) -> str:
    """A dashboard expression with Grafana's variables set to 'everything'."""
    for variable in ("$hpc_job", "$Hostname", "$gpu"):
        expr = expr.replace(variable, ".*")
    return expr.replace("$__rate_interval", "30s")


def rule_base(expr: str) -> str:
    """`gpuwise_signal{...} == 1` -> `gpuwise_signal{...}`: the series the alert reads must exist."""
    return re.sub(r"\s*(==|!=|>=|<=|>|<)\s*[0-9.]+\s*$", "", expr)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_exporter(
    recording: Path, *args: str, env: dict[str, str] | None = None
) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gpuwise.cli",
            "export",
            "--from",
            str(recording),
            "--listen",
            "127.0.0.1:0",
            *args,
        ],
        stderr=subprocess.PIPE,
        text=True,
        env=None if env is None else {**os.environ, **env},
    )
    line = proc.stderr.readline()  # "gpuwise export: serving http://127.0.0.1:PORT/metrics ..."
    m = re.search(r"127\.0\.0\.1:(\d+)/metrics", line)
    if m is None:
        proc.kill()
        pytest.fail(f"exporter did not start: {line}{proc.stderr.read()}")
    return proc, int(m.group(1))


def query(base: str, promql: str) -> list:
    url = f"{base}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
    with urllib.request.urlopen(url, timeout=10) as r:
        body = json.load(r)
    assert body["status"] == "success", (promql, body)
    return body["data"]["result"]


def wait_for(check, timeout_s: float, what: str):
    deadline = time.monotonic() + timeout_s
    last = None
    while time.monotonic() < deadline:
        try:
            last = check()
            if last:
                return last
        except OSError as exc:  # not listening yet
            last = exc
        time.sleep(0.5)
    pytest.fail(f"timed out waiting for {what}: {last!r}")


@pytest.fixture
def prometheus(real, tmp_path_factory):
    work = tmp_path_factory.mktemp("gwexport-prom")
    procs = []
    try:
        h200, p1 = start_exporter(CAPTURES / "h200-1gpu-kvm-vm", "--job-labels", env=SLURM_JOB)
        procs.append(h200)
        v100, p2 = start_exporter(real / "nvidia_smi_xml/datakit_tesla-v100-pcie-32gb.xml")
        procs.append(v100)
        config = {
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
            "rule_files": [str(RULES)],
            "scrape_configs": [
                {
                    "job_name": "gpuwise",
                    "static_configs": [{"targets": [f"127.0.0.1:{p1}", f"127.0.0.1:{p2}"]}],
                }
            ],
        }
        (work / "prometheus.yml").write_text(yaml.safe_dump(config))
        port = free_port()
        server = subprocess.Popen(
            [
                "prometheus",
                f"--config.file={work / 'prometheus.yml'}",
                f"--storage.tsdb.path={work / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}",
            ],
            stdout=subprocess.DEVNULL,
            stderr=(work / "prometheus.log").open("w"),
        )
        procs.append(server)
        base = f"http://127.0.0.1:{port}"
        wait_for(lambda: len(query(base, 'up{job="gpuwise"} == 1')) == 2, 60, "both exporters up")
        # a few scrapes of each (rate() over 30 s needs two samples, the rules a round of evaluation):
        # counted, not slept for, since scrapes come late on a loaded machine
        scraped = 'count_over_time(up{job="gpuwise"}[30s]) >= 4'
        wait_for(lambda: len(query(base, scraped)) == 2, 60, "four scrapes of each exporter")
        yield base
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()


def test_every_dashboard_and_rule_query_returns_data(prometheus):
    exprs = [as_promql(e) for e in dashboard_exprs()] + [rule_base(e) for e in rule_exprs()]
    assert len(exprs) >= 20
    empty = [e for e in exprs if not query(prometheus, e) and not any(n in e for n in NOT_IN_ANY_RECORDING)]
    assert empty == []
    # the dcgm-compatible series carry dcgm-exporter's labels, from the capture's meta.json and XML
    (util,) = query(prometheus, 'DCGM_FI_DEV_GPU_UTIL{modelName="NVIDIA H200"}')
    assert util["metric"]["Hostname"] == "host-1" and util["metric"]["UUID"].startswith("GPU-")
    # the dashboard's job variable narrows every panel to one job; 'All' (.*) keeps GPUs without one
    assert util["metric"]["hpc_job"] == "4242" and util["metric"]["rank"] == "0"
    one_job = [e.replace("$hpc_job", "4242") for e in dashboard_exprs()]
    not_in_h200 = (*NOT_IN_ANY_RECORDING, "gpuwise_process_")  # the H200 capture has no GPU processes
    empty = [
        e
        for e in map(as_promql, one_job)
        if not query(prometheus, e) and not any(n in e for n in not_in_h200)
    ]
    assert empty == []
    assert len(query(prometheus, 'DCGM_FI_DEV_GPU_UTIL{hpc_job=~".*"}')) == 2


def test_dashboard_variables_and_rules_load(prometheus):
    url = f"{prometheus}/api/v1/label/Hostname/values?" + urllib.parse.urlencode(
        {"match[]": "DCGM_FI_DEV_GPU_UTIL"}
    )
    with urllib.request.urlopen(url, timeout=10) as r:
        assert "host-1" in json.load(r)["data"]

    def rules_evaluated():
        with urllib.request.urlopen(f"{prometheus}/api/v1/rules", timeout=10) as r:
            rules = [rule for g in json.load(r)["data"]["groups"] for rule in g["rules"]]
        return rules if rules and all(rule.get("health") == "ok" for rule in rules) else None

    rules = wait_for(rules_evaluated, 30, "the shipped rules evaluated")
    assert len(rules) == len(rule_exprs())
    # the recordings are healthy and idle: no alert is pending or firing
    assert all(rule["state"] == "inactive" for rule in rules)


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool not installed")
def test_promtool_checks_and_unit_tests_the_shipped_rules():
    r = subprocess.run(["promtool", "check", "rules", str(RULES)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    tests = Path(__file__).with_name("gpuwise-rules.test.yml")
    r = subprocess.run(["promtool", "test", "rules", str(tests)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "SUCCESS" in r.stdout, r.stdout + r.stderr
    # every alert in the rules file has a unit test that fires it
    alerts = {r["alert"] for g in yaml.safe_load(RULES.read_text())["groups"] for r in g["rules"]}
    tested = {
        t["alertname"] for case in yaml.safe_load(tests.read_text())["tests"] for t in case["alert_rule_test"]
    }
    assert alerts == tested
