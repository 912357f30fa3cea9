"""`dcgmi nvlink --link-status` (layer: hardware): each GPU's NVLinks as DCGM reports them, judged with the GPU
model's NVLink expectation from the catalog. A link DCGM lists as Down (not 'Not Supported') exists on the GPU;
whether it must be up depends on the model: an SXM/HGX GPU's links are on the baseboard and must all train, a
PCIe card's only with an NVLink bridge installed."""

from __future__ import annotations

from gpuwise.advise.controls import CLOUD_HARDWARE
from gpuwise.advise.engine import RuleContext, rule
from gpuwise.advise.rules._evidence import gpu_model, gpu_name, has_nvlink
from gpuwise.advise.rules._links import DCGM_DIAG, DCGMI_NVLINK
from gpuwise.i18n import N_, joined, msg

_COMMANDS = ["dcgmi nvlink --link-status", "nvidia-smi nvlink -s", "nvidia-smi topo -m", "dcgmi diag -r 2"]


def _verdict(ctx: RuleContext, gpu: int, links: str) -> tuple[str, str]:
    """(status, what) for one GPU's link letters."""
    up, down = links.count("U"), links.count("D")
    model = gpu_model(ctx.facts, gpu)
    name = gpu_name(ctx.facts, index=gpu)
    counts = msg("{name}: {up} up, {down} down of {n} links").format(
        name=name, up=up, down=down, n=len(links)
    )
    if not down:
        return "pass", counts
    if up:
        return "fail", counts + msg(" (some links trained, others did not)")
    if model is None:
        return "warn", counts + msg(" (GPU model unknown)")
    if has_nvlink(model):
        return "fail", counts + msg(" ({model} has NVLink on its baseboard)").format(model=model)
    return "info", counts + msg(" ({model}: NVLink only through a bridge)").format(model=model)


@rule(
    id="gpu.dcgm_nvlink",
    layer="hardware",
    title=N_("NVLink state reported by DCGM"),
    source=f"DCGM `dcgmi nvlink --link-status` (Up=U, Down=D, Disabled=X, Not Supported=_), {DCGMI_NVLINK}; "
    f"DCGM diagnostics NVLink checks, {DCGM_DIAG}",
    priority="high",
    controllable=CLOUD_HARDWARE,
    references=(DCGMI_NVLINK, DCGM_DIAG),
)
def dcgm_nvlink(ctx: RuleContext):
    reports = ctx.facts.evidence.dcgm_nvlink
    if not reports:
        return None
    judged = [
        (r.source, gpu, *_verdict(ctx, gpu, links))
        for r in reports
        for gpu, links in sorted(r.gpus.items())
        if "U" in links or "D" in links  # only disabled or not-supported links: nothing to judge
    ]
    if not judged:
        return None  # every link disabled or not supported: no NVLink to judge
    order = ("fail", "warn", "info", "pass")
    worst = min((j[2] for j in judged), key=order.index)
    evidence = [(f"evidence.dcgm_nvlink[{src}].gpus[{gpu}]", what) for src, gpu, status, what in judged]
    if worst == "pass":
        return ctx.passed(evidence[:8], msg("every NVLink DCGM lists is up"))
    bad = joined(", ", (gpu_name(ctx.facts, index=g) for _s, g, st, _w in judged if st == worst))
    texts = {
        "fail": msg(
            "NVLinks of {gpus} are down where the GPU model needs them up: GPU-to-GPU traffic on them is slower "
            "or goes over PCIe, and NCCL's NVLink rings break. Reset the GPUs or reboot; if the links stay down, "
            "run DCGM diagnostics and have the baseboard (or NVSwitch tray) checked."
        ),
        "warn": msg(
            "Every NVLink of {gpus} is down, and the GPU model is not in the evidence: on an SXM/HGX GPU that "
            "is a fault (drain, reset, check the baseboard); on a PCIe card it is normal without an NVLink "
            "bridge. Pass `nvidia-smi -q` (or run doctor on the node) to decide."
        ),
        "info": msg(
            "The NVLinks of {gpus} are down; on this model NVLink is a bridge option. Nothing to do unless a "
            "bridge is installed, then reseat it."
        ),
    }
    return ctx.finding(
        worst,
        evidence[:16],
        texts[worst].format(gpus=bad),
        commands=_COMMANDS,
        priority="low" if worst == "info" else None,
    )
