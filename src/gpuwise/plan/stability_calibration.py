"""`plan --calibrate STABILITY.json`: the straggler terms from a `gpuwise stability` run.

The plan's straggler term is E[max of N] ~ cv * sqrt(2 ln N) of a synchronous step
(plan/data/plan_defaults.yaml, stragglers). A stability run measured how much this machine's compute
(the matmul probe) and network (the all-reduce probe, or TCP to a peer) vary from one short sample to
the next: their cv (std/mean) is used as compute_cv and network_cv. The spread is a property of the
instance, not of its GPU model, so it applies to every option (noted in the plan), unlike the bench
numbers, which apply only to the benchmarked GPU.
"""

from __future__ import annotations

from pathlib import Path

from gpuwise.i18n import _
from gpuwise.plan.calibrate import Calibration
from gpuwise.stability.model import StabilityReport

COMPUTE_METRIC_PREFIX = "compute."
NETWORK_METRICS = ("collective.allreduce_busbw", "network.tcp_gbit_s")
MAX_CV = 5.0  # a cv above this is not a measured spread but a broken or hand-edited file


def _usable(cv: float | None) -> bool:
    return cv is not None and 0.0 <= cv <= MAX_CV


def stability_calibration(report: StabilityReport, path: str | Path) -> Calibration:
    cal = Calibration(gpu_name=report.gpu_name, straggler_any_gpu=True)
    name = Path(path).name
    compute = next((r for r in report.results if r.info.name.startswith(COMPUTE_METRIC_PREFIX)), None)
    if compute is not None and _usable(compute.summary.cv):
        cal.compute_cv = compute.summary.cv
        cal.used.append(
            _("{file}: {metric} cv {cv} over {n} samples on {host} (compute straggler term, every option)").format(
                file=name, metric=compute.info.name, cv=f"{compute.summary.cv:.3f}", n=compute.summary.n,
                host=report.host,
            )
        )  # fmt: skip
    else:
        cal.ignored.append(_("{file}: no compute samples (run with --layers compute)").format(file=name))
    network = next((r for m in NETWORK_METRICS for r in report.results if r.info.name == m), None)
    if network is not None and _usable(network.summary.cv):
        cal.network_cv = network.summary.cv
        cal.used.append(
            _("{file}: {metric} cv {cv} over {n} samples (network straggler term, every option)").format(
                file=name, metric=network.info.name, cv=f"{network.summary.cv:.3f}", n=network.summary.n
            )
        )
    else:
        cal.ignored.append(
            _(
                "{file}: no all-reduce or network samples: the network straggler term keeps its default"
            ).format(file=name)
        )
    return cal
