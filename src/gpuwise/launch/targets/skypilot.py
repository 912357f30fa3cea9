"""--target skypilot: a SkyPilot task on the clouds SkyPilot provisions (the task: gpuwise/launch/skypilot.py)."""

from __future__ import annotations

from gpuwise.i18n import N_
from gpuwise.launch import skypilot
from gpuwise.launch.targets import Feature, Target, static_scrape_config


class SkyPilot(Target):
    name = "skypilot"
    label = "SkyPilot"
    id_form = "skypilot:CLUSTER"
    unsupported = {
        Feature.WAIT: N_(
            "`sky launch` streams the job's log until it ends; gpuwise does not follow it (see `sky queue CLUSTER`)"
        ),
    }
    needs_credentials = True
    example_offer = "--offer aws:p4d.24xlarge"

    def build(self, plan, o) -> None:
        skypilot.build(plan, o.textfile, o.cloud)
        plan.scrape_config = static_scrape_config(plan, "<IP of node {i}>")

    def create(self, plan, o, wait, timeout_s) -> dict:
        return skypilot.create(plan)

    def down(self, rest: str) -> str:
        return skypilot.down(rest)


TARGET = SkyPilot()
