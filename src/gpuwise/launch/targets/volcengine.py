"""--target volcengine: ECS instances through Volcano Engine's API (the request: gpuwise/launch/volcengine.py)."""

from __future__ import annotations

from gpuwise.i18n import N_
from gpuwise.launch import volcengine
from gpuwise.launch.targets import Feature, Target, static_scrape_config


class Volcengine(Target):
    name = "volcengine"
    label = "Volcano Engine ECS"
    id_form = "volcengine:REGION/i-ID[,i-ID]"
    options = ("--zone", "--image-id", "--subnet", "--security-group", "--hpc-cluster", "--gpuwise-wheel-url")
    unsupported = {
        Feature.WAIT: N_(
            "the instances run the job from their user data; gpuwise does not follow it "
            "(its logs are on each instance)"
        ),
    }
    needs_credentials = True
    example_offer = (
        "--offer volcengine:INSTANCE-TYPE"  # a row of the user's offers file: gpuwise ships no price
    )

    def build(self, plan, o) -> None:
        volcengine.build(plan, o.textfile, o.cloud)
        plan.scrape_config = static_scrape_config(plan, "<private IP of instance {i}>")

    def create(self, plan, o, wait, timeout_s) -> dict:
        return volcengine.create(plan, o.cloud, o.textfile)

    def down(self, rest: str) -> str:
        return volcengine.down(rest)


TARGET = Volcengine()
