"""Driver / CUDA / torch version rules (layer: driver-cuda).
Sources: CUDA Compatibility guide; REFERENCE §1 (validated driver+CUDA pairs, on-prem high)."""

from __future__ import annotations

from gpuwise.advise.controls import CLOUD_DRIVER
from gpuwise.advise.engine import RuleContext, rule
from gpuwise.advise.rules._links import CUDA_COMPAT, TORCH_CPP_EXTENSION, TORCH_INSTALL
from gpuwise.advise.rules._util import version_tuple
from gpuwise.i18n import N_, msg


def _mm(v: tuple[int, ...] | None) -> tuple[int, int] | None:
    return (v[0], v[1] if len(v) > 1 else 0) if v else None


@rule(
    id="driver.torch_cuda_newer_than_driver",
    layer="driver-cuda",
    title=N_("torch was built for a newer CUDA than the driver supports"),
    source=f"CUDA Compatibility guide, minor-version compatibility within a major release ({CUDA_COMPAT})",
    priority="high",
    controllable=CLOUD_DRIVER,
    references=(CUDA_COMPAT, TORCH_INSTALL),
)
def torch_cuda_vs_driver(ctx: RuleContext):
    sw = ctx.facts.software
    drv, built = _mm(version_tuple(sw.cuda_driver_version)), _mm(version_tuple(sw.torch_cuda))
    if not drv or not built:
        return None
    ev = [
        ("software.cuda_driver_version", sw.cuda_driver_version),
        ("software.torch_cuda", sw.torch_cuda),
        ("software.driver_version", sw.driver_version),
    ]
    if built <= drv:
        return ctx.passed(
            ev,
            msg("driver supports CUDA {cuda_driver_version} >= torch's CUDA {torch_cuda}").format(
                cuda_driver_version=sw.cuda_driver_version, torch_cuda=sw.torch_cuda
            ),
        )
    fix = [
        f"pip install torch --index-url https://download.pytorch.org/whl/cu{drv[0]}{drv[1]}  (if that build exists) "
        "or upgrade the NVIDIA driver"
    ]
    if built[0] > drv[0]:
        return ctx.finding(
            "fail",
            ev,
            msg(
                "torch needs CUDA {torch_cuda} but the driver supports only {cuda_driver_version}: "
                "`torch.cuda.is_available()` is False or kernels fail to load. Upgrade the driver, or "
                "install a torch build for this driver's CUDA."
            ).format(torch_cuda=sw.torch_cuda, cuda_driver_version=sw.cuda_driver_version),
            commands=fix,
        )
    return ctx.finding(
        "warn",
        ev,
        msg(
            "torch's CUDA {torch_cuda} is newer than the driver's {cuda_driver_version}. "
            "Minor-version compatibility usually lets it run, but PTX JIT and some newer features "
            "fail. Keep the pair validated: upgrade the driver or match torch to it."
        ).format(torch_cuda=sw.torch_cuda, cuda_driver_version=sw.cuda_driver_version),
        commands=fix,
    )


@rule(
    id="driver.torch_cpu_only",
    layer="driver-cuda",
    title=N_("torch is a CPU-only build on a GPU machine"),
    source="PyTorch install matrix: CPU wheels have torch.version.cuda = None",
    priority="high",
    references=(TORCH_INSTALL,),
)
def torch_cpu_only(ctx: RuleContext):
    sw = ctx.facts.software
    if not ctx.facts.gpus or sw.torch_build != "cpu":  # a CUDA or ROCm build, or not known: do not accuse
        return None
    return ctx.finding(
        "fail",
        [
            ("software.torch_version", sw.torch_version),
            ("software.torch_cuda", None),
            ("gpus.count", len(ctx.facts.gpus)),
        ],
        msg("This torch cannot use the GPUs. Install a CUDA build that the driver supports."),
        commands=[
            "pip install torch --index-url https://download.pytorch.org/whl/cu<XY>",
            "python -c 'import torch; print(torch.version.cuda, torch.cuda.is_available())'",
        ],
    )


@rule(
    id="driver.nvcc_newer_than_driver",
    layer="driver-cuda",
    title=N_("The CUDA toolkit (nvcc) is newer than the driver supports"),
    source="CUDA Compatibility guide: "
    "binaries built by a newer toolkit need a newer driver (beyond minor-version compat)",
    priority={"cloud": "medium", "onprem": "high"},
    controllable=CLOUD_DRIVER,
    references=(CUDA_COMPAT,),
)
def nvcc_vs_driver(ctx: RuleContext):
    sw = ctx.facts.software
    drv, nvcc = _mm(version_tuple(sw.cuda_driver_version)), _mm(version_tuple(sw.nvcc_version))
    if not drv or not nvcc or nvcc <= drv:
        return None
    return ctx.finding(
        "fail" if nvcc[0] > drv[0] else "warn",
        [
            ("software.nvcc_version", sw.nvcc_version),
            ("software.cuda_driver_version", sw.cuda_driver_version),
        ],
        msg(
            "Kernels compiled with this nvcc (custom CUDA extensions, flash-attention builds, "
            "Triton's ptxas) may not load on this driver. Install a toolkit no newer than the "
            "driver's CUDA, or upgrade the driver."
        ),
    )


@rule(
    id="driver.torch_vs_nvcc",
    layer="driver-cuda",
    title=N_("nvcc and torch were built for different CUDA major versions"),
    source="torch.utils.cpp_extension refuses to build when the toolkit's CUDA major differs from torch's",
    priority="medium",
    references=(TORCH_CPP_EXTENSION,),
)
def torch_vs_nvcc(ctx: RuleContext):
    sw = ctx.facts.software
    t, n = version_tuple(sw.torch_cuda), version_tuple(sw.nvcc_version)
    if not t or not n or t[0] == n[0]:
        return None
    return ctx.finding(
        "warn",
        [("software.torch_cuda", sw.torch_cuda), ("software.nvcc_version", sw.nvcc_version)],
        msg(
            "Building CUDA extensions (apex, flash-attn, custom ops) against this torch will fail. "
            "Point CUDA_HOME at a toolkit with torch's CUDA major version."
        ),
        env={"CUDA_HOME": f"/usr/local/cuda-{sw.torch_cuda}"},
    )
