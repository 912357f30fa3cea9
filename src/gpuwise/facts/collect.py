"""Turn a Host into Facts: run every layer's collector, each one fenced off from the others."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TypeVar

from gpuwise.capture.host import Host
from gpuwise.capture.sources import ALL_COMMAND_IDS
from gpuwise.facts import cpu, gpu, kernel, memory, monitoring, network, platform, software, storage, topology
from gpuwise.facts.evidence import DCGM_DIAG_COMMAND, collect_evidence
from gpuwise.facts.models import Evidence, Facts, Meta, Part
from gpuwise.i18n import msg

P = TypeVar("P", bound=Part)

# Commands a probe needs up front; a live host runs them concurrently (nvidia-smi -q -x is left out:
# NVML answers the same questions in milliseconds, and the XML is read only if NVML fails; dcgmi diag loads
# the GPUs for up to a minute and only `gpuwise capture` runs it).
LIVE_PREFETCH = tuple(
    c for c in ALL_COMMAND_IDS if c not in ("nvidia-smi-q-x", "nvidia-smi", DCGM_DIAG_COMMAND)
)


def _guard(fn: Callable[[Host], P], host: Host, empty: Callable[[], P]) -> P:
    """A parser bug in one layer becomes an 'unknown' on that layer, never a crashed probe."""
    try:
        return fn(host)
    except Exception as exc:
        part = empty()
        part.why(
            "*", msg("collector failed: {error}").format(error=f"{type(exc).__name__}: {exc}"), kind="failed"
        )
        return part


def collect_facts(host: Host) -> Facts:
    """Parse everything gpuwise knows how to read from `host` into Facts."""
    host.prefetch(list(LIVE_PREFETCH))
    facts = Facts(meta=Meta(**dataclasses.asdict(host.meta())))

    try:
        g = gpu.collect_gpus(host)
        facts.gpus, facts.gpu_probe = g.gpus, g.probe
    except Exception as exc:
        facts.gpu_probe.error = msg("collector failed: {error}").format(error=f"{type(exc).__name__}: {exc}")
        g = None

    facts.topology = _guard(topology.collect_topology, host, topology.Topology)
    facts.cpu = _guard(cpu.collect_cpu, host, cpu.Cpu)
    facts.memory = _guard(memory.collect_memory, host, memory.Memory)
    facts.network = _guard(network.collect_network, host, network.Network)
    facts.storage = _guard(storage.collect_storage, host, storage.Storage)
    facts.kernel = _guard(kernel.collect_kernel, host, kernel.Kernel)
    facts.software = _guard(software.collect_software, host, software.Software)
    facts.monitoring = _guard(monitoring.collect_monitoring, host, monitoring.Monitoring)
    facts.platform = _guard(platform.collect_platform, host, platform.Platform)
    facts.evidence = _guard(collect_evidence, host, Evidence)

    if g is not None:
        facts.software.driver_version = g.driver_version
        facts.software.cuda_driver_version = g.cuda_driver_version
    for field in ("driver_version", "cuda_driver_version"):
        if getattr(facts.software, field) is None:
            no_gpu = facts.gpu_probe.unknown.get("attached_gpus")
            kind = "failed" if facts.gpu_probe.error else no_gpu.kind if no_gpu else "unparsable"
            facts.software.why(field, facts.gpu_probe.error or msg("no NVIDIA driver found"), kind=kind)
    facts.meta.commands = _command_summary(host)
    return facts


def _command_summary(host: Host) -> dict[str, str]:
    """Status of every known command that has a result (ran here, or is recorded in the capture)."""
    out = {}
    executed = set(host.executed())
    for cid in ALL_COMMAND_IDS:
        if cid not in executed:
            continue
        r = host.run(cid)
        if r is None:
            out[cid] = "not captured"
        elif r.status != "ok":
            out[cid] = r.status
        else:
            out[cid] = "ok" if r.rc == 0 else f"rc={r.rc}"
    return out
