"""Launch view: LaunchPlan -> Document (`gpuwise launch`, dry run or created)."""

from __future__ import annotations

import re

from gpuwise.launch.model import LaunchPlan
from gpuwise.report.document import (
    Bullets,
    Code,
    Column,
    Document,
    Heading,
    KeyValues,
    Paragraph,
    Styled,
    Table,
)

STATUS_STYLE = {"pass": "ok", "warn": "warn", "fail": "fail", "unknown": "dim"}


def _money(x: float | None, ccy: str | None) -> str:
    return "unknown" if x is None else f"{x:,.2f} {ccy or ''}".strip()


def _cost_cell(p: LaunchPlan) -> Styled | str:
    r = p.resources
    text = f"{_money(r.run_cost, r.currency)} ({r.cost_source})"
    if p.max_cost is None:
        return text
    if p.over_budget:
        return Styled(
            f"{text}: above --max-cost {p.max_cost:g}"
            if p.cost_known
            else f"{text}: cannot check --max-cost",
            "fail",
        )
    return Styled(f"{text}: within --max-cost {p.max_cost:g}", "ok")


def launch_view(p: LaunchPlan) -> Document:
    r, job = p.resources, p.job
    state = "dry run: nothing created" if p.submitted is None else "created"
    where = r.instance_type or "your Slurm cluster"
    rows: list = [
        ("target", p.target),
        ("state", Styled(state, "accent" if p.submitted is None else "ok")),
        ("nodes x GPUs", f"{job.nodes} x {job.gpus_per_node} ({job.nproc_per_node} processes per node)"),
        ("where", where + (f" ({r.provider}, {r.zone or r.region or 'any region'})" if r.provider else "")),
        ("price", "unknown" if r.node_hour_price is None else f"{r.node_hour_price:g} {r.currency}/node-hour"
         + (" (spot)" if r.spot else "")),
        ("training time", "unknown" if r.hours is None else f"{_duration(r.hours)} ({r.hours_source})"),
        ("estimated cost", _cost_cell(p)),
        ("output folder", str(p.out)),
    ]  # fmt: skip
    blocks: list = [KeyValues(rows)]
    blocks += [
        Heading("What would be created" if p.submitted is None else "Created", 2),
        Table(
            [Column("resource"), Column("name / id"), Column("delete with")],
            [[c.kind, c.id or c.name, c.delete] for c in p.creates],
        ),
    ]
    blocks += [
        Heading("Preflight on every node (aborts on a critical finding)", 2),
        Code([p.preflight], "sh"),
    ]
    blocks += [
        Heading("Monitoring", 2),
        Code([p.exporter], "sh"),
        Paragraph("Prometheus scrape config:"),
        Code(p.scrape_config.splitlines()),
        Paragraph(
            "Dashboard: dashboards/gpuwise.json (Grafana), alerting rules: dashboards/gpuwise-rules.yml"
        ),
    ]
    blocks += [Heading("Migration check (source vs target software)", 2), _migration_table(p)]
    if p.transfer is not None:
        blocks += [Heading("Data transfer", 2), _transfer_block(p)]
        if p.transfer.warning:
            blocks.append(Paragraph(p.transfer.warning, "warn"))
    if p.cloud_check:
        blocks += [Heading("Provider dry run", 2), Paragraph(p.cloud_check)]
    notes = [*r.notes, *p.notes]
    if notes:
        blocks += [Heading("Notes", 2), Bullets(notes)]
    for name, text in sorted(p.files.items()):
        blocks += [Heading(f"{p.out / name}", 2), Code(_shown(text).splitlines())]
    if p.submitted:
        blocks += [Heading("Submitted", 2), KeyValues([(k, str(v)) for k, v in p.submitted.items()])]
    return Document(title=f"gpuwise launch: {job.name} -> {p.target}", blocks=blocks, data=p.to_json())


def _shown(text: str) -> str:
    """A file as shown on screen: base64 user data is abbreviated (its decoded script is shown as its own file)."""
    return re.sub(
        r'("UserData": ")([A-Za-z0-9+/=]{80,})(")',
        lambda m: (
            f"{m.group(1)}{m.group(2)[:16]}... ({len(m.group(2))} base64 characters of user-data.sh){m.group(3)}"
        ),
        text,
    )


def _migration_table(p: LaunchPlan) -> Table:
    return Table(
        [Column("check"), Column("what"), Column("source"), Column("target"), Column("why / source")],
        [
            [Styled(m.status, STATUS_STYLE.get(m.status)), m.what, m.source_value or "—", m.target_value or "—",
             f"{m.text} ({m.source})"]
            for m in p.migration
        ],
    )  # fmt: skip


def _duration(hours: float | None) -> str:
    if hours is None:
        return "unknown"
    if hours * 60 < 1:
        return f"{hours * 3600:.0f} s"
    return f"{hours * 60:.1f} min" if hours < 1 else f"{hours:.1f} h"


def _transfer_block(p: LaunchPlan) -> KeyValues:
    t = p.transfer
    size = "unknown" if t.size_bytes is None else f"{t.size_bytes / 1e9:,.2f} GB ({t.size_source})"
    if not t.copy_needed:
        return KeyValues(
            [("dataset", f"{p.job.dataset.source} ({t.kind})"), ("size", size), ("copy", t.cost_source)]
        )
    link = "unknown" if t.link_gbps is None else f"{t.link_gbps:g} Gbit/s"
    return KeyValues(
        [
            ("dataset", f"{p.job.dataset.source} ({t.kind}) -> {p.job.dataset.mount}"),
            ("size", size),
            ("link", f"{link} ({t.link_source})"),
            ("time", _duration(t.hours)),
            ("cost", f"{_money(t.cost, t.currency)} ({t.cost_source})"),
        ]
    )
