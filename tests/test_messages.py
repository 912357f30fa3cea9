"""Messages are computed in English and worded only where they are shown (report/, commands/, cli.py):
i18n.Msg keeps its id and arguments through models, pickling and composition; JSON never changes
with --lang; no layer below the edge calls gettext."""

from __future__ import annotations

import ast
import copy
import json
import os
import pickle
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from gpuwise import i18n
from gpuwise.i18n import Msg, cmsg, msg, word, worded
from gpuwise.textmodel import TextModel

SRC = Path(i18n.__file__).parent
EDGE = {"report", "commands"}
EDGE_FILES = {"i18n.py", "cli.py"}  # the definitions, and the CLI's own help and error lines
TRANSLATING = {"_", "C_", "gettext", "pgettext", "ngettext", "npgettext", "word", "worded"}


@pytest.fixture
def zh():
    i18n.set_language("zh-CN")
    try:
        yield
    finally:
        i18n.set_language("en")


def _translating_calls(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if name in TRANSLATING:
                out.append(f"{path.relative_to(SRC)}:{node.lineno}: {name}()")
    return out


def test_no_layer_below_report_and_commands_translates():
    calls = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC)
        if rel.parts[0] in EDGE or (len(rel.parts) == 1 and rel.name in EDGE_FILES):
            continue
        calls += _translating_calls(path)
    assert not calls, "translate at the edge (report/, commands/): use msg()/cmsg()\n" + "\n".join(calls)


def test_the_edge_does_translate():  # the scan above can fail: it finds calls where they belong
    assert _translating_calls(SRC / "commands" / "output.py")


def test_a_message_is_its_english_text_and_worded_later(zh):
    m = msg("wrote {path}", path="x.json")
    assert m == "wrote x.json" and isinstance(m, str) and json.dumps(m) == '"wrote x.json"'
    assert word(m) == "已写入 x.json"
    assert word(msg("wrote {path}").format(path="y")) == "已写入 y"  # .format keeps the message
    nested = msg("{said} — {note}", said=m, note=msg("wrote {path}", path="z"))
    assert word(nested) == "已写入 x.json — 已写入 z"
    assert word("plain text") == "plain text" and word(3) == 3


def test_concatenation_keeps_both_messages(zh):
    assert word(msg("wrote {path}", path="a") + "; " + msg("wrote {path}", path="b")) == "已写入 a; 已写入 b"
    assert word("> " + msg("wrote {path}", path="a")) == "> 已写入 a"


def test_context_messages(zh):
    m = cmsg("launch", "created")
    assert m == "created" and word(m) != "created"


def test_pickle_and_copy_keep_the_message(zh):
    m = msg("wrote {path}", path="p")
    for again in (pickle.loads(pickle.dumps(m)), copy.deepcopy(m), copy.copy(m)):
        assert isinstance(again, Msg) and word(again) == "已写入 p"


def test_a_translation_with_drifted_placeholders_falls_back_to_english(zh, monkeypatch):
    class Bad:
        def gettext(self, _id):
            return "{missing}"

    monkeypatch.setattr(i18n, "_active", Bad())
    assert word(msg("wrote {path}", path="p")) == "wrote p"


class _Inner(TextModel):
    text: str
    notes: list[str] = []


class _Outer(TextModel):
    inner: _Inner
    items: list[_Inner] = []
    by_key: dict[str, str] = {}
    maybe: str | None = None


@dataclass(frozen=True)
class _Frozen:
    title: str
    count: int


def test_models_keep_messages_and_worded_copies_them(zh):
    m = msg("wrote {path}", path="q")
    o = _Outer(inner=_Inner(text=m, notes=[m, "x"]), items=[{"text": m}], by_key={"k": m}, maybe=m)
    assert all(
        isinstance(v, Msg) for v in (o.inner.text, o.inner.notes[0], o.items[0].text, o.by_key["k"], o.maybe)
    )
    assert o.model_dump_json() == _Outer.model_validate_json(o.model_dump_json()).model_dump_json()
    assert "已写入" not in o.model_dump_json()  # JSON is English whatever the language
    w = worded(o)
    assert (w.inner.text, w.inner.notes, w.items[0].text, w.by_key["k"], w.maybe) == (
        "已写入 q", ["已写入 q", "x"], "已写入 q", "已写入 q", "已写入 q",
    )  # fmt: skip
    assert o.inner.text == "wrote q"  # the original is untouched
    f = worded(_Frozen(title=m, count=2))
    assert f == _Frozen("已写入 q", 2)
    plain = _Inner(text="nothing to word")
    assert worded(plain) is plain  # nothing copied when nothing changes


def test_errors_carry_messages_to_the_cli(zh):
    from gpuwise.errors import UserInputError

    err = UserInputError(msg("wrote {path}", path="e"), msg("wrote {path}", path="f"))
    assert str(err).startswith("wrote e\nTo fix: wrote f")
    assert word(err.text()).startswith("已写入 e\n")


@pytest.mark.parametrize("capture", ["h200-1gpu-kvm-vm", "cpu-vm-kvm-docker"])
def test_doctor_json_is_the_same_in_every_language(capture, tmp_path):
    path = Path(__file__).parent / "captures" / capture
    env = {**os.environ, "HOME": str(tmp_path)}  # its own run history
    outs = []
    for lang in ("en", "zh-CN"):
        r = subprocess.run(
            [sys.executable, "-m", "gpuwise.cli", "--lang", lang, "doctor", "--from", str(path), "--format", "json"],
            capture_output=True, text=True, timeout=120, env=env,
        )  # fmt: skip
        assert r.returncode in (0, 1, 2), r.stderr
        doc = json.loads(r.stdout)
        doc.pop("created_at")
        outs.append(doc)
    assert outs[0] == outs[1]
    assert outs[0]["findings"]
