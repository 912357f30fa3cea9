"""`--lang zh-CN` for `gpuwise probe` and `gpuwise catalog`: Chinese throughout on recorded data, the same
numbers in both languages, 80 columns, and the JSON of the catalog unchanged.

"Chinese throughout" is tests/report/zh_check.english_runs: no run of 4+ English words in what gpuwise
wrote. What probe quotes is exempt: the machine's own words (every line a command printed, every string in
a JSON a collector wrote, such as NVML's error or python-env's reasons, and the fact values), the host name
and the capture's path. What catalog quotes is exempt too: a row's notes, source, names and match patterns.
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.cells import cell_len

from gpuwise import i18n
from gpuwise.capture.host import CaptureHost
from gpuwise.capture.sources import ALL_COMMAND_IDS
from gpuwise.facts.collect import collect_facts
from gpuwise.report.document import Code, Document, KeyValues, Paragraph, Table
from gpuwise.report.formats import render
from gpuwise.report.views.probe import probe_view
from tests.advise.capture_kit import make_capture
from tests.advise.test_doctor_golden import _real_gpu_outputs
from tests.conftest import CAPTURES, capture_dirs
from tests.report.zh_check import english_runs

# outputs that drive the parsers' error paths: each reason probe shows must be Chinese too
BROKEN = {
    "nvml": '{"format": "gpuwise-nvml/0"}',
    "nvidia-smi-q-x": "<?xml version='1.0'?><nvidia_smi_log><attached_gpus>2</attached_gpus><gpu id='0",
    "nvidia-smi-q": "==============NVSMI LOG==============\nAttached GPUs : 1\n",
    "nvidia-smi-topo-m": "no matrix here",
    "nvidia-smi-nvlink-s": "",
    "lscpu": "garbage",
    "python-env": "[1, 2]",
    "ip-j-addr": "null",
}


def _captures(tmp: Path) -> list[tuple[str, Path]]:
    """Every recorded capture, each real GPU recording as a capture, and one with broken outputs."""
    out = [(c.name, c) for c in capture_dirs()]
    for i, (cid, path) in enumerate(_real_gpu_outputs()):
        text = path.read_text(encoding="utf-8", errors="replace")
        out.append((path.name, make_capture(tmp / f"r{i}", {cid: text}, hostname=path.stem)))
    out.append(("broken", make_capture(tmp / "broken", BROKEN, rcs={"nvidia-smi-nvlink-s": 3})))
    return out


def _strings(node) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [s for v in node.values() for s in _strings(v)]
    if isinstance(node, list):
        return [s for v in node for s in _strings(v)]
    return []


def _machine_words(capture: Path, facts) -> list[str]:
    """What probe quotes: the commands' own output (lines, and the strings of a JSON a collector wrote),
    the fact values (not gpuwise's reasons and notes), the host name and the capture's path."""
    host = CaptureHost(capture)
    out = [str(capture), facts.meta.source, facts.meta.hostname or ""]
    for cid in ALL_COMMAND_IDS:
        r = host.run(cid)
        if r is None:
            continue
        out += [line.strip() for line in (r.stdout + "\n" + r.stderr).splitlines()]
        with contextlib.suppress(ValueError):
            out += _strings(json.loads(r.stdout))
    data = facts.to_json_dict()
    for part in data.values():
        if isinstance(part, dict):
            keep = {
                k: v for k, v in part.items() if k not in ("unknown", "environment_reason", "notes", "error")
            }
            out += _strings(keep)
    out += [g.name or "" for g in facts.gpus]
    return [q.strip() for q in out if len(q.strip()) > 3]


def _with_titles(doc: Document) -> Document:
    """The document plus its table and key-value titles and captions as paragraphs (zh_check reads rows)."""
    extra = []
    for b in doc.blocks:
        if isinstance(b, (Table, KeyValues)) and b.title:
            extra.append(Paragraph(b.title))
        if isinstance(b, Table) and b.caption:
            extra.append(Paragraph(b.caption))
    return Document(doc.title, [Paragraph(doc.title), *doc.blocks, *extra], doc.data)


def _probe_runs(capture: Path) -> list[str]:
    facts = collect_facts(CaptureHost(capture))
    return english_runs(_with_titles(probe_view(facts)), _machine_words(capture, facts), skip_keys=())


def test_probe_in_chinese_leaves_no_english_sentence(zh, tmp_path):
    from gpuwise.capture.writer import write_capture

    write_capture(tmp_path / "this-machine.tar.gz")  # the tools this test machine lacks: their reasons too
    captures = [*_captures(tmp_path), ("this machine", tmp_path / "this-machine.tar.gz")]
    assert len(captures) >= 3
    left = {name: runs for name, capture in captures if (runs := _probe_runs(capture))}
    assert not left, f"untranslated text (wrap it in _() and translate it): {left}"


def test_the_probe_check_catches_english(tmp_path):
    """The check above can fail: the same reports in English are full of English runs."""
    for name, capture in _captures(tmp_path):
        if name in ("h200-1gpu-kvm-vm", "broken"):
            assert len(_probe_runs(capture)) > 5, name


def _text(capture: Path, lang: str, width: int = 100) -> str:
    i18n.set_language(lang)
    facts = collect_facts(CaptureHost(capture))
    facts.meta.source = capture.name
    return render(probe_view(facts), "text", width=width)


NUMBER = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?")


def test_probe_numbers_are_the_same_in_both_languages(zh, tmp_path):
    for name, capture in _captures(tmp_path):
        english, chinese = _text(capture, "en"), _text(capture, "zh-CN")
        assert sorted(NUMBER.findall(english)) == sorted(NUMBER.findall(chinese)), name


def test_probe_json_keys_and_values_do_not_change_with_the_language(zh):
    capture = CAPTURES / "h200-1gpu-kvm-vm"
    chinese = collect_facts(CaptureHost(capture)).to_json_dict()
    i18n.set_language("en")
    english = collect_facts(CaptureHost(capture)).to_json_dict()

    def without_texts(node):  # reasons are for people: their `text` follows the language, `kind` does not
        if isinstance(node, dict):
            return {k: without_texts(v) for k, v in node.items() if k not in ("text", "environment_reason")}
        if isinstance(node, list):
            return [without_texts(v) for v in node]
        return node

    assert without_texts(chinese) == without_texts(english)
    assert chinese == english  # reasons too: computed in English, worded only when shown


@pytest.mark.parametrize("width", [80, 60])
def test_chinese_probe_fits_the_width(zh, tmp_path, width):
    for name, capture in _captures(tmp_path):
        facts = collect_facts(CaptureHost(capture))
        doc = probe_view(facts)
        out = render(doc, "text", width=width)
        code = {line for b in doc.blocks if isinstance(b, Code) for line in b.lines}
        for line in out.splitlines():
            if not any(c in line for c in code):
                assert cell_len(line) <= width, (name, line)
        assert "…" not in out, name


def _catalog_docs() -> list[tuple[Document, list[str]]]:
    """Every catalog list and one `show` of each kind, with what each quotes."""
    from gpuwise.catalog import fabrics, gpu_memory, gpus, offers
    from gpuwise.report.views import catalog as view

    specs, links, rows = gpus.load_gpu_specs(), fabrics.load_fabrics(), offers.load_offers([])
    quoted = [x for s in specs for x in (s.source, s.notes or "", s.name, *s.patterns)]
    quoted += [r.source for r in gpu_memory.reported().values()]  # citations, as the specs' sources
    quoted += [x for f in links for x in (f.source, f.notes or "", f.kind)]
    quoted += [
        str(x or "") for o in rows for x in (o.notes, o.price_source, o.file, o.instance_type, o.status)
    ]
    tencent = next(o for o in rows if o.provider == "tencent")
    docs = [
        view.gpus_view(specs),
        view.fabrics_view(links),
        view.offers_view(rows),
        view.offers_view([]),
        view.gpu_view(gpus.match_gpu("NVIDIA H100 80GB HBM3", warn=False), "NVIDIA H100 80GB HBM3"),
        view.offer_view(offers.find_offer(tencent.instance_type, rows), tencent.instance_type),
        view.fabric_view(links[0], links[0].key),
    ]
    return [(d, quoted) for d in docs]


def test_catalog_in_chinese_leaves_no_english_sentence(zh):
    left = {
        doc.title: runs
        for doc, quoted in _catalog_docs()
        if (runs := english_runs(_with_titles(doc), quoted, skip_keys=()))
    }
    assert not left, f"untranslated text (wrap it in _() and translate it): {left}"


def _english_labels() -> list[str]:
    """English words left in what names things (titles, column headers, keys): the catalog's labels are
    short, so they are checked word by word (units, dtypes and product names are upper case or exempt)."""
    words = []
    for doc, _quoted in _catalog_docs():
        labels = [doc.title]
        for b in doc.blocks:
            if isinstance(b, Table):
                labels += [c.header for c in b.columns] + [b.title or "", b.caption or ""]
            if isinstance(b, KeyValues):
                labels += [k for k, _v in b.rows]
        for label in labels:
            words += re.findall(r"(?<![`\w-])[a-z][a-z\-]{2,}\b", re.sub(r"`[^`]*`", "", label))
    return [w for w in words if w not in ("memcpy",)]


def test_catalog_labels_in_chinese_leave_no_english_word(zh):
    assert _english_labels() == []


def test_the_catalog_checks_catch_english():
    runs = [
        r for doc, quoted in _catalog_docs() for r in english_runs(_with_titles(doc), quoted, skip_keys=())
    ]
    assert runs and len(_english_labels()) > 30, runs


def test_catalog_numbers_and_json_are_the_same_in_both_languages(zh):
    chinese = _catalog_docs()
    i18n.set_language("en")
    english = _catalog_docs()
    for (en, _q), (zh_, _q2) in zip(english, chinese, strict=True):
        assert en.data == zh_.data, en.title  # the JSON document does not depend on the language
        en_text, zh_text = render(en, "text", width=100), render(zh_, "text", width=100)
        assert sorted(NUMBER.findall(en_text)) == sorted(NUMBER.findall(zh_text)), en.title
    i18n.set_language("zh-CN")
    for doc, _quoted in chinese:
        out = render(doc, "text", width=80)
        assert "…" not in out
        assert max(cell_len(line) for line in out.splitlines()) <= 80, doc.title


def _cli(*args: str) -> subprocess.CompletedProcess:
    import os

    env = {k: v for k, v in os.environ.items() if k not in ("LANG", "LC_ALL", "LC_MESSAGES", "LANGUAGE")}
    return subprocess.run(
        [sys.executable, "-m", "gpuwise.cli", *args], capture_output=True, text=True, env=env, timeout=300
    )


def test_cli_probe_and_catalog_speak_chinese_with_the_same_exit_codes():
    capture = str(CAPTURES / "cpu-vm-kvm-docker")
    for args, chinese_word in (
        (("probe", "--from", capture), "平台与隔离"),
        (("catalog", "gpus"), "稠密峰值"),
        (("catalog", "show", "nope-gpu"), "解决方法："),
    ):
        english, chinese = _cli(*args), _cli("--lang", "zh-CN", *args)
        assert english.returncode == chinese.returncode, args
        assert chinese_word in chinese.stdout + chinese.stderr, args
        assert chinese_word not in english.stdout + english.stderr, args
        assert "Traceback" not in chinese.stderr
