"""The `gpuwise-plan/1` JSON document of an inference plan (`"kind": "inference"`; NaN/inf become null)."""

from __future__ import annotations

import math

from gpuwise.documents.ids import PLAN_SCHEMA
from gpuwise.plan.decision import decision_to_json
from gpuwise.plan.serving.planner import ServingPlan
from gpuwise.plan.serving.strategies import Strategy


def _num(x, digits: int = 6):
    if x is None:
        return None
    x = float(x)
    return None if not math.isfinite(x) else round(x, digits)


def _range(values) -> dict:
    return {"low": _num(values[0], 2), "typical": _num(values[1], 2), "high": _num(values[2], 2)}


def per_million(plan: ServingPlan, s: Strategy) -> tuple[list[float], list[float] | None]:
    """Cost per million requests and per million output tokens (LLMs), as (low, typical, high)."""
    requests_month = plan.demand.mean * plan.demand.first_year_mean_growth() * 3600 * 730.0
    per_req = [c / requests_month * 1e6 for c in s.cost_month]
    if not plan.workload.is_llm:
        return per_req, None
    return per_req, [c / plan.workload.model.output_tokens for c in per_req]


def break_even_utilisation(plan: ServingPlan, s: Strategy) -> float | None:
    """Owned and reserved options: the utilisation at which paying for the node all the time costs the
    same as renting the same capacity on demand only while it is used (vs the cheapest on-demand node)."""
    clouds = [h for h in plan.hardware if h.kind == "cloud" and h.on_demand and h.capacity.feasible]
    if not clouds:
        return None
    od = min(clouds, key=lambda h: h.on_demand / h.capacity.planned_rps_per_node)
    od_per_rps_hour = od.on_demand / od.capacity.planned_rps_per_node
    hw = s.hardware
    if s.name in ("owned-peak", "hybrid") and hw.owned_per_month:
        fixed = hw.owned_per_month / 730.0
    elif s.name.startswith("reserved") and hw.reserved:
        fixed = hw.reserved
    else:
        return None
    return fixed / hw.capacity.planned_rps_per_node / od_per_rps_hour


def strategy_json(plan: ServingPlan, s: Strategy) -> dict:
    per_req, per_tok = per_million(plan, s)
    return {
        "strategy": s.name,
        "title": s.title,
        "side": s.side,
        "hardware": s.hardware.key,
        "burst_hardware": s.burst.key if s.burst else None,
        "base_nodes": s.base_nodes,
        "peak_nodes": s.peak_nodes,
        "cost_per_month": _range(s.cost_month),
        "cost_per_million_requests": _range(per_req),
        "cost_per_million_output_tokens": _range(per_tok) if per_tok else None,
        "slo_attainment": _num(s.slo_attainment),
        "utilisation": _num(s.utilisation),
        "break_even_utilisation": _num(break_even_utilisation(plan, s)),
        "capacity_rps_by_hour_of_week": [_num(v, 3) for v in s.capacity_rps],
    }


def serving_plan_to_json(plan: ServingPlan) -> dict:
    wl, dem = plan.workload, plan.demand
    return {
        "schema": PLAN_SCHEMA,
        "kind": "inference",
        "workload": {"path": plan.workload_path, **wl.model_dump(mode="json")},
        "currency": plan.currency,
        "traffic": {
            "source": dem.source,
            "peak_rps": _num(dem.peak),
            "valley_rps": _num(dem.valley),
            "mean_rps": _num(dem.mean),
            "peak_to_valley": _num(dem.peak_to_valley),
            "growth_per_year": dem.growth_per_year,
            "rps_by_hour_of_week": [_num(v, 3) for v in dem.rps],
        },
        "slo_attainment_target": plan.slo_target,
        "arrivals": {
            "model": "poisson" if wl.traffic.burst_factor == 1 else "bursty",
            "burst_factor": wl.traffic.burst_factor,
        },  # fmt: skip
        "scale_up_delay_minutes": plan.delay_min,
        "capacity": [
            {
                "hardware": h.key,
                "kind": h.kind,
                "gpu": h.gpu,
                "gpus_per_node": h.capacity.gpus_per_node,
                "feasible": h.capacity.feasible,
                "reason": h.capacity.reason or None,
                "tp": h.capacity.tp or None,
                "batch": h.capacity.batch or None,
                "max_batch_memory": h.capacity.max_batch_memory or None,
                "precision": h.capacity.precision or None,
                "ttft_ms": _num(h.capacity.ttft_s * 1e3, 3),
                "tpot_ms": _num(h.capacity.tpot_s * 1e3, 3),
                "ttft_p95_ms": _num(h.capacity.ttft_p95_s * 1e3, 3),
                "ttft_p99_ms": _num(h.capacity.ttft_p99_s * 1e3, 3),
                "tpot_p95_ms": _num(h.capacity.tpot_p95_s * 1e3, 3),
                "tpot_p99_ms": _num(h.capacity.tpot_p99_s * 1e3, 3),
                "rps_per_node": _num(h.capacity.rps_per_node, 3),
                "planned_rps_per_node": _num(h.capacity.planned_rps_per_node, 3),
                "limit": h.capacity.limit or None,
                "prices_per_node_hour": {
                    "on_demand": _num(h.on_demand),
                    "reserved_1y": _num(h.reserved),
                    "spot": _num(h.spot),
                },  # fmt: skip
                "owned_per_node_month": _num(h.owned_per_month, 2),
                "sources": h.sources,
                "notes": list(h.capacity.notes),
            }
            for h in plan.hardware
        ],
        "options": [strategy_json(plan, s) for s in plan.strategies],
        "decision": decision_to_json(plan.decision),
        "capacity_model_check": {
            "capacity_factors": {
                "low_cost": _num(plan.capacity_factors[0]),
                "typical": _num(plan.capacity_factors[1]),
                "high_cost": _num(plan.capacity_factors[2]),
            },  # fmt: skip
            "benchmarks": [
                {
                    "id": c.id,
                    "metric": c.metric,
                    "published": c.published,
                    "predicted": _num(c.predicted, 3),
                    "error": _num(c.error),
                    "source": c.source,
                    "held_out": c.held_out,
                }  # fmt: skip
                for c in plan.checks
            ],
        },
        "assumptions": [
            {"key": f"serving.{k}", "value": plan.defaults.value(k), "source": plan.defaults.source(k)}
            for k in plan.defaults.names()
        ],
        "notes": plan.notes,
        "excluded": [e.to_json() for e in plan.excluded],
    }
