"""Make an inference plan: traffic, capacity per node type, every strategy costed, the decision.

`make_serving_plan(...)` is what `gpuwise plan` calls for a `kind: inference` workload. Nothing here
prints; `serving_plan_to_json` gives the `gpuwise-plan/1` document with `"kind": "inference"`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from gpuwise.errors import UserInputError
from gpuwise.i18n import joined, msg
from gpuwise.plan.decision import Decision
from gpuwise.plan.defaults import PlanDefaults
from gpuwise.plan.options_file import OptionsFile, load_options
from gpuwise.plan.region import Exclusion
from gpuwise.plan.serving.benchmarks import BenchmarkCheck, capacity_factors, compare
from gpuwise.plan.serving.calibrate import calibrated_throughput
from gpuwise.plan.serving.decide import best_by_side, decide
from gpuwise.plan.serving.defaults import ServingDefaults
from gpuwise.plan.serving.hardware import Hardware, cloud_hardware, owned_hardware
from gpuwise.plan.serving.strategies import Inputs, Strategy, cost_strategies
from gpuwise.plan.serving.traffic import DemandWeek, demand_week
from gpuwise.plan.serving.workload import InferenceWorkload, load_inference_workload


@dataclass
class ServingPlan:
    workload: InferenceWorkload
    workload_path: str
    demand: DemandWeek
    hardware: list[Hardware]
    strategies: list[Strategy]  # every feasible strategy, cheapest (typical) first
    decision: Decision
    checks: list[BenchmarkCheck]
    capacity_factors: tuple[float, float, float]  # applied to modelled capacity: low, typical, high cost
    slo_target: float
    delay_min: float
    currency: str
    defaults: ServingDefaults
    notes: list[str] = field(default_factory=list)
    excluded: list[Exclusion] = field(default_factory=list)  # offers left out by policy, with the reason

    def shown(self, limit: int = 8) -> list[Strategy]:
        """The cheapest strategy of each kind, then the rest, up to `limit`."""
        firsts, seen = [], set()
        for s in self.strategies:
            if s.name not in seen:
                firsts.append(s)
                seen.add(s.name)
        rest = [s for s in self.strategies if s not in firsts]
        return sorted(firsts, key=lambda s: s.cost_month[1]) + rest[: max(0, limit - len(firsts))]


def _all_strategies(hardware: list[Hardware], x: Inputs) -> list[Strategy]:
    clouds = [h for h in hardware if h.kind == "cloud" and h.capacity.feasible and h.on_demand]
    burst = min(clouds, key=lambda h: h.on_demand / h.capacity.planned_rps_per_node, default=None)
    out = [s for h in hardware for s in cost_strategies(h, burst, x)]
    return sorted(out, key=lambda s: s.cost_month[1])


def make_serving_plan(
    workload_path: str | Path,
    options_path: str | Path | None = None,
    calibrate_path: str | Path | None = None,
    options: OptionsFile | None = None,
) -> ServingPlan:
    wl = load_inference_workload(workload_path)
    opts = options or load_options(options_path)
    d = ServingDefaults().with_overrides(opts.model_overrides)
    training_keys = {k: v for k, v in opts.model_overrides.items() if not k.startswith("serving.")}
    plan_defaults = PlanDefaults().with_overrides(training_keys)  # decision thresholds, on-prem lead time
    notes: list[str] = []
    rps_per_gpu = wl.model.throughput_per_gpu
    if calibrate_path is not None:
        if wl.is_llm:
            notes.append(
                msg("--calibrate is used for non-LLM throughput only; the LLM model uses catalog figures")
            )
        else:
            rps_per_gpu, gpu, note = calibrated_throughput(calibrate_path, wl.model.bench_result)
            wl = wl.model_copy(update={"model": wl.model.model_copy(update={"gpu": gpu})})
            notes.append(note)
    if not wl.is_llm and rps_per_gpu is None:
        raise UserInputError(
            msg("a non-LLM model needs its throughput per GPU"),
            msg("set model.throughput_per_gpu (with model.gpu) or pass --calibrate with a bench result"),
        )
    demand = demand_week(wl.traffic, Path(workload_path).resolve().parent)
    rates = {**wl.org.exchange_rates, **opts.exchange_rates}
    excluded: list[Exclusion] = []
    hardware = cloud_hardware(wl, opts, d, rates, rps_per_gpu, notes, plan_defaults, excluded)
    hardware += owned_hardware(wl, opts, d, rates, rps_per_gpu, notes, plan_defaults)
    for h in hardware:  # precision and peer-link decisions, once per GPU
        notes.extend(line for line in h.capacity.notes if line not in notes)
    if not any(h.capacity.feasible for h in hardware):
        reasons = joined("; ", sorted({f"{h.gpu}: {h.capacity.reason}" for h in hardware})) or msg(
            "no offers or builds"
        )
        raise UserInputError(
            msg("no GPU option can serve this model within the target ({reasons})").format(reasons=reasons),
            msg("relax the service target, quantise the model, or add larger GPUs in the options file"),
        )
    if any(h.kind == "owned" and h.capacity.feasible and not h.staff_per_month for h in hardware):
        notes.append(
            msg(
                "owned costs include no staff (catalog staff_cost_per_year is 0): set costs.staff_per_year "
                "for the build in an options file (FTE × loaded salary) before trusting an owned verdict"
            )
        )
    checks = compare(d)
    factors = capacity_factors(checks) if wl.is_llm else (1.0, 1.0, 1.0)
    slo = wl.service.slo_attainment or d.value("slo_attainment_target")
    delay = wl.autoscaling.scale_up_delay_minutes
    delay = d.value("scale_up_delay_minutes") if delay is None else delay
    x = Inputs(demand, wl.autoscaling.min_nodes, delay, factors)
    strategies = _all_strategies(hardware, x)
    if not strategies:
        raise UserInputError(
            msg("no priced option: the offers that can serve the model have no usable price"),
            msg("add prices with an offers file (cloud.offers_dirs) or an on-prem build with costs"),
        )

    def rerun(ratio: float | None, growth: float | None) -> dict[str, Strategy]:
        dem = demand if ratio is None else demand.scaled_shape(ratio)
        if growth is not None:
            dem = dataclasses.replace(dem, growth_per_year=growth)
        return best_by_side(_all_strategies(hardware, dataclasses.replace(x, demand=dem)), slo)

    decision = decide(
        wl, strategies, slo, demand.peak_to_valley, d.value("close_cost_margin"),
        d.value("bursty_peak_to_valley"), wl.org.currency.upper(), rerun, plan_defaults.decision(),
    )  # fmt: skip
    if not wl.is_llm:
        notes.append(
            msg(
                "capacity is the given {rps} requests/s per GPU, assumed to meet the {ms} ms p95 target; "
                "costs have no capacity range (the throughput is an input)"
            ).format(rps=f"{rps_per_gpu:g}", ms=f"{wl.service.latency_p95_ms:g}")
        )
    return ServingPlan(
        wl, str(workload_path), demand, hardware, strategies, decision, checks, factors, slo, delay,
        wl.org.currency.upper(), d, notes, excluded,
    )  # fmt: skip
