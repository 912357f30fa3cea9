"""What gpuwise reads back from a launch record (LAUNCH_SCHEMA, `launch.json`, written by
launch/model.py's LaunchPlan.to_json): before writing into a folder, whether the launch recorded there
created resources (their id is what `gpuwise launch --down ID` removes). A record someone wrote or
edited by hand may lack "schema": it is read all the same (it may still name resources to protect)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from gpuwise.documents.ids import LAUNCH_SCHEMA
from gpuwise.documents.view import View


class Submitted(View):
    """What `gpuwise launch --yes` did (null in a dry run's record)."""

    id: str | None = None  # the job, cluster or instance id it created


class LaunchRecord(View):
    schema_: Literal[LAUNCH_SCHEMA] = Field(alias="schema")  # type: ignore[valid-type]
    target: str | None = None
    dry_run: bool = True
    submitted: Submitted | None = None

    def created(self) -> str | None:
        """The id of what this launch created, or None (a dry run, or nothing was made)."""
        return self.submitted.id if self.submitted else None
