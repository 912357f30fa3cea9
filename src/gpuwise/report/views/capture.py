"""`gpuwise capture`: what was recorded, what was missing, what was redacted or masked."""

from __future__ import annotations

from gpuwise.capture.writer import CaptureSummary
from gpuwise.documents.ids import CAPTURE_SUMMARY_SCHEMA
from gpuwise.i18n import _, shows, worded
from gpuwise.report.document import Block, Document, Heading, KeyValues, Styled


def capture_data(summary: CaptureSummary, mask: bool) -> dict:
    return {
        "schema": CAPTURE_SUMMARY_SCHEMA,
        "path": str(summary.path),
        "files": summary.files,
        "commands": dict(summary.commands),
        "absent": dict(summary.absent),
        "redacted_env": list(summary.redacted_env),
        "masked": dict(summary.masked) if mask else None,
    }


@shows
def capture_view(summary: CaptureSummary, mask: bool) -> Document:
    data = capture_data(summary, mask)  # from the model as it is: JSON stays English under every --lang
    summary = worded(summary)
    missing = sorted(c for c, s in summary.commands.items() if s == "missing")
    failed = sorted(f"{c} ({s})" for c, s in summary.commands.items() if s not in ("ok", "missing", "absent"))
    rows: list[tuple[str, str | Styled]] = [
        (_("wrote"), Styled(str(summary.path), "ok")),
        (
            _("recorded"),
            _("{files} files, {commands} commands").format(
                files=summary.files, commands=len(summary.commands)
            ),
        ),
    ]
    if missing:
        text = _("{names} (recorded as missing)").format(names=", ".join(missing))
        rows.append((_("not installed here"), Styled(text, "dim")))
    if summary.absent:
        # each with the tool's own words: the file it reads does not exist, the journal has no such boot
        text = _("{sources} (recorded: nothing there to read)").format(
            sources="; ".join(f"{c}: {why}" for c, why in sorted(summary.absent.items()))
        )
        rows.append((_("absent here"), Styled(text, "dim")))
    if failed:
        rows.append(
            (_("ran with errors"), Styled(_("{names} (recorded)").format(names=", ".join(failed)), "warn"))
        )
    if summary.redacted_env:
        rows.append(
            (
                _("redacted"),
                _("{n} secret-looking environment variables").format(n=len(summary.redacted_env)),
            )
        )
    if mask:
        masked = ", ".join(f"{k}: {n}" for k, n in summary.masked.items()) or _("nothing found to mask")
        rows.append((_("masked"), masked))
    title = _("gpuwise capture")
    blocks: list[Block] = [Heading(title), KeyValues(rows)]
    return Document(title=title, blocks=blocks, data=data)
