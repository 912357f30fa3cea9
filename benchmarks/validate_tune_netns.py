"""Validation: `gpuwise tune` over a 200 Mbit/s link finds that gradient compression pays, and says it
changes numerics (source document 000's cloud-network claim, measured).

    sudo python benchmarks/validate_tune_netns.py [--mbit 200] [--trials 6] [--steps 5]

Needs root (skips with a message otherwise). Two network namespaces (`gwtn-<pid>-0`, `gwtn-<pid>-1`)
are joined by one veth pair with a `tc tbf` limit on both ends (the method of
validate_netns_scaling.py). Each trial runs two gloo DDP ranks, one per namespace, of `wide_mlp` below
(4 x 1024-wide layers, 4.2 M parameters = 16.8 MB of fp32 gradients per step, a small batch), so the
all-reduce dominates the step. The search covers the DDP knobs only (comm_hook, bucket_cap_mb,
gradient_as_bucket_view, static_graph). The namespaces are removed whatever happens.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

SUBNET = "10.214.9"
HIDDEN, LAYERS = 1024, 4


def wide_mlp(cfg):
    """A spec (gpuwise.workloads.spec protocol) whose step is mostly gradient all-reduce on a slow link."""
    import torch
    from torch import nn
    from torch.nn import functional as F  # noqa: N812

    from gpuwise.workloads.reference import IndexedDataset
    from gpuwise.workloads.spec import TrainingSpec

    torch.set_num_threads(1)
    torch.manual_seed(cfg.seed)
    layers = []
    for _ in range(LAYERS):
        layers += [nn.Linear(HIDDEN, HIDDEN), nn.ReLU()]
    model = nn.Sequential(*layers[:-1])

    def sample(gen):
        return torch.randn(HIDDEN, generator=gen), torch.randn(HIDDEN, generator=gen)

    return TrainingSpec(
        model=model,
        dataset=IndexedDataset(1 << 20, cfg.seed, sample),
        loss=lambda m, batch: F.mse_loss(m(batch[0]), batch[1]),
        optimizer=lambda params, **impl: torch.optim.SGD(params, lr=1e-3, **impl),
        kind="mlp",
    )


class Link:
    """Two namespaces joined by a veth pair, both ends limited by tbf; removed in close()."""

    def __init__(self):
        tag = os.getpid() % 100000
        self.names = [f"gwtn-{tag}-0", f"gwtn-{tag}-1"]
        self.made: list[str] = []

    @staticmethod
    def sh(*cmd: str) -> None:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
        if res.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed: {res.stderr.strip()}")

    def up(self, mbit: float) -> None:
        a, b = self.names
        for ns in self.names:
            self.sh("ip", "netns", "add", ns)
            self.made.append(ns)
            self.sh("ip", "-n", ns, "link", "set", "lo", "up")
        self.sh("ip", "-n", a, "link", "add", "eth0", "type", "veth", "peer", "name", "eth0", "netns", b)
        burst_kb = max(64, int(mbit * 4 / 8))  # >= 4 ms of traffic
        for i, ns in enumerate(self.names):
            self.sh("ip", "-n", ns, "addr", "add", f"{SUBNET}.{i + 1}/24", "dev", "eth0")
            self.sh("ip", "-n", ns, "link", "set", "eth0", "up")
            self.sh(
                *("ip", "netns", "exec", ns, "tc", "qdisc", "replace", "dev", "eth0", "root", "tbf"),
                *("rate", f"{mbit:g}mbit", "burst", f"{burst_kb}kb", "latency", "100ms"),
            )

    def close(self) -> None:
        for ns in reversed(self.made):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=20)
        self.made.clear()


def run(mbit: float, trials: int, steps: int, storage: Path, timeout_s: float = 300) -> dict:
    """Tune wide_mlp over the limited link; returns the gpuwise-tune/1 document."""
    from gpuwise.tune.run import tune
    from gpuwise.tune.search import TuneOptions

    here = str(Path(__file__).resolve().parent)
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH", "")) if p)
    sys.path.insert(0, here)
    link = Link()
    try:
        link.up(mbit)
        opts = TuneOptions(
            target="validate_tune_netns:wide_mlp",
            batch_size=16,
            warmup=2,
            steps=steps,
            trials=trials,
            timeout_s=timeout_s,
            study="netns",
            storage=storage,
            nproc=2,
            prior="communication",
            rank_prefix=lambda rank: ["ip", "netns", "exec", link.names[rank]],
            master_addr=f"{SUBNET}.1",
            only=["comm_hook", "bucket_cap_mb", "gradient_as_bucket_view", "static_graph"],
            env={"GLOO_SOCKET_IFNAME": "eth0", "OMP_NUM_THREADS": "1"},
        )
        return tune(opts).to_json_dict()
    finally:
        link.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mbit", type=float, default=200)
    ap.add_argument("--trials", type=int, default=6)
    ap.add_argument("--steps", type=int, default=5)
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("skipped: needs root (network namespaces and tc)")
        return 0
    with tempfile.TemporaryDirectory(prefix="gwtn-") as tmp:
        doc = run(args.mbit, args.trials, args.steps, Path(tmp) / "tune.sqlite3")
    for t in doc["trials"]:
        speed = (
            f"{t['speedup']:.2f}x [{t['speedup_low']:.2f}-{t['speedup_high']:.2f}]"
            if t["speedup"]
            else t["reason"]
        )
        print(
            f"{t['number']:>3} {t['role']:<12} {json.dumps(t['changes']):<50} {speed}  numerics={t['numerics']}"
        )
    print(doc["verdict"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
