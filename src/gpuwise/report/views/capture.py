"""`gpuwise capture`: what was recorded, what was missing, what was redacted or masked."""

from __future__ import annotations

from gpuwise.capture.writer import CaptureSummary
from gpuwise.report.document import Block, Document, Heading, KeyValues, Styled

CAPTURE_SUMMARY_SCHEMA = "gpuwise-capture-summary/1"


def capture_data(summary: CaptureSummary, mask: bool) -> dict:
    return {
        "schema": CAPTURE_SUMMARY_SCHEMA,
        "path": str(summary.path),
        "files": summary.files,
        "commands": dict(summary.commands),
        "redacted_env": list(summary.redacted_env),
        "masked": dict(summary.masked) if mask else None,
    }


def capture_view(summary: CaptureSummary, mask: bool) -> Document:
    missing = sorted(c for c, s in summary.commands.items() if s == "missing")
    failed = sorted(f"{c} ({s})" for c, s in summary.commands.items() if s not in ("ok", "missing"))
    rows: list[tuple[str, str | Styled]] = [
        ("wrote", Styled(str(summary.path), "ok")),
        ("recorded", f"{summary.files} files, {len(summary.commands)} commands"),
    ]
    if missing:
        rows.append(("not installed here", Styled(f"{', '.join(missing)} (recorded as missing)", "dim")))
    if failed:
        rows.append(("ran with errors", Styled(f"{', '.join(failed)} (recorded)", "warn")))
    if summary.redacted_env:
        rows.append(("redacted", f"{len(summary.redacted_env)} secret-looking environment variables"))
    if mask:
        masked = ", ".join(f"{k}: {n}" for k, n in summary.masked.items()) or "nothing found to mask"
        rows.append(("masked", masked))
    title = "gpuwise capture"
    blocks: list[Block] = [Heading(title), KeyValues(rows)]
    return Document(title=title, blocks=blocks, data=capture_data(summary, mask))
