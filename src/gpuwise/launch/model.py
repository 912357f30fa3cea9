"""A launch: what would be created, what it costs, and the checks around it (the dry run's content).

`LaunchPlan` is built by gpuwise.launch.build (one function per target fills `files` and `creates`),
shown by report/views/launch.py and, with --yes, created by the target's `create`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

from gpuwise.documents.ids import LAUNCH_SCHEMA
from gpuwise.launch.job import Job
from gpuwise.launch.migration import MigrationFinding
from gpuwise.launch.resources import Resources
from gpuwise.launch.transfer import TransferEstimate


@dataclass
class Created:
    """One resource a launch creates, and the command that deletes it."""

    kind: str  # "Slurm job", "SkyPilot cluster", "CVM instance"
    name: str  # what it is called before it exists (the job name, the cluster name)
    delete: str  # the command that removes it (gpuwise launch --down ID, and the native one)
    id: str | None = None  # known once created


@dataclass
class LaunchPlan:
    job: Job
    job_path: str
    target: str
    resources: Resources
    out: Path
    preflight: str  # the doctor command each node runs
    exporter: str  # the exporter command each node runs
    scrape_config: str
    transfer: TransferEstimate | None
    migration: list[MigrationFinding]
    files: dict[str, str] = field(default_factory=dict)  # name -> content written to the output folder
    copies: dict[str, Path] = field(default_factory=dict)  # name -> a file copied there (the gpuwise wheel)
    creates: list[Created] = field(default_factory=list)
    max_cost: float | None = None
    notes: list[str] = field(default_factory=list)
    cloud_check: str | None = None  # what the provider said about a dry-run request (tencent)
    submitted: dict | None = None  # what --yes did: ids, exit codes

    @property
    def cost_known(self) -> bool:
        return self.resources.run_cost is not None

    @property
    def over_budget(self) -> bool:
        return self.max_cost is not None and (not self.cost_known or self.resources.run_cost > self.max_cost)

    def to_json(self) -> dict:
        r = self.resources
        return {
            "schema": LAUNCH_SCHEMA,
            "job": self.job.model_dump(),
            "job_file": self.job_path,
            "target": self.target,
            "dry_run": self.submitted is None,
            "out": str(self.out),
            "resources": {k: v for k, v in asdict(r).items() if k != "notes"},
            "cost": {
                "run_cost": r.run_cost,
                "currency": r.currency,
                "source": r.cost_source,
                "max_cost": self.max_cost,
                "over_budget": self.over_budget,
            },
            "preflight": self.preflight,
            "exporter": self.exporter,
            "scrape_config": self.scrape_config,
            "transfer": asdict(self.transfer) if self.transfer else None,
            "migration": [asdict(m) for m in self.migration],
            "creates": [asdict(c) for c in self.creates],
            "files": sorted([*self.files, *self.copies]),
            "notes": [*r.notes, *self.notes],
            "cloud_check": self.cloud_check,
            "submitted": self.submitted,
        }
