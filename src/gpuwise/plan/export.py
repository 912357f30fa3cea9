"""The `gpuwise-plan/1` JSON document for a Plan (NaN and infinity become null)."""

from __future__ import annotations

import math

from gpuwise.documents.ids import PLAN_SCHEMA
from gpuwise.plan.decision import decision_to_json
from gpuwise.plan.planner import Plan

# Defaults the model used, listed in every plan with their sources.
ASSUMPTION_KEYS = (
    "mfu.mfu_over_mamf",
    "mfu.fallback_mfu",
    "compute.recompute_factor",
    "communication.intra_node_busbw_fraction",
    "communication.nvlink_latency_us",
    "tcp_sockets.wire_efficiency",
    "tcp_sockets.host_cap_gbps",
    "tcp_sockets.channels",
    "tcp_sockets.per_flow_gbps",
    "tcp_sockets.per_flow_gbps_low_end",
    "tcp_sockets.sockets_default",
    "tcp_sockets.sockets_tuned",
    "network_achieved_fraction.rdma.low",
    "network_achieved_fraction.rdma.typical",
    "network_achieved_fraction.rdma.high",
    "network_achieved_fraction.tcpx.low",
    "network_achieved_fraction.tcpx.typical",
    "network_achieved_fraction.tcpx.high",
    "communication.default_rdma_latency_us",
    "communication.default_network_latency_us",
    "stragglers.compute_cv",
    "stragglers.compute_cv_low_end",
    "runtimes.horovod.fusion_mb",
    "runtimes.horovod.cycle_ms",
    "runtimes.horovod.per_tensor_us",
    "stragglers.network_cv_rdma",
    "stragglers.network_cv_ethernet",
    "memory.usable_fraction",
    "spot.interruptions_per_node_day",
    "spot.checkpoint_interval_minutes",
    "spot.restart_minutes",
    "lead_time_days.onprem_build",
    "decision.bursty_peak_ratio",
    "decision.long_horizon_years",
    "decision.close_cost_margin",
    "decision.steady_utilisation",
    "decision.context_votes_override_cost",
    "decision.context_votes_tip_close_call",
    "decision.node_tie_tolerance",
)


def _num(x, digits: int = 6):
    if x is None:
        return None
    x = float(x)
    return None if math.isnan(x) or math.isinf(x) else round(x, digits)


def _range(plan: Plan, o: int, k: int) -> list[float | None] | None:
    """[low, high] efficiency over the network's achieved-fraction range (NCCL over TCP or RDMA)."""
    if plan.efficiency_range is None:
        return None
    return [_num(e[o, k], 4) for e in plan.efficiency_range]


def assumptions(plan: Plan) -> list[dict]:
    d = plan.defaults
    return [{"key": k, "value": d.value(k), "source": d.source(k)} for k in ASSUMPTION_KEYS]


def option_json(plan: Plan, o: int) -> dict:
    row, perf = plan.rows[o], plan.perf
    per_nodes = []
    for k, n in enumerate(plan.nodes):
        ok = plan.feasible(o, k)
        per_nodes.append(
            {
                "nodes": int(n),
                "gpus": int(n * row.numbers.gpus_per_node),
                "feasible": bool(ok),
                "reasons": plan.reasons(o, k),
                "step_s": _num(perf.step_s[o, k]) if ok else None,
                "compute_s": _num(perf.compute_s[o, k]) if ok else None,
                "comm_s": _num(perf.comm_s[o, k]) if ok else None,
                "exposed_comm_s": _num(perf.exposed_comm_s[o, k]) if ok else None,
                "straggler_s": _num(perf.straggler_s[o, k]) if ok else None,
                "data_s": _num(perf.data_s[o, k]) if ok else None,
                "scaling_efficiency": _num(perf.efficiency[o, k], 4) if ok else None,
                "scaling_efficiency_range": _range(plan, o, k) if ok else None,
                "time_to_train_days": _num(perf.time_to_train_s[o, k] / 86400, 3) if ok else None,
                "memory_per_gpu_gib": _num(perf.memory_per_gpu_bytes[o, k] / 2**30, 2),
                "cost_per_run": _num(plan.run_cost[o, k], 2) if ok else None,
                "cost_per_run_range": [_num(plan.run_cost_low[o, k], 2), _num(plan.run_cost_high[o, k], 2)]
                if ok
                else None,
                "billed_hours": _num(plan.billed_hours[o, k], 3) if ok else None,
                "cost_per_year": _num(plan.year_cost[o, k], 0),
                "cost_per_effective_gpu_hour": _num(plan.eff_gpu_hour_cost[o, k], 4) if ok else None,
            }
        )
    k = int(plan.chosen[o])
    out = {
        "key": row.key,
        "kind": row.kind,
        "pricing": row.pricing,
        "label": row.label,
        "gpu": row.gpu_name,
        "gpus_per_node": int(row.numbers.gpus_per_node),
        "provider": row.provider,
        "instance_type": row.instance_type,
        "region": row.region,
        "currency": plan.currency if plan.convertible[o] else row.currency,
        "node_hour_price": _num(row.node_hour_price, 4),
        "price_currency": row.currency,
        "lead_time_days": row.lead_time_days,
        "network": row.network,
        "mfu": _num(row.numbers.mfu, 4),
        "provenance": dict(row.provenance),
        "provenance_kind": row.provenance.kinds(),  # key -> workload, options, calibrated, stability, catalog, ...
        "chosen_nodes": int(plan.nodes[k]) if k >= 0 else None,
        "per_nodes": per_nodes,
        # the data set's move to this option before training (plan/staging.py); null: nothing moves
        "data_staging": st.to_json() if (st := plan.staging[o] if o < len(plan.staging) else None) else None,
    }
    if row.onprem is not None:
        out["onprem_costs"] = {key: _num(v, 2) for key, v in row.onprem.breakdown().items()}
        if row.onprem_cases:  # the same breakdown at the low- and high-cost ends of every default
            low, _typical, high = (c.breakdown() for c in row.onprem_cases)
            out["onprem_costs_range"] = {key: [_num(low[key], 2), _num(high[key], 2)] for key in low}
    return out


def plan_to_json(plan: Plan) -> dict:
    """The whole plan as a JSON-ready dict with "schema": "gpuwise-plan/1"."""
    wl = plan.workload
    cal = plan.calibration
    return {
        "schema": PLAN_SCHEMA,
        "workload": {
            "name": wl.name,
            "path": plan.workload_path,
            "params": _num(wl.model.param_count(), 0),
            "total_train_flops": _num(wl.total_train_flops(), 0),
            "total_samples": _num(wl.total_samples(), 0),
            "steps": _num(wl.steps(), 1),
            "precision": wl.training.precision,
            "deadline_days": wl.deadline_days,
            "org": wl.org.model_dump(),
        },
        "currency": plan.currency,
        "nodes": [int(n) for n in plan.nodes],
        "evaluated_options": len(plan.rows),
        "options": [option_json(plan, o) for o in plan.shown],
        "decision": decision_to_json(plan.decision),
        "calibration": None
        if cal is None
        else {
            "gpu": cal.gpu_name,
            "used": cal.used,
            "ignored": cal.ignored,
            "network": None
            if cal.network is None
            else {
                "nodes": cal.network.nodes,
                "ranks_per_node": cal.network.ranks_per_node,
                "latency_us": _num(cal.network.latency_s * 1e6, 3),
                "fit_bandwidth_gb_s": _num(1 / cal.network.seconds_per_byte / 1e9, 4),
                "busbw_plateau_gb_s": _num(cal.network.busbw_plateau_gb_s, 4),
                "transport": cal.network.transport,
                "source": cal.network.source,
            },
            "compute_cv": _num(cal.compute_cv, 4) if cal.compute_cv is not None else None,
            "network_cv": _num(cal.network_cv, 4) if cal.network_cv is not None else None,
        },
        "assumptions": assumptions(plan),
        "notes": plan.notes,
        "excluded": [e.to_json() for e in plan.excluded],
    }
