"""Ranking the nodes of a fleet by stability: one `gpuwise stability --save` result per node in a folder
(e.g. `srun -N 16 sh -c 'gpuwise stability --for 10m --save /shared/stab/$(hostname).json'`).

Least stable first: by the worst metric verdict, then by that metric's robust cv (the worst layer is
the layer of that metric). Each node's medians are
also shown relative to the fleet's median of the same metric, so a node that is steady but slow stands
out too (the fleet's peer comparison, `gpuwise fleet report`, does the same for bench results).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from pathlib import Path

from gpuwise.errors import UserInputError
from gpuwise.i18n import msg
from gpuwise.stability.document_file import read_stability
from gpuwise.stability.model import VERDICT_ORDER, StabilityReport

MAX_NODES = 10_000


@dataclass
class NodeRank:
    node: str  # the file's stem (the hostname in the srun example)
    verdict: str
    worst_layer: str
    worst_robust_cv: float
    windows: int
    relative: dict[str, float] = field(default_factory=dict)  # metric -> median / fleet median


def load_folder(directory: Path) -> list[tuple[str, StabilityReport]]:
    directory = Path(directory).expanduser()
    if not directory.is_dir():
        raise UserInputError(
            msg("--rank {path}: not a directory").format(path=directory),
            msg("pass a folder holding one `gpuwise stability --save` file per node"),
        )
    files = sorted(directory.glob("*.json"))[: MAX_NODES + 1]
    if len(files) > MAX_NODES:
        raise UserInputError(
            msg("--rank {path}: more than {n} files").format(path=directory, n=MAX_NODES),
            msg("rank a folder per group of nodes"),
        )
    if not files:
        raise UserInputError(
            msg("--rank {path}: no *.json files").format(path=directory),
            msg("save one result per node there: gpuwise stability --save DIR/$(hostname).json"),
        )
    return [(f.stem, read_stability(f, "--rank")) for f in files]


def rank(nodes: list[tuple[str, StabilityReport]]) -> list[NodeRank]:
    medians: dict[str, list[float]] = {}
    for _node, r in nodes:
        for res in r.results:
            if res.summary.median:
                medians.setdefault(res.info.name, []).append(res.summary.median)
    fleet = {m: statistics.median(v) for m, v in medians.items()}
    out = []
    for node, r in nodes:
        worst = max(
            r.results,
            key=lambda res: (VERDICT_ORDER[res.verdict], res.summary.robust_cv or 0.0),
            default=None,
        )
        out.append(
            NodeRank(
                node=node,
                verdict=worst.verdict if worst else "unknown",
                worst_layer=worst.info.layer if worst else "-",
                worst_robust_cv=(worst.summary.robust_cv or 0.0) if worst else 0.0,
                windows=sum(len(res.windows) for res in r.results),
                relative={
                    res.info.name: res.summary.median / fleet[res.info.name]
                    for res in r.results
                    if res.summary.median and fleet.get(res.info.name)
                },
            )
        )
    return sorted(out, key=lambda n: (-VERDICT_ORDER[n.verdict], -n.worst_robust_cv, n.node))
