"""Launch view: LaunchPlan -> Document (`gpuwise launch`, dry run or created)."""

from __future__ import annotations

import re

from gpuwise.i18n import C_, _, shows, worded
from gpuwise.launch.model import LaunchPlan
from gpuwise.launch.targets import get as get_target
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
from gpuwise.report.views.plan import data_path_label, duration_text

STATUS_STYLE = {"pass": "ok", "warn": "warn", "fail": "fail", "unknown": "dim"}


def _status_word(status: str) -> str:
    """The migration check's status (an enum in the JSON) as the table shows it."""
    return {
        "pass": C_("check status", "pass"),
        "warn": C_("check status", "warn"),
        "fail": C_("check status", "fail"),
        "unknown": C_("check status", "unknown"),
    }.get(status, status)


def _money(x: float | None, ccy: str | None) -> str:
    return _("unknown") if x is None else f"{x:,.2f} {ccy or ''}".strip()


def _cost_cell(p: LaunchPlan) -> Styled | str:
    r = p.resources
    text = _("{value} ({source})").format(value=_money(r.run_cost, r.currency), source=r.cost_source)
    if p.max_cost is None:
        return text
    limit = f"{p.max_cost:g}"
    if p.over_budget:
        return Styled(
            _("{text}: above --max-cost {limit}").format(text=text, limit=limit)
            if p.cost_known
            else _("{text}: cannot check --max-cost").format(text=text),
            "fail",
        )
    return Styled(_("{text}: within --max-cost {limit}").format(text=text, limit=limit), "ok")


def _price(p: LaunchPlan) -> str:
    r = p.resources
    if r.node_hour_price is None:
        return _("unknown")
    price = _("{price} {currency}/node-hour").format(price=f"{r.node_hour_price:g}", currency=r.currency)
    return _("{price} (spot)").format(price=price) if r.spot else price


def _where(p: LaunchPlan) -> str:
    r = p.resources
    where = r.instance_type or _(get_target(p.target).where)
    if not r.provider:
        return where
    return _("{instance} ({provider}, {region})").format(
        instance=where, provider=r.provider, region=r.zone or r.region or _("any region")
    )


@shows
def launch_view(p: LaunchPlan) -> Document:
    data = p.to_json()  # from the model as it is: JSON stays English under every --lang
    p = worded(p)
    r, job = p.resources, p.job
    state = _("dry run: nothing created") if p.submitted is None else C_("launch", "created")
    hours = (
        _("unknown")
        if r.hours is None
        else _("{value} ({source})").format(value=duration_text(r.hours), source=r.hours_source)
    )
    rows: list = [
        (C_("launch", "target"), p.target),
        (C_("launch", "state"), Styled(state, "accent" if p.submitted is None else "ok")),
        (_("nodes x GPUs"), _("{nodes} x {gpus} ({procs} processes per node)").format(
            nodes=job.nodes, gpus=job.gpus_per_node, procs=job.nproc_per_node)),
        (C_("launch", "where"), _where(p)),
        (C_("launch", "price"), _price(p)),
        (_("training time"), hours),
        (_("estimated cost"), _cost_cell(p)),
        (_("output folder"), str(p.out)),
    ]  # fmt: skip
    blocks: list = [KeyValues(rows)]
    blocks += [
        Heading(_("What would be created") if p.submitted is None else C_("launch", "Created"), 2),
        Table(
            [Column(C_("launch", "resource")), Column(_("name / id")), Column(_("delete with"))],
            [[c.kind, c.id or c.name, c.delete] for c in p.creates],
        ),
    ]
    blocks += [
        Heading(_("Preflight on every node (aborts on a critical finding)"), 2),
        Code([p.preflight], "sh"),
    ]
    blocks += [
        Heading(C_("launch", "Monitoring"), 2),
        Code([p.exporter], "sh"),
        Paragraph(_("Prometheus scrape config:")),
        Code(p.scrape_config.splitlines()),
        Paragraph(
            _("Dashboard: {dashboard} (Grafana), alerting rules: {rules}").format(
                dashboard="dashboards/gpuwise.json", rules="dashboards/gpuwise-rules.yml"
            )
        ),
    ]
    blocks += [Heading(_("Migration check (source vs target software)"), 2), _migration_table(p)]
    if p.transfer is not None:
        blocks += [Heading(_("Data transfer"), 2), _transfer_block(p)]
        if p.transfer.warning:
            blocks.append(Paragraph(p.transfer.warning, "warn"))
    if p.cloud_check:
        blocks += [Heading(_("Provider dry run"), 2), Paragraph(p.cloud_check)]
    notes = [*r.notes, *p.notes]
    if notes:
        blocks += [Heading(C_("launch", "Notes"), 2), Bullets(notes)]
    for name, text in sorted(p.files.items()):
        blocks += [Heading(f"{p.out / name}", 2), Code(_shown(text).splitlines())]
    if p.submitted:
        blocks += [
            Heading(C_("launch", "Submitted"), 2),
            KeyValues([(_submitted_label(k), str(v)) for k, v in p.submitted.items()]),
        ]
    title = _("gpuwise launch: {job} -> {target}").format(job=job.name, target=p.target)
    return Document(title=title, blocks=blocks, data=data)


def _submitted_label(key: str) -> str:
    """A key of what --yes recorded (a JSON key in launch.json, shown as it is in English)."""
    return {
        "id": C_("submitted", "id"),
        "job_id": C_("submitted", "job_id"),
        "log": C_("submitted", "log"),
        "exit_code": C_("submitted", "exit_code"),
        "cluster": C_("submitted", "cluster"),
        "instances": C_("submitted", "instances"),
        "request_id": C_("submitted", "request_id"),
    }.get(key, key)


def _shown(text: str) -> str:
    """A file as shown on screen: base64 user data is abbreviated (its decoded script is shown as its own file).

    The file itself stays English (another program reads it); only the abbreviation note is translated."""
    return re.sub(
        r'("UserData": ")([A-Za-z0-9+/=]{80,})(")',
        lambda m: (
            m.group(1)
            + _("{head}... ({n} base64 characters of {file})").format(
                head=m.group(2)[:16], n=len(m.group(2)), file="user-data.sh"
            )
            + m.group(3)
        ),
        text,
    )


def _migration_table(p: LaunchPlan) -> Table:
    return Table(
        [Column(C_("launch", "check")), Column(C_("launch", "what")), Column(C_("migration", "source")), Column(C_("migration", "target")),
         Column(_("why / source"))],
        [
            [Styled(_status_word(m.status), STATUS_STYLE.get(m.status)), _(m.what), m.source_value or "—",
             m.target_value or "—", _("{text} ({source})").format(text=m.text, source=m.source)]
            for m in p.migration
        ],
    )  # fmt: skip


def _transfer_block(p: LaunchPlan) -> KeyValues:
    t, ds = p.transfer, p.job.dataset
    kind = _transfer_kind(t.kind)
    size = (
        _("unknown")
        if t.size_bytes is None
        else _("{value} ({source})").format(value=f"{t.size_bytes / 1e9:,.2f} GB", source=t.size_source)
    )
    if not t.copy_needed:
        return KeyValues(
            [
                (C_("launch", "dataset"), _("{source} ({kind})").format(source=ds.source, kind=kind)),
                (C_("launch", "size"), size),
                (C_("launch", "copy"), t.cost_source),
            ]
        )
    link = _("unknown") if t.link_gbps is None else f"{t.link_gbps:g} Gbit/s"
    return KeyValues(
        [
            (C_("launch", "dataset"), _("{source} ({kind}) -> {mount}").format(source=ds.source, kind=kind, mount=ds.mount)),
            (C_("launch", "size"), size),
            (C_("launch", "path"), data_path_label(t.path)),
            (C_("launch", "link"), _("{value} ({source})").format(value=link, source=t.link_source)),
            (C_("launch", "time"), duration_text(t.hours)),
            (C_("launch", "cost"), _("{value} ({source})").format(value=_money(t.cost, t.currency), source=t.cost_source)),
            *[(C_("launch", "instead"), _("{path}: {time}").format(path=data_path_label(a["path"]), time=duration_text(a["hours"])))
              for a in t.alternatives],
            *([(C_("launch", "faster"), t.comparison)] if t.comparison else []),
        ]
    )  # fmt: skip


def _transfer_kind(kind: str) -> str:
    """The dataset's kind (an enum in the JSON: local | object-store | nfs) as the report shows it."""
    return {
        "local": C_("launch", "local"),
        "object-store": C_("launch", "object-store"),
        "nfs": C_("launch", "nfs"),
    }.get(kind, kind)
