"""`plan --calibrate STABILITY.json`: the straggler terms from a `gpuwise stability` run.

The plan's straggler term is E[max of N] ~ cv * sqrt(2 ln N) of a synchronous step
(plan/data/plan_defaults.yaml, stragglers). A stability run measured how much this machine's compute
(the matmul probe) and network (the all-reduce probe, or TCP to a peer) vary from one short sample to
the next: their cv (std/mean) is used as compute_cv and network_cv. Like every calibration it applies to
the options that have the measured GPU (by catalog match): a spread measured on one instance says how
nodes like it vary, not how an owned cluster or another GPU does. A run on a machine without a GPU
calibrates no GPU option (its CPU probes say nothing about a GPU node's step) and the plan says so.
"""

from __future__ import annotations

from pathlib import Path

from gpuwise.i18n import msg
from gpuwise.plan.calibrate import Calibration
from gpuwise.stability.model import StabilityReport

COMPUTE_METRIC_PREFIX = "compute."
NETWORK_METRICS = ("collective.allreduce_busbw", "network.tcp_gbit_s")
MAX_CV = 5.0  # a cv above this is not a measured spread but a broken or hand-edited file


def _usable(cv: float | None) -> bool:
    return cv is not None and 0.0 <= cv <= MAX_CV


def stability_calibration(report: StabilityReport, path: str | Path) -> Calibration:
    cal = Calibration(gpu_name=report.gpu_name, from_stability=True)
    name = Path(path).name
    if not report.gpu_name:
        cal.ignored.append(
            msg(
                "{file}: measured on {host}, which has no GPU: a CPU machine's spread says nothing about a GPU "
                "node's step, so no option is calibrated; run gpuwise stability on the GPU instance you plan for"
            ).format(file=name, host=report.host)
        )
        return cal
    compute = next((r for r in report.results if r.info.name.startswith(COMPUTE_METRIC_PREFIX)), None)
    if compute is not None and _usable(compute.summary.cv):
        cal.compute_cv = compute.summary.cv
        cal.used.append(
            msg("{file}: {metric} cv {cv} over {n} samples on {host} (compute straggler term, {gpu} options)").format(
                file=name, metric=compute.info.name, cv=f"{compute.summary.cv:.3f}", n=compute.summary.n,
                host=report.host, gpu=report.gpu_name,
            )
        )  # fmt: skip
    else:
        cal.ignored.append(msg("{file}: no compute samples (run with --layers compute)").format(file=name))
    network = next((r for m in NETWORK_METRICS for r in report.results if r.info.name == m), None)
    if network is not None and _usable(network.summary.cv):
        cal.network_cv = network.summary.cv
        cal.used.append(
            msg("{file}: {metric} cv {cv} over {n} samples (network straggler term, {gpu} options)").format(
                file=name,
                metric=network.info.name,
                cv=f"{network.summary.cv:.3f}",
                n=network.summary.n,
                gpu=report.gpu_name,
            )
        )
    else:
        cal.ignored.append(
            msg(
                "{file}: no all-reduce or network samples: the network straggler term keeps its default"
            ).format(file=name)
        )
    return cal
