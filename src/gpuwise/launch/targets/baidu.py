"""--target baidu: BCC instances through Baidu AI Cloud's API (the request: gpuwise/launch/baidu.py)."""

from __future__ import annotations

from gpuwise.i18n import N_
from gpuwise.launch import baidu
from gpuwise.launch.targets import Feature, Target, static_scrape_config


class Baidu(Target):
    name = "baidu"
    label = "Baidu AI Cloud BCC"
    id_form = "baidu:REGION/i-ID[,i-ID]"
    options = ("--zone", "--image-id", "--subnet", "--security-group", "--gpuwise-wheel-url")
    unsupported = {
        Feature.WAIT: N_(
            "the instances run the job from their user data; gpuwise does not follow it "
            "(its logs are on each instance)"
        ),
    }
    needs_credentials = True
    example_offer = "--offer baidu:BCC-SPEC"  # a row of the user's offers file: gpuwise ships no BCC price

    def build(self, plan, o) -> None:
        baidu.build(plan, o.textfile, o.cloud)
        plan.scrape_config = static_scrape_config(plan, "<private IP of instance {i}>")

    def create(self, plan, o, wait, timeout_s) -> dict:
        return baidu.create(plan, o.cloud, o.textfile)

    def down(self, rest: str) -> str:
        return baidu.down(rest)


TARGET = Baidu()
