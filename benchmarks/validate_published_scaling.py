"""Validation (c): the planner's scaling model against published multi-node data-parallel results.

    python benchmarks/validate_published_scaling.py [--json out.json]

For each case in benchmarks/data/published_scaling.yaml (hardware, model size, gradient dtype, fusion
buffer, per-GPU batch, the published 1-node throughput and the throughput at each node count), the
perf model (gpuwise.plan.perf.evaluate) predicts the scaling efficiency at each node count:
compute per step = per-GPU batch / (1-node throughput / GPUs per node); NVLink all-reduce inside the
node from the catalog; the inter-node link = the published NIC rate × the sourced NCCL achieved-
fraction range for its transport (low / typical / high, plan_defaults.yaml); straggler term 0 (the
planner's default). Published efficiency = throughput(N) / (N × throughput(1 node)).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import yaml

DATA = Path(__file__).with_name("data") / "published_scaling.yaml"


def predict_case(case: dict) -> dict:
    import numpy as np

    from gpuwise.plan import catalog_bridge as cat
    from gpuwise.plan.defaults import PlanDefaults
    from gpuwise.plan.options import Hardware, achieved_range, intra_node
    from gpuwise.plan.perf import NodeNumbers, OptionArrays, WorkloadNumbers, evaluate

    d = PlanDefaults()
    g = int(case["gpus_per_node"])
    hw = Hardware(case["gpu"], cat.match_gpu(case["gpu"]), g)
    intra_bw, intra_lat, _ = intra_node(hw, d, None)
    batch = float(case["batch_per_gpu"])
    per_gpu = float(case["node_throughput"]) / g
    bucket = float(case["bucket_mb"]) * 1e6
    nodes = sorted(int(n) for n in case["measured"])
    w = WorkloadNumbers(
        flops_per_sample=1.0, total_samples=1.0, global_batch=batch * g, micro_batch=batch,
        params=float(case["params"]), weight_bytes=4.0, grad_bytes=4.0,
        reduce_bytes=float(case["reduce_bytes"]), optimizer_bytes=4.0, zero_stage=0, tp=1, pp=1, fixed_dp=0,
        bucket_bytes=bucket, first_bucket_bytes=bucket, layers=0.0, hidden=0.0, heads=0.0, seq_len=0.0,
        activation_checkpointing=False, flash_attention=True, activation_bytes_per_sample=0.0,
        bytes_per_sample=0.0, recompute_factor=1.0, random_reads=False, avg_read_bytes=1.0,
    )  # fmt: skip
    lat_key = "default_rdma_latency_us" if case["rdma"] else "default_network_latency_us"
    line = float(case["network_gbps"]) / 8 * 1e9
    out: dict = {"nodes": nodes}
    for end, frac in zip(("low", "typical", "high"), achieved_range(d, bool(case["rdma"])), strict=True):
        opt = NodeNumbers(
            gpus_per_node=g, peak_flops=per_gpu, mfu=1.0, gpu_memory_bytes=np.nan, intra_bytes_s=intra_bw,
            intra_latency_s=intra_lat, inter_bytes_s=line * frac,
            inter_latency_s=d.value(f"communication.{lat_key}") * 1e-6, compute_cv=0.0, network_cv=0.0,
            storage_bytes_s=1e30, storage_iops=1e30, storage_shared=False, time_overhead=0.0,
            usable_memory_fraction=1.0,
        )  # fmt: skip
        # weak scaling: the global batch grows with the node count, so evaluate one node count at a time
        eff = []
        for n in nodes:
            wn = WorkloadNumbers(**{**w.__dict__, "global_batch": batch * g * n})
            r = evaluate(wn, OptionArrays.stack([opt]), [1, n])
            one = evaluate(w, OptionArrays.stack([opt]), [1]).step_s[0, 0]
            eff.append(float(one / r.step_s[0, 1]))
        out[end] = eff
    out["published"] = [float(case["measured"][n]) / (n * float(case["node_throughput"])) for n in nodes]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", default="", help="also write the results to this file")
    ap.add_argument("--batch", type=int, default=0, help="per-GPU batch for every case (sensitivity check)")
    args = ap.parse_args()
    cases = yaml.safe_load(DATA.read_text())["cases"]
    print("| case (source) | nodes | published | model: low–typical–high | error (typical) |")
    print("|---|---|---|---|---|")
    results = []
    for case in cases:
        if args.batch:
            case = {**case, "batch_per_gpu": args.batch}
        r = predict_case(case)
        results.append({"name": case["name"], "source": case["source"], **r})
        for i, n in enumerate(r["nodes"]):
            err = (r["typical"][i] - r["published"][i]) * 100
            print(
                f"| {case['name']} ({case['source'].split()[0]}) | {n} | {r['published'][i]:.0%} "
                f"| {r['low'][i]:.0%}–{r['typical'][i]:.0%}–{r['high'][i]:.0%} | {err:+.0f} pts |"
            )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
