"""How fast is the planner's vectorised model? 100,000 evaluations (option × node count × utilisation).

    python benchmarks/plan_sweep_speed.py [--options 250] [--repeats 7]

Options are the real rows `gpuwise plan` builds for examples/llm-7b-pretrain-1t.yaml (catalog offers and
on-prem builds), tiled with varied network bandwidth and price so the sweep has many distinct options.
Each evaluation = step time, scaling efficiency, time-to-train, cost per run, cost per year and cost per
effective GPU-hour at one (option, node count, utilisation). Target: < 1 s for 100,000.
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from gpuwise.plan.cost import CostArrays, cost_per_effective_gpu_hour, cost_per_run, cost_per_year
from gpuwise.plan.defaults import PlanDefaults
from gpuwise.plan.perf import OptionArrays, WorkloadNumbers, evaluate
from gpuwise.plan.planner import make_plan

ROOT = Path(__file__).resolve().parents[1]
NODES = np.array([1, 2, 4, 8, 16, 32, 64, 128], dtype=float)


def build_inputs(n_options: int):
    plan = make_plan(ROOT / "examples/llm-7b-pretrain-1t.yaml", ROOT / "examples/plan-options.yaml")
    base = [r for r in plan.rows]
    rng = np.random.default_rng(0)
    rows, prices, annual = [], [], []
    for i in range(n_options):
        r = base[i % len(base)]
        rows.append(replace(r.numbers, inter_bytes_s=r.numbers.inter_bytes_s * rng.uniform(0.25, 2.0)))
        prices.append(r.node_hour_price * rng.uniform(0.5, 1.5))
        annual.append(r.onprem.annual_per_node() if r.onprem else np.nan)
    costs = CostArrays(
        node_hour_price=np.array(prices),
        pays_idle=np.zeros(n_options),
        annual_per_node=np.array(annual),
        fixed_per_year=np.zeros(n_options),
        capex_per_node=np.full(n_options, np.nan),
        opex_per_node_year=np.full(n_options, np.nan),
        currency_factor=np.ones(n_options),
    )
    w = WorkloadNumbers.from_workload(plan.workload, PlanDefaults().value("compute.recompute_factor"))
    return w, OptionArrays.stack(rows), costs


def sweep(w, opts, costs, utilisation):
    perf = evaluate(w, opts, NODES)
    hours = perf.time_to_train_s / 3600.0
    run = cost_per_run(costs, NODES, hours, utilisation, 1.2)
    year = cost_per_year(costs, NODES, utilisation, 1.2)
    eff = cost_per_effective_gpu_hour(costs, NODES, opts.gpus_per_node, perf.efficiency, utilisation, 1.2)
    return run, year, eff


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--options", type=int, default=250)
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    n_util = max(1, round(100_000 / (args.options * len(NODES))))
    utilisation = np.linspace(0.05, 1.0, n_util)
    w, opts, costs = build_inputs(args.options)
    n_evals = args.options * len(NODES) * n_util
    sweep(w, opts, costs, utilisation)  # warm-up
    times = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        run, _year, _eff = sweep(w, opts, costs, utilisation)
        times.append(time.perf_counter() - t0)
    assert run.shape == (args.options, len(NODES), n_util)
    med = statistics.median(times)
    print(
        f"{n_evals:,} evaluations ({args.options} options × {len(NODES)} node counts × {n_util} utilisations)"
    )
    print(
        f"median {med * 1000:.1f} ms, min {min(times) * 1000:.1f} ms, "
        f"max {max(times) * 1000:.1f} ms over {args.repeats} repeats (after 1 warm-up); "
        f"{n_evals / med:,.0f} evaluations/s"
    )
    print("PASS: under 1 s" if med < 1.0 else "FAIL: 1 s or more")


if __name__ == "__main__":
    main()
