"""Xid rule (layer: hardware): NVIDIA Xid events in the kernel log, judged with NVIDIA's Xid catalogue.

The meaning, severity and action of each code are data (advise/data/xid_catalog.yaml, each row citing
NVIDIA's Xid documentation); this module only groups the events and picks the worst.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import yaml

from gpuwise.advise.controls import CLOUD_HARDWARE
from gpuwise.advise.engine import RuleContext, rule
from gpuwise.advise.rules._evidence import gpu_name
from gpuwise.advise.rules._util import sentences as _sentences
from gpuwise.i18n import N_, msg

XID_DOCS = "https://docs.nvidia.com/deploy/xid-errors/index.html"
XID_CATALOG = "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html"
_SEVERITY_ORDER = ("fail", "warn", "info")


@dataclass(frozen=True)
class XidInfo:
    code: int
    meaning: str
    severity: str  # fail, warn or info
    action: str
    source: str


@lru_cache(maxsize=1)
def xid_catalog() -> dict[int, XidInfo]:
    """advise/data/xid_catalog.yaml as {code: XidInfo}; every row needs all four fields."""
    text = resources.files("gpuwise.advise").joinpath("data/xid_catalog.yaml").read_text(encoding="utf-8")
    out = {}
    for code, row in (yaml.safe_load(text) or {}).items():
        if not isinstance(row, dict) or not all(
            row.get(k) for k in ("meaning", "severity", "action", "source")
        ):
            raise ValueError(f"xid_catalog.yaml: Xid {code} needs meaning, severity, action and source")
        if row["severity"] not in _SEVERITY_ORDER:
            raise ValueError(f"xid_catalog.yaml: Xid {code} severity must be one of {_SEVERITY_ORDER}")
        out[int(code)] = XidInfo(int(code), row["meaning"], row["severity"], row["action"], row["source"])
    return out


def _xid_text(ctx: RuleContext, code: int, bus, boot, n: int, meaning: str, last_detail: dict) -> str:
    values = {
        "n": n,
        "gpu": gpu_name(ctx.facts, bus=bus),
        "meaning": meaning,
        "line": last_detail[(code, bus, boot)][:120],
    }
    if boot == "previous":
        return msg(
            "{n}x on {gpu} before the last reboot (journalctl -k -b -1): {meaning}; last line: {line}"
        ).format(**values)
    return msg("{n}x on {gpu}: {meaning}; last line: {line}").format(**values)


@rule(
    id="gpu.xid_errors",
    layer="hardware",
    title=N_("The NVIDIA driver logged Xid errors"),
    source=f"NVIDIA Xid Errors and Xid Catalog ({XID_CATALOG})",
    priority="high",
    controllable=CLOUD_HARDWARE,
    references=(XID_DOCS, XID_CATALOG),
)
def xid_errors(ctx: RuleContext):
    events = ctx.facts.kernel.xid_events
    if events is None:
        return None  # the kernel log was not readable: the reason is in kernel.unknown
    if not events:
        return ctx.passed([("kernel.xid_events", [])], msg("No NVIDIA Xid errors in the kernel log"))
    catalog = xid_catalog()
    counts = Counter((e.xid, e.pci_bus_id, e.boot) for e in events)
    last_detail = {(e.xid, e.pci_bus_id, e.boot): e.detail for e in events}
    rows = []
    for (code, bus, boot), n in counts.items():
        info = catalog.get(code)
        severity = info.severity if info else "warn"
        meaning = (
            msg(info.meaning)  # xid_catalog.yaml's text, extracted for translation (babel.cfg)
            if info
            else msg("Xid {code} is not in gpuwise's catalogue: look it up in {url}").format(
                code=code, url=XID_CATALOG
            )
        )
        rows.append((_SEVERITY_ORDER.index(severity), code, bus, boot, n, meaning, info))
    rows.sort(key=lambda r: (r[0], -r[4], r[1]))
    worst = _SEVERITY_ORDER[rows[0][0]]
    evidence = [
        (f"kernel.xid_events[xid={code}]", _xid_text(ctx, code, bus, boot, n, meaning, last_detail))
        for _rank, code, bus, boot, n, meaning, _info in rows[:8]
    ]
    actions = list(dict.fromkeys(msg(info.action) for *_rest, info in rows if info is not None))
    if worst == "info":
        text = _sentences(
            [
                msg(
                    "The only Xids logged are ones the application usually causes itself (bad addresses, "
                    "a killed job); the GPUs are probably fine."
                ),
                *actions[:2],
            ]
        )
        return ctx.finding("info", evidence, text, priority="low")
    text = _sentences(actions[:3]) or msg("Look each code up in NVIDIA's Xid catalogue.")
    return ctx.finding(
        worst,
        evidence,
        text,
        commands=[
            "sudo dmesg -T | grep -i 'NVRM: Xid'",
            "nvidia-smi -q -d ECC,ROW_REMAPPER,PAGE_RETIREMENT",
            "dcgmi diag -r 2",
        ],
    )
