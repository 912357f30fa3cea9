"""--target huawei: ECS instances through Huawei Cloud's API (the request: gpuwise/launch/huawei.py)."""

from __future__ import annotations

from gpuwise.i18n import N_
from gpuwise.launch import huawei
from gpuwise.launch.targets import Feature, Target, static_scrape_config


class Huawei(Target):
    name = "huawei"
    label = "Huawei Cloud ECS"
    id_form = "huawei:REGION/SERVER-ID[,SERVER-ID]"
    options = ("--zone", "--image-id", "--vpc", "--subnet", "--security-group", "--gpuwise-wheel-url")
    unsupported = {
        Feature.WAIT: N_(
            "the instances run the job from their user data; gpuwise does not follow it "
            "(its logs are on each instance)"
        ),
    }
    needs_credentials = True
    example_offer = "--offer huawei:FLAVOR"  # a row of the user's offers file: gpuwise ships no Huawei price

    def build(self, plan, o) -> None:
        huawei.build(plan, o.textfile, o.cloud)
        plan.scrape_config = static_scrape_config(plan, "<private IP of instance {i}>")

    def create(self, plan, o, wait, timeout_s) -> dict:
        return huawei.create(plan, o.cloud, o.textfile)

    def down(self, rest: str) -> str:
        return huawei.down(rest)


TARGET = Huawei()
