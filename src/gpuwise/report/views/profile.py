"""`gpuwise profile`: where the step's time goes, the top ops, and the findings with their sources."""

from __future__ import annotations

from gpuwise import units
from gpuwise.i18n import C_, _, shows, worded
from gpuwise.profile.model import ProfileResult
from gpuwise.report.document import (
    Block,
    Bullets,
    Chart,
    Column,
    Document,
    Heading,
    KeyValues,
    Paragraph,
    Series,
    Table,
)


def _phase(name: str) -> str:
    """A phase (the JSON's names: data, forward, ... all-reduce, other) in words."""
    words = {
        "data": C_("phase", "data"),
        "forward": C_("phase", "forward"),
        "backward": C_("phase", "backward"),
        "optimizer": C_("phase", "optimizer"),
        "other": C_("phase", "other"),
    }
    return words.get(name, name)


@shows
def view(result: ProfileResult) -> Document:
    data = result.to_json_dict()  # from the model as it is: JSON stays English under every --lang
    result = worded(result)
    ms_per_step = _("ms per step")
    blocks: list[Block] = [
        KeyValues(
            [
                (_("workload"), result.workload),
                (_("device"), result.device),
                (
                    _("schedule"),
                    _("wait {wait}, warm-up {warmup}, active {active} steps").format(
                        wait=result.wait_steps, warmup=result.warmup_steps, active=result.active_steps
                    ),
                ),
                (
                    C_("profile", "step"),
                    _("{ms} ms ({rate} samples/s, profiled)").format(
                        ms=units.number(result.step_ms), rate=units.number(result.samples_per_s)
                    ),
                ),
                (
                    _("trace"),
                    _("{path} (open in {url})").format(path=result.trace_path, url="https://ui.perfetto.dev"),
                ),
            ]
        ),
        Table(
            [Column(_("phase")), Column(ms_per_step, "right"), Column(_("share"), "right")],
            [
                [_phase(p.name), units.number(p.ms_per_step), units.percent(p.fraction, 1)]
                for p in result.phases
            ],
            title=_("Step time by phase"),
            caption=_(
                "data includes the copy to the device; other is the loop's own Python outside the phases."
            ),
        ),
        Chart(
            "bar",
            _("Step time by phase"),
            _("phase"),
            ms_per_step,
            [Series("ms", [_phase(p.name) for p in result.phases], [p.ms_per_step for p in result.phases])],
        ),
    ]
    if result.top_ops:
        blocks.append(
            Table(
                [Column(_("op")), Column(_("calls per step"), "right"), Column(ms_per_step, "right")],
                [
                    [o.name, units.number(o.calls_per_step), units.number(o.ms_per_step)]
                    for o in result.top_ops
                ],
                title=_("Top CPU ops (inclusive time)"),
            )
        )
    if result.gpu_kernels:
        g = result.gpu_kernels
        blocks.append(
            KeyValues(
                [
                    (_("kernels per step"), units.number(g.get("kernels_per_step"))),
                    (_("GPU busy"), units.percent(g.get("busy_fraction"), 1)),
                    (_("median kernel"), f"{units.number(g.get('median_kernel_us'))} us"),
                    (_("kernels under 10 us"), units.percent(g.get("short_kernel_fraction"), 0)),
                ],
                title=_("GPU kernels"),
            )
        )
    blocks.append(Heading(_("Findings"), 2))
    if result.findings:
        for f in result.findings:
            blocks.append(Paragraph(f.title, "warn" if f.severity == "warning" else "info"))
            blocks.append(
                Bullets(
                    [
                        _("evidence: {evidence}").format(evidence=f.evidence),
                        _("to do: {recommendation}").format(recommendation=f.recommendation),
                        _("source: {source}").format(source=f.source),
                    ]
                )
            )
    else:
        blocks.append(Paragraph(_("no data-loading, communication, launch or copy bottleneck found"), "ok"))
    if result.device != "cuda":
        blocks.append(
            Paragraph(
                _(
                    "Launch-bound and host-to-device checks need GPU kernels in the trace; this run had no GPU."
                ),
                "dim",
            )
        )
    # a profile recorded in English reads translated (never _(""): gettext answers the catalog's header)
    blocks.append(Paragraph(_(result.analysis) if result.analysis else "", "dim"))
    return Document(title=f"gpuwise profile: {result.workload}", blocks=blocks, data=data)
