"""Monitoring rules (layer: monitoring): a GPU node without a health/metrics agent.
Sources: REFERENCE §1 (cloud medium 'GPU utilisation and temperature alerts'; on-prem medium
'Prometheus+DCGM')."""

from __future__ import annotations

from gpuwise.advise.engine import RuleContext, rule
from gpuwise.advise.rules._links import DCGM_DIAG, DCGM_EXPORTER, NODE_EXPORTER
from gpuwise.i18n import N_, msg

GPU_AGENTS = ("dcgm", "nv-hostengine", "dcgm-exporter", "nvidia_gpu_exporter", "nvidia-dcgm")


@rule(
    id="monitoring.no_gpu_agent",
    layer="monitoring",
    title=N_("No GPU monitoring agent (DCGM / exporter) on a GPU node"),
    source=f"DCGM exporter for Prometheus, {DCGM_EXPORTER}; the DCGM health checks (ECC, row remap, throttling) need DCGM, {DCGM_DIAG}",
    priority="medium",
    references=(DCGM_EXPORTER,),
)
def no_gpu_agent(ctx: RuleContext):
    if not ctx.facts.gpus:
        return None
    mon, services = ctx.facts.monitoring, ctx.facts.software.services
    if "agents_running" in mon.unknown and not services:
        return None  # the process list was not captured: no claim either way
    running = [a for a in mon.agents_running if any(k in a.lower() for k in GPU_AGENTS)]
    active = [s for s, state in services.items() if state == "active" and any(k in s for k in GPU_AGENTS)]
    ev = [("monitoring.agents_running", mon.agents_running), ("monitoring.dcgm_version", mon.dcgm_version)]
    if running or active:
        return ctx.passed(ev, msg("a GPU monitoring agent is running"))
    return ctx.finding(
        "warn",
        ev,
        msg(
            "Nothing records GPU utilisation, temperature, clocks, ECC and XID errors over time, so "
            "throttling and failing GPUs go unnoticed between runs. Run DCGM with dcgm-exporter "
            "(Prometheus) or the provider's GPU monitoring agent, with alerts on utilisation and "
            "temperature."
        ),
        commands=[
            "sudo apt-get install -y datacenter-gpu-manager && sudo systemctl enable --now nvidia-dcgm",
            "docker run -d --gpus all -p 9400:9400 nvcr.io/nvidia/k8s/dcgm-exporter:<tag>",
        ],
    )


@rule(
    id="monitoring.no_node_agent",
    layer="monitoring",
    title=N_("No host metrics agent"),
    source=f"heuristic: node metrics and alerts (Prometheus node_exporter, {NODE_EXPORTER}) show a failing host before a job does",
    priority="low",
)
def no_node_agent(ctx: RuleContext):
    mon = ctx.facts.monitoring
    if "agents_running" in mon.unknown or mon.agents_running:
        return None
    if "ps-comm" not in ctx.facts.meta.commands or ctx.facts.meta.commands.get("ps-comm") != "ok":
        return None  # could not look at the process list: do not claim nothing runs
    return ctx.finding(
        "info",
        [("monitoring.agents_running", [])],
        msg(
            "No metrics agent (node_exporter, telegraf, DCGM, ...) is running: host memory, disk and "
            "network saturation during training will not be visible afterwards."
        ),
        commands=["sudo apt-get install -y prometheus-node-exporter"],
    )
