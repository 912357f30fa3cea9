"""Build gpuwise-capture/1 directories at test time (DESIGN.md 'The capture format').

Real recorded outputs are read from the shared fixtures folder and copied into tmp_path, never into
the project; an edit to one is made here, in the test, and described where it is made.
"""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

from tests.conftest import REAL


def real_text(rel: str) -> str:
    return (REAL / rel).read_text(encoding="utf-8", errors="replace")


def make_capture(
    root: Path,
    commands: dict[str, str] | None = None,
    files: dict[str, str] | None = None,
    hostname: str = "testnode",
    rcs: dict[str, int] | None = None,
) -> Path:
    """Write meta.json, commands/<id>.txt (+ .rc) and files/<abs path> under `root`; returns `root`."""
    root.mkdir(parents=True, exist_ok=True)
    meta = {
        "format": "gpuwise-capture/1",
        "captured_at": "2026-01-01T00:00:00+00:00",
        "hostname": hostname,
        "gpuwise_version": "test",
    }
    (root / "meta.json").write_text(json.dumps(meta))
    for cid, text in (commands or {}).items():
        (root / "commands").mkdir(exist_ok=True)
        (root / "commands" / f"{cid}.txt").write_text(text)
        if rcs and cid in rcs:
            (root / "commands" / f"{cid}.rc").write_text(str(rcs[cid]))
    for path, text in (files or {}).items():
        dest = root / "files" / path.lstrip("/")
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(text)
    return root


def doctor_report(capture: Path, env: str = "auto", bench=None):
    """Facts from the capture, then every rule: the same path `gpuwise doctor --from` takes."""
    from gpuwise.capture.host import CaptureHost
    from gpuwise.facts.collect import collect_facts
    from gpuwise.pipeline import diagnose

    return diagnose(collect_facts(CaptureHost(capture)), bench, env)


def finding(report, rule_id: str):
    hits = [f for f in report.findings if f.id == rule_id and f.status != "pass"]
    return hits[0] if hits else None


# what must never reach a user: Python's None, a NaN, pydantic's serializer warnings
BAD_WORDS = re.compile(r"\bNone\b|\bnan\b|PydanticSerializationUnexpectedValue|Pydantic serializer warnings")


def assert_renders_clean(make_report, name: str) -> None:
    """The report `make_report()` builds renders in text, md, json and html with no None, nan or serializer
    warning (JSON's own null is the format's absent value, not a leak)."""
    from gpuwise.report.formats import get_renderer
    from gpuwise.report.views.doctor import doctor_view

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        doc = doctor_view(make_report())
        outputs = {
            fmt: get_renderer(fmt)(doc, width=120, color=False) for fmt in ("text", "md", "json", "html")
        }
    assert not [str(w.message) for w in caught if "serializ" in str(w.message).lower()]
    for fmt, out in outputs.items():
        text = out.decode("utf-8", "replace") if isinstance(out, bytes) else out
        if fmt == "json":
            text = re.sub(r'"[^"]*": null', "", text)
        bad = BAD_WORDS.findall(text)
        assert not bad, f"{name} as {fmt}: {bad[:5]}"
