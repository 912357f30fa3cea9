"""Which catalog providers each `gpuwise launch --target` can launch on (used by `plan --target` and launch).

- skypilot: the clouds SkyPilot provisions, gpuwise provider name -> SkyPilot cloud name, from SkyPilot's
  installation page (https://docs.skypilot.co/en/latest/getting-started/installation.html);
- tencent: Tencent Cloud's CVM offers only;
- alibaba: Alibaba Cloud's ECS offers only;
- huawei: Huawei Cloud's ECS offers only (gpuwise ships none: the user's offers file names them);
- volcengine: Volcano Engine's ECS offers only (none shipped either: the user's offers file);
- baidu: Baidu AI Cloud's offers (the user's BCC specs; the shipped BML platform row is refused at launch);
- slurm, torchrun: no cloud offer (your own machines: the plan's on-prem builds).

A launch target (gpuwise/launch/targets/) that rents machines adds its row here.
"""

from __future__ import annotations

SKY_CLOUDS = {"aws": "aws", "aws-capacity-blocks": "aws", "gcp": "gcp", "azure": "azure", "oracle": "oci",
              "digitalocean": "do", "lambda": "lambda", "runpod": "runpod", "nebius": "nebius", "vast": "vast"}  # fmt: skip
TARGET_PROVIDERS: dict[str, tuple[str, ...]] = {
    "skypilot": tuple(SKY_CLOUDS),
    "tencent": ("tencent",),
    "alibaba": ("alibaba",),
    "huawei": ("huawei",),
    "volcengine": ("volcengine",),
    "baidu": ("baidu",),
    "slurm": (),
    "torchrun": (),
}


def launchable(target: str, provider: str | None) -> bool:
    """Can `launch --target TARGET` launch an offer of this provider?"""
    return (provider or "").lower() in TARGET_PROVIDERS.get(target, ())
