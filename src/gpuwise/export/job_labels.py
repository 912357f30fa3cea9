"""`--job-labels`: the job, rank and node a GPU works for, from Slurm / torchrun / SkyPilot variables.

The mapping (label -> environment variables, first set wins) and its sources are in
data/job_labels.yaml; `hpc_job` is dcgm-exporter's own label name, so queries written for its HPC job
mapping work unchanged.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from importlib import resources

import yaml

MAX_VALUE_CHARS = 256  # a label value is copied into every series: a runaway variable must not bloat them
_LABEL_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")


@functools.cache
def mapping() -> dict[str, tuple[str, ...]]:
    """label -> the environment variables that give it, in order of preference."""
    raw = yaml.safe_load(
        resources.files("gpuwise.export").joinpath("data/job_labels.yaml").read_text(encoding="utf-8")
    )
    result = {}
    for label, row in raw["labels"].items():
        if (
            not _LABEL_NAME.match(label)
            or label.startswith("__")
            or not row.get("env")
            or not row.get("source")
        ):
            raise ValueError(f"job_labels.yaml: {label} needs a valid name, 'env' and 'source'")
        result[label] = tuple(row["env"])
    return result


def from_environment(env: Mapping[str, str]) -> dict[str, str]:
    """The job labels this environment gives (labels whose variables are all unset are left out)."""
    labels = {}
    for label, names in mapping().items():
        for name in names:
            value = env.get(name, "").strip()
            if value:
                labels[label] = value[:MAX_VALUE_CHARS]
                break
    return labels
