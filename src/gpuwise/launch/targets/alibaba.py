"""--target alibaba: ECS instances through Alibaba Cloud's API (the request: gpuwise/launch/alibaba.py)."""

from __future__ import annotations

from gpuwise.i18n import N_
from gpuwise.launch import alibaba
from gpuwise.launch.targets import Feature, Target, static_scrape_config


class Alibaba(Target):
    name = "alibaba"
    label = "Alibaba Cloud ECS"
    id_form = "alibaba:REGION/i-ID[,i-ID]"
    options = ("--zone", "--image-id", "--subnet", "--security-group", "--hpc-cluster", "--gpuwise-wheel-url")
    unsupported = {
        Feature.WAIT: N_(
            "the instances run the job from their user data; gpuwise does not follow it "
            "(its logs are on each instance)"
        ),
    }
    needs_credentials = True
    example_offer = "--offer alibaba:ecs.gn7e-c16g1.32xlarge"

    def build(self, plan, o) -> None:
        alibaba.build(plan, o.textfile, o.cloud)
        plan.scrape_config = static_scrape_config(plan, "<private IP of instance {i}>")

    def create(self, plan, o, wait, timeout_s) -> dict:
        return alibaba.create(plan, o.cloud, o.textfile)

    def down(self, rest: str) -> str:
        return alibaba.down(rest)


TARGET = Alibaba()
