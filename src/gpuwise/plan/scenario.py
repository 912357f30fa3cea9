"""Validation (a): source document 000's scenario table, reproduced (or refuted) by the model.

The claim: 8×A100 nodes on a 25–100 Gbps cloud VPC reach about 70–80% of an 8×200–400 Gbps
InfiniBand cluster's throughput at 4 nodes, and about 50–60% at 16+ nodes. We evaluate the same
workloads on both networks with identical GPUs, storage and software, so only the network differs.

    python -m gpuwise.plan.scenario [WORKLOAD.yaml ...]     (default: the three examples/)
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from gpuwise.i18n import joined
from gpuwise.plan import catalog_bridge as cat
from gpuwise.plan.defaults import PlanDefaults
from gpuwise.plan.options import Hardware, network, node_numbers
from gpuwise.plan.perf import OptionArrays, WorkloadNumbers, evaluate
from gpuwise.plan.provenance import Provenance
from gpuwise.plan.workload import load_workload

NODES = (1, 4, 16)
GPU = "A100-SXM-80GB"
# (label, per-node Gbit/s, fabric key or None for VPC TCP, rdma, provider whose NCCL socket defaults apply)
NETWORKS = (
    ("VPC 25G TCP", 25.0, None, False, "aws"),
    ("VPC 50G TCP", 50.0, None, False, "aws"),
    ("VPC 100G TCP", 100.0, None, False, "aws"),
    ("IB 8x HDR 200G", 8 * 200.0, "ib-hdr", True, None),
    ("IB 8x NDR 400G", 8 * 400.0, "ib-ndr", True, None),
)
DEFAULT_WORKLOADS = (
    "examples/llm-7b-pretrain-1t.yaml",
    "examples/llm-13b-finetune.yaml",
    "examples/resnet50-imagenet.yaml",
)


def scenario(workload_path: str, d: PlanDefaults | None = None) -> dict:
    """{network label: {"efficiency": [...], "step_s": [...]}} for one workload at NODES."""
    d = d or PlanDefaults()
    wl = load_workload(workload_path)
    hw = Hardware(GPU, cat.match_gpu(GPU), 8)
    rows = []
    for _label, gbps, fabric, rdma, provider in NETWORKS:
        # Same local storage for both, so only the network differs.
        net = network(gbps, fabric, d, rdma=rdma, provider=provider)
        rows.append(node_numbers(wl, hw, d, None, net, "local-nvme", 0.0, Provenance()))
    perf = evaluate(
        WorkloadNumbers.from_workload(wl, d.value("compute.recompute_factor"), d),
        OptionArrays.stack(rows),
        np.asarray(NODES, dtype=float),
    )
    return {
        label: {
            "efficiency": perf.efficiency[i].tolist(),
            "step_s": perf.step_s[i].tolist(),
            "feasible": (perf.infeasible[i] == 0).tolist(),
        }
        for i, (label, *_rest) in enumerate(NETWORKS)
    }


def table(paths: list[str]) -> str:
    """Markdown table: scaling efficiency per network and the cloud/IB throughput ratio vs the claims."""
    lines = [
        "| workload | network | eff. 4 nodes | eff. 16 nodes | cloud/IB 4 nodes (claim 70–80%) | cloud/IB 16 nodes (claim 50–60%) |",
        "|---|---|---|---|---|---|",
    ]
    for path in paths:
        res = scenario(path)
        name = Path(path).stem
        ib = [res[label]["step_s"] for label, *_r in NETWORKS if "IB" in label]
        for label, *_r in NETWORKS:
            r = res[label]
            eff = [f"{e:.0%}" if ok else "n/a" for e, ok in zip(r["efficiency"], r["feasible"], strict=True)]
            if "IB" in label:
                ratio = ["—", "—"]
            else:  # throughput ratio = IB step time / cloud step time; range over HDR..NDR
                ratio = []
                for k in (1, 2):
                    vals = sorted(s[k] / r["step_s"][k] for s in ib)
                    ok = r["feasible"][k]
                    span = (
                        f"{vals[0]:.0%}"
                        if round(vals[0], 2) == round(vals[-1], 2)
                        else f"{vals[0]:.0%}–{vals[-1]:.0%}"
                    )
                    ratio.append(span if ok else "n/a")
            lines.append(f"| {name} | {label} | {eff[1]} | {eff[2]} | {ratio[0]} | {ratio[1]} |")
    return joined("\n", lines)


def main(argv: list[str] | None = None) -> int:
    paths = (argv if argv is not None else sys.argv[1:]) or [p for p in DEFAULT_WORKLOADS if Path(p).exists()]
    if not paths:
        print(
            "give workload files, e.g. python -m gpuwise.plan.scenario examples/llm-7b-pretrain-1t.yaml",
            file=sys.stderr,
        )
        return 2
    print(
        f"8x {GPU} per node, identical except the inter-node network; nodes {joined(', ', map(str, NODES))}"
    )
    print(table(paths))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
