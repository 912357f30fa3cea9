"""Toolchain rules (layer: toolchain): torch present, container GPU support, NCCL versions.
Sources: REFERENCE §1 (containerised CUDA environments, cloud medium), NVIDIA Container Toolkit docs."""

from __future__ import annotations

from gpuwise.advise.engine import RuleContext, rule
from gpuwise.advise.rules._links import TOOLKIT, TORCH_INSTALL
from gpuwise.advise.rules._util import captured, version_tuple
from gpuwise.i18n import N_, msg


@rule(
    id="toolchain.torch_missing",
    layer="toolchain",
    title=N_("PyTorch is not installed in this Python"),
    source=f"heuristic: framework settings (AMP, compile, DDP) need a framework to act on (PyTorch install, {TORCH_INSTALL})",
    priority="low",
)
def torch_missing(ctx: RuleContext):
    sw = ctx.facts.software
    if not ctx.facts.gpus or sw.torch_version or not sw.python_version:
        return None
    return ctx.finding(
        "info",
        [("software.torch_version", None), ("software.python_version", sw.python_version)],
        msg(
            "gpuwise looked at the Python it runs in. If training uses another environment or a "
            "container, run doctor there (or capture there) to check torch's CUDA build."
        ),
    )


@rule(
    id="toolchain.container_toolkit_missing",
    layer="toolchain",
    title=N_("Containers cannot reach the GPUs (no NVIDIA Container Toolkit)"),
    source=f"NVIDIA Container Toolkit install guide, {TOOLKIT}",
    priority="medium",
    references=(TOOLKIT,),
)
def container_toolkit(ctx: RuleContext):
    sw = ctx.facts.software
    if not ctx.facts.gpus or not sw.container_runtimes or sw.nvidia_container_toolkit:
        return None
    why = sw.unknown.get("nvidia_container_toolkit")
    if why is not None and why.kind == "not_captured":
        return None
    return ctx.finding(
        "warn",
        [
            ("software.container_runtimes", sw.container_runtimes),
            ("software.nvidia_container_toolkit", None),
        ],
        msg(
            "A container runtime is installed but `docker run --gpus all` needs the NVIDIA Container Toolkit."
        ),
        commands=[
            "sudo apt-get install -y nvidia-container-toolkit",
            "sudo nvidia-ctk runtime configure --runtime=docker && sudo systemctl restart docker",
        ],
    )


@rule(
    id="toolchain.no_container_runtime",
    layer="toolchain",
    title=N_("No container runtime on a GPU node"),
    source=f"heuristic: a container image pins CUDA, cuDNN, NCCL and torch, so runs are reproducible across nodes (NVIDIA Container Toolkit, {TOOLKIT})",
    priority={"cloud": "medium", "onprem": "low"},
)
def no_container_runtime(ctx: RuleContext):
    sw, pf = ctx.facts.software, ctx.facts.platform
    if not ctx.facts.gpus or sw.container_runtimes or (pf.container and pf.container != "none"):
        return None
    if not (captured(ctx.facts, "docker-version") and captured(ctx.facts, "podman-version")):
        return None  # not looked for: no claim
    return ctx.finding(
        "info",
        [("software.container_runtimes", []), ("platform.container", pf.container)],
        msg(
            "Pinning CUDA, cuDNN, NCCL and torch in a container image keeps runs reproducible across "
            "nodes and between cloud and on-prem (version drift causes numerical differences and "
            "kernel errors)."
        ),
        commands=[
            "install docker or podman plus the NVIDIA Container Toolkit, then use an NGC PyTorch image"
        ],
    )


@rule(
    id="toolchain.nccl_versions_differ",
    layer="toolchain",
    title=N_("System NCCL differs from the NCCL inside torch"),
    source="heuristic: torch wheels bundle their own NCCL, so nccl-tests and torch may run different NCCL versions; keep versions identical across the nodes of a job",
    priority="low",
)
def nccl_versions(ctx: RuleContext):
    sw = ctx.facts.software
    a, b = version_tuple(sw.nccl_system_version), version_tuple(sw.torch_nccl)
    if not a or not b or a[:2] == b[:2]:
        return None
    return ctx.finding(
        "info",
        [("software.nccl_system_version", sw.nccl_system_version), ("software.torch_nccl", sw.torch_nccl)],
        msg(
            "torch uses its bundled NCCL, while nccl-tests and other tools use the system one: "
            "benchmark results from one do not describe the other. Keep the same NCCL on every node "
            "of a job."
        ),
    )
