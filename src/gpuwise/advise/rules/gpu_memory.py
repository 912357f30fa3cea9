"""GPU memory rules (layer: hardware): ECC mode, uncorrectable ECC errors, retired pages and row
remapping. Split from gpu_health.py: these four read the same ECC/remap facts and share thresholds.
Sources: REFERENCE §5 rows."""

from __future__ import annotations

import re

from gpuwise.advise.controls import CLOUD_HARDWARE
from gpuwise.advise.engine import RuleContext, rule
from gpuwise.advise.rules._links import AZURE_NHC, DCGM_DIAG
from gpuwise.advise.rules._util import gpus
from gpuwise.advise.rules._util import sentences as _sentences
from gpuwise.i18n import N_, msg


def _datacenter(name: str | None, patterns: list[str]) -> bool:
    words = re.findall(r"[a-z0-9]+", (name or "").lower())
    return any(p in words for p in patterns)


@rule(
    id="gpu.ecc_off",
    layer="hardware",
    title=N_("ECC is disabled"),
    source=f"DCGM diagnostics level 1 (ECC and page retirement checks), {DCGM_DIAG}; Azure HPC health checks check_gpu_ecc, {AZURE_NHC}",
    priority={"cloud": "medium", "onprem": "high"},
    controllable=CLOUD_HARDWARE,
)
def ecc_off(ctx: RuleContext):
    off = [(p, g) for p, g in gpus(ctx.facts) if g.ecc_enabled is False]
    if not off:
        on = [(p, g) for p, g in gpus(ctx.facts) if g.ecc_enabled]
        return ctx.passed([(f"{on[0][0]}.ecc_enabled", True)], msg("ECC is enabled")) if on else None
    patterns = ctx.t("ecc_expected_name_patterns")
    datacenter = any(_datacenter(g.name, patterns) for _path, g in off)
    pending = [(f"{p}.ecc_pending_enabled", g.ecc_pending_enabled) for p, g in off if g.ecc_pending_enabled]
    evidence = (
        [(f"{p}.ecc_enabled", False) for p, _gpu in off] + pending + [(f"{off[0][0]}.name", off[0][1].name)]
    )
    if not datacenter:
        return ctx.finding(
            "info",
            evidence,
            msg(
                "This GPU supports ECC but runs without it, which is the default on workstation/consumer "
                "cards. ECC guards long runs against silent memory errors at the cost of some memory "
                "capacity and bandwidth on GDDR cards; enable it for long unattended training."
            ),
            title=msg("ECC is available but off (workstation/consumer GPU)"),
            priority="low",
            commands=["sudo nvidia-smi -e 1", "sudo reboot"],
        )
    return ctx.finding(
        "warn",
        evidence,
        _sentences(
            [
                msg(
                    "ECC protects long training runs from silent memory corruption. Enable it (takes "
                    "effect after a GPU reset or reboot)."
                ),
                *([msg("ECC is already pending: reboot to apply it.")] if pending else []),
            ]
        ),
        title=msg("ECC is disabled on a data-centre GPU"),
        commands=["sudo nvidia-smi -e 1", "sudo reboot"],
    )


@rule(
    id="gpu.ecc_uncorrectable",
    layer="hardware",
    title=N_("GPU memory has uncorrectable ECC errors"),
    source=f"DCGM diagnostics level 1: no uncorrectable (DBE) ECC errors, {DCGM_DIAG}; Azure HPC health checks check_gpu_ecc, {AZURE_NHC}",
    priority="high",
    controllable=CLOUD_HARDWARE,
    references=(DCGM_DIAG,),
)
def ecc_uncorrectable(ctx: RuleContext):
    bad = []
    for p, g in gpus(ctx.facts):
        if g.ecc_volatile_uncorrectable:
            bad.append((f"{p}.ecc_volatile_uncorrectable", g.ecc_volatile_uncorrectable))
        if g.ecc_aggregate_uncorrectable:
            bad.append((f"{p}.ecc_aggregate_uncorrectable", g.ecc_aggregate_uncorrectable))
    if not bad:
        seen = [
            (f"{p}.ecc_volatile_uncorrectable", 0)
            for p, g in gpus(ctx.facts)
            if g.ecc_volatile_uncorrectable == 0
        ]
        return ctx.passed(seen[:1], msg("no uncorrectable ECC errors")) if seen else None
    # Errors since this boot are live; aggregate-only counts are history (maybe already remapped/retired).
    live = any(path.endswith("ecc_volatile_uncorrectable") for path, _value in bad)
    return ctx.finding(
        "fail" if live else "warn",
        bad,
        msg(
            "Uncorrectable (double-bit) ECC errors crash jobs and can corrupt results. Drain the "
            "GPU, run DCGM level 3 diagnostics and RMA it if they recur."
        ),
        commands=["nvidia-smi -q -d ECC,ROW_REMAPPER,PAGE_RETIREMENT", "dcgmi diag -r 3"],
    )


@rule(
    id="gpu.retired_pages",
    layer="hardware",
    title=N_("GPU memory pages were retired"),
    source=f"DCGM diagnostics level 1 page retirement / row remap check, {DCGM_DIAG}; Azure HPC health checks check_gpu_ecc, {AZURE_NHC}",
    priority="high",
    controllable=CLOUD_HARDWARE,
    references=(DCGM_DIAG,),
)
def retired_pages(ctx: RuleContext):
    evidence, status = [], None
    checked = []
    for p, g in gpus(ctx.facts):
        if (
            g.retired_pages_dbe is not None
            or g.retired_pages_sbe is not None
            or g.retired_pages_pending is not None
        ):
            checked.append(p)
        if g.retired_pages_dbe:
            evidence.append((f"{p}.retired_pages_dbe", g.retired_pages_dbe))
            status = "fail"
        if g.retired_pages_pending:
            evidence.append((f"{p}.retired_pages_pending", True))
            status = "fail"
        if g.retired_pages_sbe and g.retired_pages_sbe >= ctx.t("retired_pages_sbe_warn"):
            evidence.append((f"{p}.retired_pages_sbe", g.retired_pages_sbe))
            status = status or "warn"
    if status is None:
        return (
            ctx.passed([(f"{checked[0]}.retired_pages_dbe", 0)], msg("no retired pages")) if checked else None
        )
    return ctx.finding(
        status,
        evidence,
        msg(
            "Pages retired for double-bit errors, or a retirement pending a reset, mean failing GPU "
            "memory. Reset the GPU (or reboot) to apply pending retirements, run DCGM diagnostics, "
            "and RMA a GPU that keeps retiring pages."
        ),
        commands=["nvidia-smi -q -d PAGE_RETIREMENT", "sudo nvidia-smi -r -i <gpu>", "dcgmi diag -r 3"],
    )


@rule(
    id="gpu.row_remap",
    layer="hardware",
    title=N_("GPU row remapping is pending or has failed"),
    source=f"DCGM diagnostics level 1: no pending or failed row remaps, {DCGM_DIAG}",
    priority="high",
    controllable=CLOUD_HARDWARE,
    references=(DCGM_DIAG,),
)
def row_remap(ctx: RuleContext):
    failed = [(f"{p}.remapped_rows_failure", True) for p, g in gpus(ctx.facts) if g.remapped_rows_failure]
    pending = [(f"{p}.remapped_rows_pending", True) for p, g in gpus(ctx.facts) if g.remapped_rows_pending]
    if failed:
        return ctx.finding(
            "fail",
            failed + pending,
            msg(
                "A row-remap failure means the GPU ran out of spare memory rows: take it out of service "
                "and RMA it."
            ),
            commands=["nvidia-smi -q -d ROW_REMAPPER"],
        )
    if pending:
        return ctx.finding(
            "warn",
            pending,
            msg("A row remap is pending: reset the GPU (or reboot) so the spare row is used."),
            commands=["nvidia-smi -q -d ROW_REMAPPER", "sudo nvidia-smi -r -i <gpu>"],
        )
    checked = [p for p, g in gpus(ctx.facts) if g.remapped_rows_pending is False]
    if not checked:
        return None
    return ctx.passed([(f"{checked[0]}.remapped_rows_pending", False)], msg("no pending row remaps"))
