"""`gpuwise watch`: the live per-GPU frame, and the end-of-run summary with the findings it implies."""

from __future__ import annotations

from gpuwise import units
from gpuwise.advise.finding import Finding
from gpuwise.advise.watch import GpuSignals
from gpuwise.export.sample import Snapshot
from gpuwise.export.watch import WatchSummary
from gpuwise.i18n import C_, _, shows, worded
from gpuwise.report.document import (
    Block,
    Bullets,
    Column,
    Document,
    Heading,
    KeyValues,
    Paragraph,
    Styled,
    Table,
)
from gpuwise.report.views.doctor import STATUS_MARK

STATUS_STYLE = {"fail": "fail", "warn": "warn", "info": "info", "pass": "ok"}


def _of(value: float | None, limit: float | None, digits: int = 0) -> str:
    """'345/1,980' (a reading against its maximum), or the reading alone."""
    if value is None:
        return units.UNKNOWN
    if limit is None:
        return units.number(value, digits)
    return f"{units.number(value, digits)}/{units.number(limit, digits)}"


def _gib_of(used_mib: float | None, total_mib: float | None) -> str:
    """'12.5/140.4': MiB readings in GiB (units.gib: from the byte count, one decimal), or the reading alone."""
    if used_mib is None:
        return units.UNKNOWN
    used = units.gib(units.mib_to_bytes(used_mib), unit=False)
    return used if not total_mib else f"{used}/{units.gib(units.mib_to_bytes(total_mib), unit=False)}"


def _signals_cell(signals: GpuSignals) -> Styled | str:
    """The signals that are on (highlighted), then the active clock event reasons."""
    clocks = [_("clocks: {reason}").format(reason=r) for r in signals.clock_reasons]
    text = ", ".join([*signals.on, *clocks])
    return Styled(text, "warn") if signals.on else (text or "—")


@shows
def frame_view(
    frame: Snapshot, elapsed_s: float, signals: list[GpuSignals], title: str = "gpuwise watch"
) -> Document:
    """One sample: a row per GPU, readings against their limits, and what `advise.watch.frame_signals` judged
    for each GPU (its signals that are on, highlighted)."""
    data = frame.to_dict()  # from the model as it is: JSON stays English under every --lang
    frame = worded(frame)
    blocks: list[Block] = [Heading(f"{title} — {frame.hostname} — {units.duration(elapsed_s)}", level=2)]
    if frame.error and not frame.gpus:
        blocks.append(Paragraph(_("no GPU data: {error}").format(error=frame.error), "warn"))
        return Document(title=title, blocks=blocks, data=data)
    rows = []
    for g, judged in zip(frame.gpus, signals, strict=True):
        memory = _gib_of(g.fb_used_mib, g.memory_total_mib)
        pcie = (
            f"{units.number((g.pcie_tx_kbps or 0) / 1000, 0)}/{units.number((g.pcie_rx_kbps or 0) / 1000, 0)}"
            if g.pcie_tx_kbps is not None
            else units.UNKNOWN
        )
        rows.append(
            [
                str(g.index),
                units.number(g.util_gpu_pct, 0),
                memory,
                _of(g.power_w, g.power_limit_w),
                _of(g.sm_clock_mhz, g.sm_clock_max_mhz),
                units.number(g.temperature_c, 0),
                pcie,
                _signals_cell(judged),
            ]
        )
    columns = [
        Column("GPU"),
        Column(_("Util {percent_sign}").format(percent_sign="%"), "right"),
        Column(_("Mem GiB"), "right"),
        Column(_("Power W"), "right"),
        Column(_("SM MHz"), "right"),
        Column("°C", "right"),
        Column(_("PCIe MB/s"), "right"),
        Column(_("Signals")),
    ]
    blocks.append(Table(columns, rows, caption=_("x/y = reading/limit; PCIe = tx/rx")))
    return Document(title=title, blocks=blocks, data=data)


@shows
def summary_view(summary: WatchSummary, findings: list[Finding]) -> Document:
    """The end of a run: host side (wall, CPU, RSS), per GPU (idle, power-limited, peak memory), findings."""
    summary = worded(summary)
    findings = worded(findings)
    blocks: list[Block] = [Heading(_("gpuwise watch — summary"))]
    host = summary.host
    if host is not None:
        rows: list[tuple[str, str | Styled]] = []
        if host.command:
            rows.append((_("command"), " ".join(host.command)))
        if host.pid is not None:
            rows.append((_("pid"), str(host.pid)))
        if host.exit_code is not None:
            rows.append(("exit code", Styled(str(host.exit_code), "ok" if host.exit_code == 0 else "fail")))
        rows += [
            (_("wall time"), units.duration(host.wall_s)),
            (
                _("CPU time"),
                _("{duration} ({percent} of one core)").format(
                    duration=units.duration(host.cpu_s), percent=f"{units.number(host.cpu_pct, 0)}%"
                ),
            ),
            (_("peak RSS"), units.size(host.peak_rss_bytes)),
        ]
        blocks.append(KeyValues(rows, title=_("process (host side)")))
    blocks.append(KeyValues([(C_("input", "source"), summary.source), (_("samples"), str(summary.samples))]))
    if not summary.gpus:
        why = summary.gpu_error or _("the source reported no GPUs")
        blocks.append(Paragraph(f"GPU: no GPU ({why})", "warn"))
    else:
        rows = [
            [
                f"{g.index} {g.name or ''}".strip(),
                units.duration(g.seconds),
                _share(g.idle_s, g.seconds),
                _share(g.power_limited_s, g.signal_known_s.get("power_limited")),
                units.number(g.util_mean_pct, 0),
                _gib_of(g.peak_memory_mib, g.memory_total_mib),
            ]
            for g in summary.gpus
        ]  # fmt: skip
        columns = [
            Column("GPU"),
            Column(_("Watched"), "right"),
            Column(_("Idle"), "right"),
            Column(_("Power-limited"), "right"),
            Column(_("Util {percent_sign} mean").format(percent_sign="%"), "right"),
            Column(_("Peak mem GiB"), "right"),
        ]
        blocks.append(
            Table(
                columns,
                rows,
                caption=_("idle = utilisation <= {limit}").format(
                    limit=f"{summary.thresholds['idle_util_pct']:g}%"
                ),
            )
        )
    if findings:
        blocks.append(Heading(_("findings"), level=2))
        blocks.append(
            Bullets(
                [Styled(f"[{_(STATUS_MARK[f.status])}] {f.title}. {f.recommendation.text} ({f.source})", STATUS_STYLE[f.status])
                 for f in findings]
            )
        )  # fmt: skip
    elif summary.gpus:
        share = units.percent(summary.thresholds["summary_min_fraction"])
        blocks.append(
            Paragraph(
                _("no tuning signal was on for {share} of the watched time or more").format(share=share), "ok"
            )
        )
    data = {**summary.to_dict(), "findings": [f.model_dump() for f in findings]}
    return Document(title=_("gpuwise watch"), blocks=blocks, data=data)


def _share(part: float, whole: float | None) -> str:
    if not whole:
        return units.UNKNOWN
    return f"{units.duration(part)} ({units.percent(part / whole)})"
