"""Validation (c): the planner's scaling model against published multi-node data-parallel results.

    python benchmarks/validate_published_scaling.py [--json out.json]

For each case in benchmarks/data/published_scaling.yaml (hardware, NICs, transport, runtime, model size,
gradient dtype, per-GPU batch, the published 1-node throughput and the throughput at each node count),
the plan's own model (gpuwise.plan.perf.evaluate with gpuwise.plan.options.network) predicts the scaling
efficiency at each node count: compute per step = per-GPU batch / (1-node throughput / GPUs per node);
NVLink all-reduce inside the node from the catalog; the inter-node link from `network()` (TCP: NCCL
sockets × per-flow limit × wire and host ceilings; RDMA: sourced fractions, GPUDirect RDMA or not);
Horovod's fusion buffer, cycle and per-tensor negotiation; the default straggler cv. The range is the
plan's: `low` = untuned sockets outside a placement group (or RDMA without GPUDirect) and the pessimistic
straggler cv, `high` = tuned sockets and no stragglers. Published efficiency = throughput(N) /
(N × throughput(1 node)). tests/plan/test_published_scaling.py asserts the tolerances on the same data.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import yaml

DATA = Path(__file__).with_name("data") / "published_scaling.yaml"


def load_cases() -> list[dict]:
    return yaml.safe_load(DATA.read_text())["cases"]


def predict_case(case: dict) -> dict:
    """Model efficiency (low, typical, high) and the published efficiency at each node count of a case."""
    import numpy as np

    from gpuwise.plan import catalog_bridge as cat
    from gpuwise.plan.defaults import PlanDefaults
    from gpuwise.plan.options import Hardware, intra_node, network, tcp_fraction
    from gpuwise.plan.perf import NodeNumbers, OptionArrays, WorkloadNumbers, evaluate, horovod_wait_s

    d = PlanDefaults()
    g = int(case["gpus_per_node"])
    hw = Hardware(case["gpu"], cat.match_gpu(case["gpu"]), g)
    intra_bw, intra_lat, _ = intra_node(hw, d, None)
    micro = float(case["batch_per_gpu"])
    by_nodes = {int(k): int(v) for k, v in (case.get("accumulation_by_nodes") or {}).items()}

    def per_reduce(n: int) -> float:  # samples per GPU per all-reduce at n nodes
        return micro * by_nodes.get(n, int(case.get("accumulation", 1)))

    batch = per_reduce(1)
    per_gpu = float(case["node_throughput"]) / g
    horovod = case["runtime"] == "horovod"
    bucket = d.value("runtimes.horovod.fusion_mb") * 2**20 if horovod else 25 * 2**20
    first = bucket if horovod else 2**20
    nodes = sorted(int(n) for n in case["measured"])
    w = WorkloadNumbers(
        flops_per_sample=1.0, total_samples=1.0, global_batch=batch * g, micro_batch=micro,
        params=float(case["params"]), weight_bytes=4.0, grad_bytes=4.0,
        reduce_bytes=float(case["reduce_bytes"]), optimizer_bytes=4.0, zero_stage=0, tp=1, pp=1, fixed_dp=0,
        bucket_bytes=bucket, first_bucket_bytes=first, layers=0.0, hidden=0.0, heads=0.0, seq_len=0.0,
        activation_checkpointing=False, flash_attention=True, activation_bytes_per_sample=0.0,
        bytes_per_sample=0.0, recompute_factor=1.0, random_reads=False, avg_read_bytes=1.0,
        sync_wait_s=horovod_wait_s(d, float(case["grad_tensors"])) if horovod else 0.0,
        flat_ring=bool(case.get("nccl_rings_only", False)),
    )  # fmt: skip
    gbps = float(case["nic_gbps"]) * int(case["nics"])
    achieved = None  # TCP: the case's own sockets and per-flow limit when the source implies them
    if not case["rdma"] and case.get("nccl_sockets"):
        key = "per_flow_gbps" if case.get("placement_group", True) else "per_flow_gbps_low_end"
        achieved = tcp_fraction(d, gbps, int(case["nccl_sockets"]), d.value(f"tcp_sockets.{key}"))
    net = network(
        gbps,
        None,
        d,
        achieved=achieved,
        rdma=bool(case["rdma"]),
        provider=case.get("provider"),
        gpudirect=bool(case.get("gpudirect", True)),
    )
    opt = NodeNumbers(
        gpus_per_node=g, peak_flops=per_gpu, mfu=1.0, gpu_memory_bytes=np.nan, intra_bytes_s=intra_bw,
        intra_latency_s=intra_lat, inter_bytes_s=net.bytes_s, inter_latency_s=net.latency_s,
        compute_cv=d.value("stragglers.compute_cv"), network_cv=0.0, storage_bytes_s=1e30,
        storage_iops=1e30, storage_shared=False, time_overhead=0.0, usable_memory_fraction=1.0,
        inter_bytes_s_low=net.bytes_s_low, inter_bytes_s_high=net.bytes_s_high,
        compute_cv_low_end=d.value("stragglers.compute_cv_low_end"),
    )  # fmt: skip
    arrays = OptionArrays.stack([opt])
    ends = {"low": arrays.with_network_end("low"), "typical": arrays, "high": arrays.with_network_end("high")}
    out: dict = {"nodes": nodes}
    for end, o in ends.items():
        one = evaluate(w, o, [1]).step_s[0, 0]
        eff = []
        for n in nodes:  # the global batch per all-reduce: per-GPU samples (accumulation at n nodes) x GPUs
            wn = WorkloadNumbers(**{**w.__dict__, "global_batch": per_reduce(n) * g * n})
            step = evaluate(wn, o, [n]).step_s[0, 0]
            eff.append(float((one / batch) / (step / per_reduce(n))))  # per-sample time, 1 node vs n nodes
        out[end] = eff
    out["published"] = [float(case["measured"][n]) / (n * float(case["node_throughput"])) for n in nodes]
    return out


def points(script_accumulation: bool = False) -> list[dict]:
    """One row per published point: case, source, nodes, published, low / typical / high."""
    rows = []
    for case in load_cases():
        if script_accumulation and "BioBERT" in case["name"]:
            case = {**case, "accumulation": 128 if "seq 128" in case["name"] else 512}
        r = predict_case(case)
        for i, n in enumerate(r["nodes"]):
            rows.append(
                {
                    "name": case["name"], "source": case["source"], "transport": "RDMA" if case["rdma"] else "TCP",
                    "tuned": bool(case["tuned"]), "fitted": bool(case.get("fitted", False)),
                    "unseen": bool(case.get("added_after_fit", False)), "nodes": n,
                    "published": r["published"][i], "low": r["low"][i], "typical": r["typical"][i],
                    "high": r["high"][i],
                }
            )  # fmt: skip
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", default="", help="also write the results to this file")
    ap.add_argument(
        "--accumulation-from-script",
        action="store_true",
        help="BioBERT cases with run_biobert.sub's default accumulation (128 at seq 128, 512 at seq 512)",
    )
    args = ap.parse_args()
    rows = points(script_accumulation=args.accumulation_from_script)
    print("| case (source) | net | nodes | published | model: low–typical–high | error (typical) |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        err = (r["typical"] - r["published"]) * 100
        inside = r["low"] - 1e-9 <= r["published"] <= r["high"] + 1e-9
        print(
            f"| {r['name']} ({r['source'].split()[0]}) | {r['transport']} | {r['nodes']} | {r['published']:.0%} "
            f"| {r['low']:.0%}–{r['typical']:.0%}–{r['high']:.0%}{'' if inside else ' (outside)'} | {err:+.0f} pts |"
        )
    within = sum(abs(r["typical"] - r["published"]) <= 0.10 for r in rows)
    inside = sum(r["low"] - 1e-9 <= r["published"] <= r["high"] + 1e-9 for r in rows)
    print(f"\n{len(rows)} points: {within} within 10 points, {inside} inside the predicted range")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
