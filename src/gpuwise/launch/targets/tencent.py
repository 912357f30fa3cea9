"""--target tencent: CVM instances through Tencent Cloud's API (the request: gpuwise/launch/tencent.py)."""

from __future__ import annotations

from gpuwise.i18n import N_
from gpuwise.launch import tencent
from gpuwise.launch.targets import Feature, Target, static_scrape_config


class Tencent(Target):
    name = "tencent"
    label = "Tencent Cloud CVM"
    id_form = "tencent:REGION/ins-ID[,ins-ID]"
    options = ("--zone", "--image-id", "--hpc-cluster", "--gpuwise-wheel-url")
    unsupported = {
        Feature.WAIT: N_(
            "the instances run the job from their user data; gpuwise does not follow it "
            "(its logs are on each instance)"
        ),
    }
    needs_credentials = True
    example_offer = "--offer tencent:GT4.41XLARGE948"

    def build(self, plan, o) -> None:
        tencent.build(plan, o.textfile, o.cloud)
        plan.scrape_config = static_scrape_config(plan, "<private IP of instance {i}>")

    def create(self, plan, o, wait, timeout_s) -> dict:
        return tencent.create(plan, o.cloud, o.textfile)

    def down(self, rest: str) -> str:
        return tencent.down(rest)


TARGET = Tencent()
