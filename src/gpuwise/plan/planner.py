"""Make a plan: load inputs, build option rows, evaluate perf and cost for all of them at once, decide.

`make_plan(...)` is the library entry point behind `gpuwise plan`; `plan_to_json(plan)` gives the
`gpuwise-plan/1` document. Nothing here prints.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np

from gpuwise.errors import UserInputError
from gpuwise.i18n import joined, msg
from gpuwise.plan import catalog_bridge as cat
from gpuwise.plan import commitments, currency, region, staging
from gpuwise.plan.calibrate import Calibration, load_calibration
from gpuwise.plan.cost import CostArrays, cost_per_effective_gpu_hour, cost_per_run, cost_per_year
from gpuwise.plan.decide import decide
from gpuwise.plan.decision import Decision, pricing_label
from gpuwise.plan.defaults import PlanDefaults
from gpuwise.plan.evaluation import Evaluation
from gpuwise.plan.onprem import gpu_class, onprem_row
from gpuwise.plan.options import OptionRow, UnpricedOffer, cloud_rows
from gpuwise.plan.options_file import OnpremBuild, OptionsFile, load_options
from gpuwise.plan.perf import OptionArrays, WorkloadNumbers, evaluate
from gpuwise.plan.workload import load_workload

DEFAULT_NODES = (1, 2, 4, 8, 16, 32)


@dataclass(kw_only=True)
class Plan(Evaluation):
    """An evaluation with its decision: what `gpuwise plan` shows."""

    decision: Decision


def default_builds(d: PlanDefaults, notes: list[str]) -> list[OnpremBuild]:
    """plan_defaults.yaml's builds whose GPU class has a catalog server price (others are noted, not guessed)."""
    raw = cat.onprem_defaults()
    builds = []
    for entry in d.default_builds():
        spec = cat.match_gpu(entry.gpu)
        priced = spec is not None and raw.entry("server_price_per_node", gpu_class(spec)) is not None
        if priced:
            builds.append(OnpremBuild(name=entry.name, gpu=entry.gpu, fabric=entry.fabric))
        else:
            notes.append(
                msg(
                    "default build {name} skipped: the catalog has no server price for it (add it under "
                    "onprem: with costs.server_price_per_node in an options file)"
                ).format(name=entry.name)
            )
    return builds


def _build_gpu_key(build: OnpremBuild) -> str | None:
    spec = cat.match_gpu(build.gpu)
    return spec.key if spec is not None else None


def parse_sweep(text: str | None) -> list[int]:
    """`nodes=1,2,4` -> [1, 2, 4]."""
    if not text:
        return list(DEFAULT_NODES)
    key, _sep, values = text.partition("=")
    if key.strip() != "nodes" or not values:
        raise UserInputError(
            msg("--sweep {text} is not understood").format(text=repr(text)),
            msg("use {example}").format(example="--sweep nodes=1,2,4,8,16,32"),
        )
    try:
        nodes = sorted({int(v) for v in values.split(",") if v.strip()})
    except ValueError:
        raise UserInputError(
            msg("--sweep {text}: node counts must be whole numbers").format(text=repr(text)),
            msg("use {example}").format(example="--sweep nodes=1,2,4,8"),
        ) from None
    if not nodes or nodes[0] < 1 or nodes[-1] > 100000:
        raise UserInputError(
            msg("--sweep {text}: node counts must be between 1 and 100000").format(text=repr(text)),
            msg("use {example}").format(example="--sweep nodes=1,2,4,8"),
        )
    return nodes


def choose_nodes(
    feasible: np.ndarray, days: np.ndarray, run_cost: np.ndarray, deadline_days: float | None, tie: float
) -> np.ndarray:
    """Per option: the cheapest node count that meets the deadline, the fewest nodes among counts within
    `tie` (relative) of the cheapest; else the fastest; -1 if none is feasible."""
    cost = np.where(np.isnan(run_cost), np.inf, run_cost)
    chosen = np.full(days.shape[0], -1)
    for o in range(days.shape[0]):
        ok = np.flatnonzero(feasible[o])
        if ok.size == 0:
            continue
        meets = ok[days[o, ok] <= deadline_days] if deadline_days else ok
        if not meets.size:
            chosen[o] = ok[int(np.argmin(days[o, ok]))]
            continue
        best = float(np.min(cost[o, meets]))
        ties = meets[cost[o, meets] <= best * (1.0 + tie)] if np.isfinite(best) else meets
        chosen[o] = int(ties[0])  # node counts ascend: the fewest nodes
    return chosen


def _cost_arrays(rows: list[OptionRow], case: int, fx: np.ndarray) -> CostArrays:
    """The cost arrays with on-prem inputs from one case (0 low-cost, 1 typical, 2 high-cost)."""

    def onp(r: OptionRow):
        return r.onprem_cases[case] if r.onprem_cases else r.onprem

    return CostArrays(
        node_hour_price=np.array([r.node_hour_price for r in rows]),
        pays_idle=np.array([1.0 if r.pays_idle else 0.0 for r in rows]),
        annual_per_node=np.array([onp(r).annual_per_node() if r.onprem else np.nan for r in rows]),
        fixed_per_year=np.array([onp(r).staff_per_year if r.onprem else 0.0 for r in rows]),
        capex_per_node=np.array([onp(r).capex_per_node() if r.onprem else np.nan for r in rows]),
        opex_per_node_year=np.array(
            [sum(onp(r).opex_per_year().values()) if r.onprem else np.nan for r in rows]
        ),
        currency_factor=np.where(np.isnan(fx), 1.0, fx),  # unconvertible rows keep their own currency
    )


def tcp_tuning_note(
    rows: list[OptionRow], w: WorkloadNumbers, arrays: OptionArrays, nodes: np.ndarray, feasible: np.ndarray
) -> str | None:
    """How many points of scaling efficiency NCCL socket tuning is worth on the TCP options: the same
    model with untuned sockets (the range's low end) and tuned ones (its high end), stragglers as typical."""
    tcp = np.array([r.tcp for r in rows])
    if not tcp.any() or len(nodes) < 2:
        return None
    ends = []
    for end in ("low", "high"):
        other = getattr(arrays, f"inter_bytes_s_{end}")
        ends.append(
            evaluate(
                w,
                OptionArrays(
                    **{**arrays.__dict__, "inter_bytes_s": np.where(other > 0, other, arrays.inter_bytes_s)}
                ),
                nodes,
            ).efficiency
        )
    gain = np.where(tcp[:, None] & feasible & (nodes[None, :] > 1), ends[1] - ends[0], 0.0)
    o, k = np.unravel_index(int(np.argmax(gain)), gain.shape)
    if gain[o, k] < 0.02:
        return None
    return msg(
        "NCCL over TCP: socket tuning is worth up to {points:.0f} points of scaling efficiency here "
        "({option} at {nodes:g} nodes: {low:.0%} with untuned sockets, {high:.0%} tuned); "
        "`gpuwise tune` measures it on your cluster"
    ).format(
        points=gain[o, k] * 100, option=rows[o].label, nodes=nodes[k], low=ends[0][o, k], high=ends[1][o, k]
    )


def _commitment_notes(rows: list[OptionRow], blocked: np.ndarray, unpriced: list[UnpricedOffer]) -> list[str]:
    notes = []
    terms = {r.pricing for o, r in enumerate(rows) if (blocked[o] & commitments.TERM_LONGER_THAN_RUN).all()}
    if terms:
        notes.append(
            msg(
                "{pricings} prices are not options for this run: the commitment outlasts it; "
                "set org.reuse_capacity: true if the capacity is used afterwards"
            ).format(pricings=msg(" and ").join(sorted(pricing_label(t) for t in terms)))
        )
    if unpriced:
        notes.append(
            msg("{n} matching cloud offer(s) have no price and were not costed (e.g. {example})").format(
                n=len(unpriced), example=f"{unpriced[0].provider} {unpriced[0].instance_type}"
            )
        )
    return notes


def make_plan(
    workload_path: str | Path,
    options_path: str | Path | None = None,
    calibrate_path: str | Path | None = None,
    nodes: list[int] | None = None,
    options: OptionsFile | None = None,
    calibration: Calibration | None = None,
) -> Plan:
    """Evaluate every option at every node count and decide. Raises GpuwiseError subclasses on bad input.

    `calibration` is an already-built Calibration (e.g. from a fleet directory); `calibrate_path` a file."""
    wl = load_workload(workload_path)
    opts = options or load_options(options_path)
    d = PlanDefaults().with_overrides(opts.model_overrides)
    kind = "transformer" if wl.model.is_transformer else "cnn"
    cal = calibration or (
        load_calibration(calibrate_path, wl.training.precision, kind) if calibrate_path else None
    )
    nodes_arr = np.asarray(nodes or DEFAULT_NODES, dtype=float)
    notes: list[str] = []

    unpriced: list[UnpricedOffer] = []
    rows = cloud_rows(wl, opts.cloud, d, cal, unpriced)
    builds = default_builds(d, notes) if opts.onprem is None else opts.onprem
    rows, builds, excluded = region.exclude(wl.org, rows, builds, _build_gpu_key)
    rows += [onprem_row(wl, b, d, cal) for b in builds]
    if not rows:
        message = msg("no options to compare: no cloud offer matched and no on-prem build was given")
        if excluded:
            message += msg(" ({n} excluded for org.jurisdiction {jurisdiction}: {which})").format(
                n=len(excluded),
                jurisdiction=wl.org.jurisdiction,
                which=joined("; ", (f"{e.name}: {e.rule}" for e in excluded[:3])),
            )
        raise UserInputError(
            message, msg("widen the cloud filters in the options file or add an 'onprem:' build")
        )

    if cal is not None and cal.used and not any(r.provenance.measured() for r in rows):
        notes.append(
            msg("calibration from {gpu} matched no option's GPU: nothing was applied").format(
                gpu=cal.gpu_name
            )
        )
    numbers = WorkloadNumbers.from_workload(wl, d.value("compute.recompute_factor"), d)
    arrays = OptionArrays.stack([r.numbers for r in rows])
    perf = evaluate(numbers, arrays, nodes_arr)
    # The same at both ends of each network's achieved-bandwidth range (NCCL over TCP vs RDMA).
    efficiency_range = tuple(
        evaluate(numbers, arrays.with_network_end(end), nodes_arr).efficiency for end in ("low", "high")
    )
    tuning = tcp_tuning_note(rows, numbers, arrays, nodes_arr, perf.infeasible == 0)
    if tuning:
        notes.append(tuning)
    plan_ccy = wl.org.currency.upper()
    rates = {**wl.org.exchange_rates, **opts.exchange_rates}
    conversions = {r.currency: currency.conversion(r.currency, plan_ccy, rates) for r in rows}
    fx = np.array([conversions[r.currency].value if conversions[r.currency] else np.nan for r in rows])
    notes += [currency.describe(c) for c in conversions.values() if c is not None and c.value != 1.0]
    missing = sorted({r.currency for r, f in zip(rows, fx, strict=False) if math.isnan(f)})
    if missing:
        notes.append(
            msg(
                "prices in {currencies} are shown in their own currency and left out of the decision: "
                "add exchange_rates (e.g. {example}: 0.14 = 1 {example} in {currency}) to compare them"
            ).format(currencies=joined(", ", missing), example=missing[0], currency=plan_ccy)
        )
    hours = perf.time_to_train_s / 3600.0
    blocked = commitments.blocked(rows, nodes_arr, hours, wl.org, d)
    billed = commitments.billed_hours(rows, hours, d)
    u = np.array([wl.org.utilisation])
    run_cost_low, run_cost, run_cost_high = (
        cost_per_run(_cost_arrays(rows, case, fx), nodes_arr, billed, u, wl.org.burstiness)[:, :, 0]
        for case in range(3)
    )
    costs = _cost_arrays(rows, 1, fx)
    year_cost = cost_per_year(costs, nodes_arr, u, wl.org.burstiness)[:, :, 0]
    gpus = np.array([r.numbers.gpus_per_node for r in rows])
    eff_cost = cost_per_effective_gpu_hour(costs, nodes_arr, gpus, perf.efficiency, u, wl.org.burstiness)[
        :, :, 0
    ]
    chosen = choose_nodes(
        (perf.infeasible == 0) & (blocked == 0),
        perf.time_to_train_s / 86400.0,
        np.where(np.isnan(fx)[:, None], np.nan, run_cost),
        wl.deadline_days,
        d.decision().node_tie_tolerance,
    )
    notes += _commitment_notes(rows, blocked, unpriced)

    ev = Evaluation(
        workload=wl,
        workload_path=str(workload_path),
        rows=rows,
        nodes=nodes_arr,
        perf=perf,
        run_cost=run_cost,
        run_cost_low=run_cost_low,
        run_cost_high=run_cost_high,
        year_cost=year_cost,
        eff_gpu_hour_cost=eff_cost,
        chosen=chosen,
        currency=plan_ccy,
        convertible=~np.isnan(fx),
        calibration=cal,
        defaults=d,
        blocked=blocked,
        billed_hours=billed,
        unpriced=unpriced,
        cloud_compared=opts.cloud.include,
        builds_compared=opts.onprem is None or bool(opts.onprem),
        notes=notes,
        excluded=excluded,
        efficiency_range=efficiency_range,
        staging=staging.for_rows(wl.data, rows, chosen, nodes_arr, plan_ccy, rates),
    )
    ev.shown = _rows_to_show(ev, opts.cloud.max_offers)
    return Plan(**{f.name: getattr(ev, f.name) for f in fields(ev)}, decision=decide(ev))


def _rows_to_show(ev: Evaluation, max_cloud: int) -> list[int]:
    """All on-prem rows, and the `max_cloud` cheapest cloud rows at their chosen node count, those that meet
    the deadline first."""

    def run_cost(o: int) -> float:
        k = ev.chosen[o]
        return ev.run_cost[o, k] if k >= 0 else np.inf

    cloud = sorted(
        (o for o, r in enumerate(ev.rows) if r.kind == "cloud"),
        key=lambda o: (ev.chosen[o] < 0, not ev.meets_deadline(o), not ev.convertible[o], run_cost(o)),
    )
    seen: set[tuple[str, str]] = set()
    best_region = []  # the same instance and pricing in another region is shown once, at its cheapest
    for o in cloud:
        if (ev.rows[o].label, ev.rows[o].pricing) not in seen:
            seen.add((ev.rows[o].label, ev.rows[o].pricing))
            best_region.append(o)
    onprem = [o for o, r in enumerate(ev.rows) if r.kind == "onprem"]
    return best_region[:max_cloud] + onprem
