"""DCGM diagnostics (layer: hardware): `dcgmi diag` results per test and per GPU, from a capture or
`doctor --evidence FILE`. A GPU that failed a test fails, whatever DCGM's summary line for the test says."""

from __future__ import annotations

from gpuwise.advise.controls import CLOUD_HARDWARE
from gpuwise.advise.engine import RuleContext, rule
from gpuwise.advise.rules._evidence import gpu_name
from gpuwise.advise.rules._links import DCGM_DIAG
from gpuwise.facts.models import DcgmDiag, DcgmResult
from gpuwise.i18n import N_, joined, msg


def effective(diag: DcgmDiag) -> list[DcgmResult]:
    """Per-GPU results, and a test's summary only where DCGM gave no per-GPU line for that test."""
    per_gpu = {r.test for r in diag.results if r.gpu is not None}
    return [r for r in diag.results if r.gpu is not None or r.test not in per_gpu]


def _who(ctx: RuleContext, r: DcgmResult) -> str:
    return gpu_name(ctx.facts, index=r.gpu) if r.gpu is not None else msg("all GPUs")


@rule(
    id="gpu.dcgm_diag",
    layer="hardware",
    title=N_("DCGM diagnostics"),
    source=f"NVIDIA DCGM user guide, 'DCGM Diagnostics' (run levels, per-test results), {DCGM_DIAG}",
    priority="high",
    controllable=CLOUD_HARDWARE,
    references=(DCGM_DIAG,),
)
def dcgm_diag(ctx: RuleContext):
    diags = ctx.facts.evidence.dcgm_diag
    if not diags:
        return None
    evidence, worst = [], "pass"
    bad: list[tuple[DcgmDiag, DcgmResult]] = []
    counts = {"pass": 0, "fail": 0, "warn": 0, "skip": 0}
    for diag in diags:
        summary_pass = {r.test for r in diag.results if r.gpu is None and r.status == "pass"}
        for r in effective(diag):
            counts[r.status] += 1
            if r.status in ("fail", "warn"):
                bad.append((diag, r))
                note = msg(" (DCGM's summary line for this test says Pass)") if r.test in summary_pass else ""
                message = joined("; ", r.messages)[:400]
                evidence.append(
                    (
                        f"evidence.dcgm_diag[{diag.source}].{r.test}",
                        msg("{status} on {gpu}{note}{sep}{message}").format(
                            status=r.status.capitalize(),
                            gpu=_who(ctx, r),
                            note=note,
                            sep=": " if message else "",
                            message=message,
                        ),
                    )
                )
    if counts["fail"]:
        worst = "fail"
    elif counts["warn"]:
        worst = "warn"
    total = sum(counts.values())
    if worst == "pass" and counts["skip"] == total:
        return ctx.finding(
            "warn",
            [(f"evidence.dcgm_diag[{d.source}].skipped", sorted({r.test for r in d.results})) for d in diags],
            msg(
                "DCGM skipped every test ({n} Skip): nothing was tested, so this is no evidence either way. "
                "Run `dcgmi diag -r 3` as root with nv-hostengine running and no other GPU processes, and read "
                "why each test was skipped (`-v`)."
            ).format(n=counts["skip"]),
            commands=["sudo dcgmi diag -r 3 -v"],
            title=msg("DCGM diagnostics skipped every test"),
            priority="medium",
        )
    if worst == "pass":
        return ctx.passed(
            [
                (f"evidence.dcgm_diag[{d.source}].passed", sum(1 for r in effective(d) if r.status == "pass"))
                for d in diags
            ],
            msg("dcgmi diag: {n} results passed ({skipped} skipped)").format(
                n=counts["pass"], skipped=counts["skip"]
            ),
        )
    failing = sorted({_who(ctx, r) for _d, r in bad if r.status == worst})
    tests = sorted({r.test for _d, r in bad if r.status == worst})
    text = (
        msg(
            "DCGM's {tests} test failed on {gpus}. Drain the node, reset the GPU (or reboot) and rerun "
            "`dcgmi diag -r 3` on it alone; a GPU that fails again needs a hardware check (on a cloud VM: "
            "replace the instance and report it to the provider)."
        )
        if worst == "fail"
        else msg(
            "DCGM warned in {tests} on {gpus}: the GPU works but something DCGM checks is off; read each "
            "message and fix the setting it names before the next run."
        )
    ).format(tests=joined(", ", tests), gpus=joined(", ", failing))
    return ctx.finding(
        worst,
        evidence[:12],
        text,
        commands=[
            "sudo dcgmi diag -r 3 -i <gpu index>",
            "nvidia-smi -q -d ECC,ROW_REMAPPER",
            "sudo dmesg -T | grep -i xid",
        ],
        title=msg("DCGM diagnostics failed") if worst == "fail" else msg("DCGM diagnostics warned"),
    )
