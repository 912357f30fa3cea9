"""`gpuwise fleet run --slurm`: the batch job that collects a fleet directory, and its submission.

The job uses only standard Slurm features (sbatch directives, srun, scontrol show hostnames):
1. one task per node runs `gpuwise capture` and the chosen benchmarks into OUT/.partial-<node>, then
   renames the folder to OUT/<node>, so a node folder is either complete or absent;
2. one torchrun launcher per node (srun), c10d rendezvous on the first node, runs the all-reduce
   benchmark across all nodes (`python -m gpuwise.bench.collective`) -> OUT/collective.json;
3. the same way with one rank per node, the pairwise link test (`python -m gpuwise.fleet.linktest`)
   -> OUT/links.json.
OUT must be on a filesystem every node sees (the usual shared home or project folder).
"""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from gpuwise.i18n import joined, msg
from gpuwise.slurm import client
from gpuwise.slurm.request import SlurmRequest, resource_options


@dataclass(frozen=True)
class JobOptions:
    out: Path
    nodes: int | None = None
    nodelist: str | None = None
    partition: str | None = None
    account: str | None = None
    time: str | None = None
    bench_only: str | None = None  # None: `bench --quick`; "none": no benchmarks; else `--only LIST`
    collective_sizes: str = "1M:256M"
    link_bytes: str = "64M"
    port: int = 29500
    gpus_per_node: int = 0  # GPUs to ask for (0: none); a ConstrainDevices cluster shows a job only its own
    gpu_request: str = "gpus-per-node"  # or "gres" (--gres=gpu:N) or "none"
    exclusive: bool = False
    qos: str | None = None


def bench_args(only: str | None) -> str:
    if only is None:
        return "--quick"
    if only.strip().lower() == "none":
        return ""
    from gpuwise.bench.registry import select

    select(only)  # a typo fails here, in a second, not on every node
    return f"--quick --only {only}"


def resource_directives(o: JobOptions) -> list[str]:
    """GPUs (--gpus-per-node or --gres), --exclusive, --time, --partition, --account, --qos (gpuwise/slurm/request.py)."""
    request = SlurmRequest(gpus_per_node=o.gpus_per_node, gpu_request=o.gpu_request, exclusive=o.exclusive,
                           time=o.time, partition=o.partition, account=o.account, qos=o.qos)  # fmt: skip
    return [f"--{k}" if v is None else f"--{k}={v}" for k, v in resource_options(request)]


def job_script(o: JobOptions) -> str:
    out = str(Path(o.out).expanduser().absolute())
    directives = ["--job-name=gpuwise-fleet", "--ntasks-per-node=1", f"--output={out}/_slurm/fleet-%j.out"]
    for flag, value in (
        ("--nodes", o.nodes),
        ("--nodelist", o.nodelist),
    ):
        if value is not None:
            directives.append(f"{flag}={value}")
    directives += resource_directives(o)
    q = shlex.quote
    lines = ["#!/bin/bash", *(f"#SBATCH {d}" for d in directives)]
    lines += [
        "# Written by `gpuwise fleet run --slurm`. Standard Slurm only: sbatch, srun, scontrol.",
        "set -uo pipefail",
        f"OUT={q(out)}",
        f"GPUWISE={q(client.gpuwise_executable())}",
        f"PYTHON={q(str(Path(sys.executable).absolute()))}",
        f"BENCH_ARGS={q(bench_args(o.bench_only))}",
        'HEAD=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1)',
        "export OUT GPUWISE PYTHON BENCH_ARGS HEAD",
        "",
        "# 1. every node: capture + benchmarks, renamed into place when complete",
        "srun --ntasks-per-node=1 bash -c '",
        '  node=${SLURMD_NODENAME:-$(hostname)}; tmp="$OUT/.partial-$node"',
        '  rm -rf "$tmp" && mkdir -p "$tmp" || exit 1',
        '  "$GPUWISE" capture -o "$tmp/capture.tar.gz" >"$tmp/capture.log" 2>&1 || echo "capture failed on $node" >&2',
        '  if [ -n "$BENCH_ARGS" ]; then',
        '    "$GPUWISE" bench $BENCH_ARGS --save "$tmp/bench.json" >"$tmp/bench.log" 2>&1 || echo "bench failed on $node" >&2',
        "  fi",
        '  rm -rf "$OUT/$node" && mv "$tmp" "$OUT/$node"',
        "'",
        "nodes_rc=$?",
        "",
        "# 2. all-reduce across all nodes: one torchrun launcher per node, c10d rendezvous on the first node",
        "srun --ntasks-per-node=1 bash -c '",
        '  G=$(nvidia-smi -L 2>/dev/null | grep -c "^GPU" || true); [ "${G:-0}" -ge 1 ] || G=1',
        '  exec "$PYTHON" -m torch.distributed.run --nnodes "$SLURM_JOB_NUM_NODES" --nproc-per-node "$G" \\',
        f'    --rdzv-backend c10d --rdzv-endpoint "$HEAD:{o.port}" --rdzv-id "gpuwise-ar-$SLURM_JOB_ID" \\',
        f'    -m gpuwise.bench.collective --ops all_reduce --sizes {q(o.collective_sizes)} --json "$OUT/collective.json"',
        "'",
        "ar_rc=$?",
        "",
        "# 3. pairwise link test, one rank per node (which node's link is slow, not only that one is)",
        "srun --ntasks-per-node=1 bash -c '",
        '  exec "$PYTHON" -m torch.distributed.run --nnodes "$SLURM_JOB_NUM_NODES" --nproc-per-node 1 \\',
        f'    --rdzv-backend c10d --rdzv-endpoint "$HEAD:{o.port + 1}" --rdzv-id "gpuwise-links-$SLURM_JOB_ID" \\',
        f'    -m gpuwise.fleet.linktest --bytes {q(o.link_bytes)} --json "$OUT/links.json"',
        "'",
        "links_rc=$?",
        'echo "gpuwise fleet: nodes rc=$nodes_rc all-reduce rc=$ar_rc links rc=$links_rc"',
        "exit $(( nodes_rc != 0 ? nodes_rc : ar_rc != 0 ? ar_rc : links_rc ))",
        "",
    ]
    return joined("\n", lines)


def submit(script: str, out: Path, timeout_s: float | None = None) -> tuple[str, int]:
    """sbatch --wait the script (kept as OUT/_slurm/fleet-job.sh); returns (job id, the job's exit code)."""
    client.executable("sbatch", msg("run it on a Slurm login node (or use --dry-run to see the job script)"))
    from gpuwise.atomic import write_text_atomic

    path = Path(out).expanduser().absolute() / "_slurm" / "fleet-job.sh"
    write_text_atomic(path, script)
    path.chmod(0o755)
    job = client.submit(path, wait=True, timeout_s=timeout_s)
    return job.job_id, job.exit_code
