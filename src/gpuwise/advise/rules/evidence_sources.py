"""Which of the node's own diagnostics and logs doctor read (layer: monitoring): DCGM diagnostics, the Fabric
Manager log and the kernel log, each with what it held or why it could not be read."""

from __future__ import annotations

from gpuwise.advise.engine import RuleContext, rule
from gpuwise.advise.rules._links import DCGM_DIAG, FABRIC_MANAGER
from gpuwise.i18n import N_, joined, msg


@rule(
    id="evidence.sources",
    layer="monitoring",
    title=N_("Node diagnostics and logs doctor read"),
    source=f"DCGM diagnostics, {DCGM_DIAG}; Fabric Manager user guide, {FABRIC_MANAGER}; the kernel log",
    priority="low",
    references=(DCGM_DIAG, FABRIC_MANAGER),
)
def evidence_sources(ctx: RuleContext):
    ev = ctx.facts.evidence
    rows: list[tuple[str, object]] = []
    if ev.dcgm_diag is not None:
        rows.append(
            (
                "evidence.dcgm_diag",
                msg("{n} results from {sources}").format(
                    n=sum(len(d.results) for d in ev.dcgm_diag),
                    sources=joined(", ", (d.source for d in ev.dcgm_diag)),
                ),
            )
        )
    if ev.fabric_manager is not None:
        rows.append(
            (
                "evidence.fabric_manager",
                msg("{n} events from {sources}").format(
                    n=sum(len(f.events) for f in ev.fabric_manager),
                    sources=joined(", ", (f.source for f in ev.fabric_manager)),
                ),
            )
        )
    if ev.kernel_logs is not None:
        rows.append(
            (
                "evidence.kernel_logs",
                msg("{lines} lines from {sources}, {n} events").format(
                    lines=sum(k.lines for k in ev.kernel_logs),
                    sources=joined(", ", (k.source for k in ev.kernel_logs)),
                    n=sum(len(k.events) for k in ev.kernel_logs),
                ),
            )
        )
    # a capture made before these sources existed (or a single recording) did not look: nothing to say
    looked = {f: r for f, r in ev.unknown.items() if r.kind != "not_captured"}
    if not rows and not looked:
        return None
    rows += [(f"evidence.unknown.{field}", reason.text) for field, reason in sorted(ev.unknown.items())]
    return ctx.finding(
        "info",
        rows,
        msg(
            "What doctor read of the node's own diagnostics and logs, and why the rest is missing. Give it more "
            "with `gpuwise capture` on the node (as root, so the logs are readable) or `doctor --evidence FILE`."
        ),
        priority="low",
    )
