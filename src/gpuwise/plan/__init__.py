"""Rent-vs-build planning: workload schema, vectorised perf and cost models, and the decision.

Entry point: `gpuwise.plan.planner.make_plan(workload_path, options_path, calibrate_path, nodes)`;
`gpuwise.plan.export.plan_to_json(plan)` gives the `gpuwise-plan/1` document.
"""
