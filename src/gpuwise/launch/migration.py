"""Migration check: the target's driver / CUDA / NCCL / torch against the source environment.

Source document 003 names the risk: moving a training job to another machine changes the image, the
driver, CUDA and NCCL, and results drift. The source is a capture or this machine (Facts); the target is
a capture of a target node or the versions the job's image documents (`image_versions` in JOB.yaml).
The differences come from facts/diff.py, the same diff `gpuwise compare` shows; this module judges them.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuwise.facts.diff import diff_facts
from gpuwise.facts.models import Facts
from gpuwise.i18n import N_, joined, msg
from gpuwise.launch.job import ImageVersions

CUDA_COMPAT = "https://docs.nvidia.com/deploy/cuda-compatibility/ (minor version compatibility)"
TORCH_NUMERICS = "https://pytorch.org/docs/stable/notes/numerical_accuracy.html"
NCCL_NOTES = "https://docs.nvidia.com/deeplearning/nccl/release-notes/index.html"

# Facts.software field -> what the user calls it (English in the JSON, translated where shown), and the
# source of why a change matters
FIELDS = {
    "driver_version": (N_("NVIDIA driver"), CUDA_COMPAT),
    "cuda_driver_version": (N_("CUDA (driver)"), CUDA_COMPAT),
    "torch_version": ("torch", TORCH_NUMERICS),
    "torch_cuda": (N_("CUDA (torch build)"), CUDA_COMPAT),
    "torch_nccl": (N_("NCCL (torch)"), NCCL_NOTES),
    "nccl_system_version": (N_("NCCL (system)"), NCCL_NOTES),
}
TARGET_SOFTWARE, DRIVER_VS_TORCH = N_("target software"), N_("driver vs torch CUDA")
FROM_IMAGE = {
    "driver": "driver_version",
    "cuda": "torch_cuda",
    "nccl": "torch_nccl",
    "torch": "torch_version",
}


@dataclass
class MigrationFinding:
    status: str  # pass | warn | fail | unknown
    what: str
    source_value: str | None
    target_value: str | None
    text: str
    source: str


def target_software(versions: ImageVersions | None, capture: Facts | None) -> dict:
    """The target's software facts: a capture of a target node wins over the image's documented versions."""
    if capture is not None:
        return capture.software.model_dump()
    out: dict = {}
    if versions is not None:
        for key, field in FROM_IMAGE.items():
            value = getattr(versions, key)
            if value:
                out[field] = value
    return out


def _major_minor(v: str | None) -> tuple[int, ...] | None:
    if not v:
        return None
    parts = []
    for p in v.split("+")[0].split(".")[:2]:
        digits = joined("", (ch for ch in p if ch.isdigit()))
        if not digits:
            return None
        parts.append(int(digits))
    return tuple(parts)


def check_migration(source: Facts, target: dict) -> list[MigrationFinding]:
    """One finding per version the target documents; `unknown` when neither side says."""
    src = source.software.model_dump()
    if not target:
        return [
            MigrationFinding(
                "unknown", TARGET_SOFTWARE, None, None,
                msg("the target's versions are not known, so they were not compared"),
                msg("To check: add image_versions (driver, cuda, nccl, torch) to JOB.yaml, "
                  "or pass --target-capture with a `gpuwise capture` of a target node"),
            )
        ]  # fmt: skip
    differing = {d.path.split(".", 1)[1]: d for d in diff_facts({"software": src}, {"software": target})}
    out = []
    for field, (what, url) in FIELDS.items():
        if field not in target:
            continue
        a, b = src.get(field), target.get(field)
        if b is None:
            out.append(MigrationFinding("unknown", what, a, b, msg("the target does not say"), url))
        elif field not in differing:
            out.append(MigrationFinding("pass", what, a, b, msg("same version on both sides"), url))
        elif a is None:
            out.append(
                MigrationFinding("unknown", what, a, b, msg("the source has none to compare with"), url)
            )
        else:
            out.append(_judge(field, what, a, b, url))
    out += _driver_supports_cuda(target)
    return out


def _judge(field: str, what: str, a: str, b: str, url: str) -> MigrationFinding:
    ma, mb = _major_minor(a), _major_minor(b)
    if field in ("torch_version", "torch_cuda", "cuda_driver_version") and ma and mb and ma[:1] != mb[:1]:
        text = msg("major version changes ({a} -> {b}): rebuild the image and rerun a short validation first")
        return MigrationFinding("fail", what, a, b, text.format(a=a, b=b), url)
    same_nccl = N_("every node must run the same NCCL; collective algorithms change between releases")
    text = {
        "torch_version": N_(
            "kernels and defaults change between releases: compare the loss curve of a short run"
        ),
        "torch_nccl": same_nccl,
        "nccl_system_version": same_nccl,
        "driver_version": N_("the driver must support the CUDA the image's torch was built with"),
    }.get(field, N_("check that the image's libraries match it"))
    return MigrationFinding("warn", what, a, b, msg("{a} -> {b}: {why}").format(a=a, b=b, why=msg(text)), url)


def _driver_supports_cuda(target: dict) -> list[MigrationFinding]:
    """The target driver's CUDA must be at least the major version torch was built for (minor version compat)."""
    drv, built = _major_minor(target.get("cuda_driver_version")), _major_minor(target.get("torch_cuda"))
    if not drv or not built or drv[:1] >= built[:1]:
        return []
    return [
        MigrationFinding(
            "fail", DRIVER_VS_TORCH, target.get("cuda_driver_version"), target.get("torch_cuda"),
            msg("the target driver supports CUDA {driver}, torch needs CUDA {torch}: install a newer driver "
              "or an image built for the driver's CUDA").format(
                driver=target["cuda_driver_version"], torch=target["torch_cuda"]),
            CUDA_COMPAT,
        )
    ]  # fmt: skip
