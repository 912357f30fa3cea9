"""`gpuwise profile`: where the step's time goes, the top ops, and the findings with their sources."""

from __future__ import annotations

from gpuwise import units
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


def view(result: ProfileResult) -> Document:
    blocks: list[Block] = [
        KeyValues(
            [
                ("workload", result.workload),
                ("device", result.device),
                (
                    "schedule",
                    f"wait {result.wait_steps}, warm-up {result.warmup_steps}, active {result.active_steps} steps",
                ),
                (
                    "step",
                    f"{units.number(result.step_ms)} ms ({units.number(result.samples_per_s)} samples/s, profiled)",
                ),
                ("trace", f"{result.trace_path} (open in https://ui.perfetto.dev)"),
            ]
        ),
        Table(
            [Column("phase"), Column("ms per step", "right"), Column("share", "right")],
            [[p.name, units.number(p.ms_per_step), units.percent(p.fraction, 1)] for p in result.phases],
            title="Step time by phase",
            caption="data includes the copy to the device; other is the loop's own Python outside the phases.",
        ),
        Chart(
            "bar",
            "Step time by phase",
            "phase",
            "ms per step",
            [Series("ms", [p.name for p in result.phases], [p.ms_per_step for p in result.phases])],
        ),
    ]
    if result.top_ops:
        blocks.append(
            Table(
                [Column("op"), Column("calls per step", "right"), Column("ms per step", "right")],
                [
                    [o.name, units.number(o.calls_per_step), units.number(o.ms_per_step)]
                    for o in result.top_ops
                ],
                title="Top CPU ops (inclusive time)",
            )
        )
    if result.gpu_kernels:
        g = result.gpu_kernels
        blocks.append(
            KeyValues(
                [
                    ("kernels per step", units.number(g.get("kernels_per_step"))),
                    ("GPU busy", units.percent(g.get("busy_fraction"), 1)),
                    ("median kernel", f"{units.number(g.get('median_kernel_us'))} us"),
                    ("kernels under 10 us", units.percent(g.get("short_kernel_fraction"), 0)),
                ],
                title="GPU kernels",
            )
        )
    blocks.append(Heading("Findings", 2))
    if result.findings:
        for f in result.findings:
            blocks.append(Paragraph(f.title, "warn" if f.severity == "warning" else "info"))
            blocks.append(
                Bullets([f"evidence: {f.evidence}", f"to do: {f.recommendation}", f"source: {f.source}"])
            )
    else:
        blocks.append(Paragraph("no data-loading, communication, launch or copy bottleneck found", "ok"))
    if result.device != "cuda":
        blocks.append(
            Paragraph(
                "Launch-bound and host-to-device checks need GPU kernels in the trace; this run had no GPU.",
                "dim",
            )
        )
    blocks.append(Paragraph(result.analysis, "dim"))
    return Document(title=f"gpuwise profile: {result.workload}", blocks=blocks, data=result.to_json_dict())
