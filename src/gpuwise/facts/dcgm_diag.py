"""`dcgmi diag` results, per test and per GPU, from its text table (any run level, DCGM 3.x and 4.x) or `-j` JSON.

DCGM prints one summary per test ('Pass', 'Fail - All', 'Fail - GPU: 0') and, in 4.x, a line per GPU
('GPU0: Fail') under it; the summary can say Pass while one GPU failed, so every per-GPU line is kept and
the rule judges those, never the summary alone. Warning and Info rows carry DCGM's own message.
Reference: NVIDIA DCGM user guide, "DCGM Diagnostics" (test names, levels, result meanings).
"""

from __future__ import annotations

import json
import re
from typing import Any

from gpuwise.facts.models import DcgmDiag, DcgmResult
from gpuwise.facts.paste import unpaste

MAX_MESSAGES = 8  # per result; DCGM repeats a warning per GPU and per iteration
_STATUS = {
    "pass": "pass",
    "fail": "fail",
    "warn": "warn",
    "warning": "warn",
    "skip": "skip",
    "skipped": "skip",
}
_SUMMARY = re.compile(
    r"^(Pass|Fail|Warn|Warning|Skip)(?:\s*-\s*(?:(All)|GPUs?\s*:?\s*([\d,\s]+)))?\s*$", re.I
)
_PER_GPU = re.compile(r"^GPU\s?(\d+)\s*:\s*(Pass|Fail|Warn|Warning|Skip)\b", re.I)
_CATEGORY = re.compile(r"^[|+]-{2,}\s+([A-Za-z][\w ]*?)\s+-+\+")
_MSG_GPU = re.compile(r"^GPU\s?(\d+)\b")
_META = {"dcgm version": "dcgm_version", "driver version detected": "driver_version"}


def looks_like_dcgm_diag(text: str) -> bool:
    return (
        "Successfully ran diagnostic" in text
        or ("| Diagnostic" in text and "| Result" in text)
        or '"DCGM GPU Diagnostic"' in text
        or '"DCGM Diagnostic"' in text
        or bool(re.search(r"^\|\s*[\w ./-]+\|\s*(Pass|Fail|Skip|Warn)\b.*\|\s*$", text, re.M))
    )


def parse_dcgm_diag(text: str, source: str) -> DcgmDiag:
    """Either output form; raises ValueError when the text holds no DCGM result at all."""
    body = unpaste(text).strip()
    diag = _parse_json(body, source) if body.startswith("{") else _parse_table(body, source)
    if not diag.results:
        raise ValueError("no dcgmi diag test results in it")
    return diag


# ---------------------------------------------------------------- text table


def _cells(line: str) -> tuple[str, str] | None:
    s = line.strip()
    if not (s.startswith("|") and s.endswith("|")) or s.count("|") < 3:
        return None
    left, _bar, right = s[1:-1].partition("|")
    return left.strip(), right.strip()


def _parse_table(text: str, source: str) -> DcgmDiag:
    diag = DcgmDiag(source=source)
    category: str | None = None
    test: str | None = None
    message: DcgmResult | None = None  # the result the last Warning/Info row belongs to
    width = max((len(c[1]) for c in map(_cells, text.splitlines()) if c), default=0)
    piece = 0  # length of the last message piece: a full-width piece was cut by DCGM, not at a space
    for line in text.splitlines():
        if m := _CATEGORY.match(line.strip()):
            category, test, message = m.group(1).strip(), None, None
            continue
        cells = _cells(line)
        if cells is None:
            continue
        left, right = cells
        if left.lower() in ("diagnostic", "") and right.lower() == "result":
            continue
        if category and category.lower() == "metadata":
            if key := _META.get(left.lower()):
                setattr(diag, key, right or None)
            continue
        kind = left.split(":")[0].strip().lower()
        if kind in ("warning", "info"):
            gpu = _msg_gpu(left, right)
            message = _owner(diag, test, gpu) if test else None
            if message is not None and len(message.messages) < MAX_MESSAGES:
                message.messages.append(right)
            piece = len(right)
            continue
        if left == "" and message is not None and not _SUMMARY.match(right) and not _PER_GPU.match(right):
            if message.messages:
                sep = "" if piece >= width else " "
                message.messages[-1] = (message.messages[-1] + sep + right)[:600]
            piece = len(right)
            continue
        if left:
            test, message = left, None
        if test is None:
            continue
        if m := _PER_GPU.match(right):
            diag.results.append(
                DcgmResult(test=test, category=category, gpu=int(m.group(1)), status=_st(m.group(2)))
            )
        elif m := _SUMMARY.match(right):
            status = _st(m.group(1))
            gpus = [int(g) for g in re.findall(r"\d+", m.group(3) or "")]
            for gpu in gpus or [None]:
                diag.results.append(DcgmResult(test=test, category=category, gpu=gpu, status=status))
    return diag


def _msg_gpu(left: str, right: str) -> int | None:
    for text in (left.partition(":")[2].strip(), right):
        if m := _MSG_GPU.match(text):
            return int(m.group(1))
    return None


def _owner(diag: DcgmDiag, test: str, gpu: int | None) -> DcgmResult | None:
    rows = [r for r in diag.results if r.test == test]
    for r in reversed(rows):
        if gpu is not None and r.gpu == gpu:
            return r
    failing = [r for r in rows if r.status in ("fail", "warn")]
    return (failing or rows or [None])[-1]


def _st(word: str) -> str:
    return _STATUS[word.lower()]


# ---------------------------------------------------------------- -j JSON

_ELISION = re.compile(r'\{\s*"\.\.\."\s*\}\s*,?|"\.\.\."\s*,?')  # '{"..."},' where a poster cut a block


def _parse_json(text: str, source: str) -> DcgmDiag:
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        try:
            doc = json.loads(_ELISION.sub("", text))
        except (json.JSONDecodeError, RecursionError) as exc:
            raise ValueError(f"not valid JSON ({exc})") from None
    diag = DcgmDiag(source=source)
    root = doc.get("DCGM GPU Diagnostic") or doc.get("DCGM Diagnostic") if isinstance(doc, dict) else None
    if not isinstance(root, dict):
        raise ValueError("no 'DCGM GPU Diagnostic' or 'DCGM Diagnostic' object")
    meta = root.get("metadata") if isinstance(root.get("metadata"), dict) else {}
    diag.dcgm_version = _str(meta.get("DCGM Version") or meta.get("version") or doc.get("version"))
    diag.driver_version = _str(meta.get("Driver Version Detected") or root.get("Driver Version Detected"))
    for cat in _list(root.get("test_categories")):
        category = _str(cat.get("category"))
        for t in _list(cat.get("tests")):
            name = _str(t.get("name"))
            if not name:
                continue
            rows = _list(t.get("results"))
            for r in rows:
                status = _STATUS.get(str(r.get("status", "")).strip().lower())
                if status is None:
                    continue
                group = str(r.get("entity_group", "GPU"))
                if group.upper() not in ("GPU", ""):
                    continue
                gpu = r.get("gpu_id", r.get("entity_id"))
                diag.results.append(
                    DcgmResult(
                        test=name,
                        category=category,
                        gpu=int(gpu) if str(gpu).strip().isdigit() else None,
                        status=status,
                        messages=_messages(r)[:MAX_MESSAGES],
                    )
                )
            summary = t.get("test_summary") if isinstance(t.get("test_summary"), dict) else None
            status = _STATUS.get(str((summary or {}).get("status", "")).strip().lower())
            if status and not rows:
                diag.results.append(DcgmResult(test=name, category=category, status=status))
    return diag


def _messages(result: dict[str, Any]) -> list[str]:
    out = []
    for key in ("warnings", "info", "errors"):
        for item in result.get(key) or []:
            if isinstance(item, dict):
                item = item.get("warning") or item.get("message") or item.get("msg") or ""
            if str(item).strip():
                out.append(str(item).strip()[:600])
    return out


def _list(value: object) -> list[dict]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _str(value: object) -> str | None:
    return str(value).strip() or None if value is not None else None
