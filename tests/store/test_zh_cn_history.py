"""`--lang zh-CN` for `gpuwise history list | show | trend`, the regression warning and the database errors,
on the recorded H200 bench run (and the same run 15% slower after a torch upgrade, as test_history.py
builds it): Chinese throughout, the same numbers, ids and fact changes, 80 columns."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.cells import cell_len

from gpuwise import i18n
from gpuwise.commands.history import record_run
from gpuwise.report.formats import render
from gpuwise.report.views.history import list_view, show_view, trend_view
from gpuwise.store import records
from gpuwise.store.history import History, HistoryError
from gpuwise.store.regress import find_regressions
from tests.report.zh_check import english_runs
from tests.store.test_history import _past, bench_doc, past_docs, scaled

SLOWER = "2026-11-30T09:00:00+00:00"


@pytest.fixture
def history(tmp_path) -> Path:
    path = tmp_path / "h.db"
    for doc in past_docs():
        record_run("bench", doc, path)
    record_run("bench", scaled(bench_doc(), 0.85, SLOWER, torch="2.12.0+cu130"), path)
    return path


def _docs(path: Path) -> list[tuple[str, object, list[str]]]:
    """(name, Document, what it quotes: the path, host ids, metric names, the recorded facts)."""
    with History(path) as db:
        runs = db.runs()
        run = db.get(runs[0].id)
        points = db.trend("matmul_bf16")
    # the path, host ids, run kinds (the commands' names), metric names
    quoted = [
        str(path),
        *(r.host for r in runs),
        *(r.kind for r in runs),
        *(m.name for r in runs for m in r.metrics),
    ]
    quoted += [f"{k}" for k in run.facts] + [str(v) for v in run.facts.values()]
    return [
        ("list", list_view(runs, str(path)), quoted),
        ("show", show_view(run), quoted),
        ("trend", trend_view("matmul_bf16", points, None), quoted),
        ("trend on a host", trend_view("matmul_bf16", points, runs[0].host), quoted),
        ("empty list", list_view([], str(path)), quoted),
    ]


def test_history_in_chinese_leaves_no_english_sentence(zh, history):
    left = {name: runs for name, doc, quoted in _docs(history) if (runs := english_runs(doc, quoted))}
    assert not left, f"untranslated text (wrap it in _() and translate it): {left}"


def test_the_english_check_catches_english(history):
    docs = {name: (doc, quoted) for name, doc, quoted in _docs(history)}
    assert english_runs(*docs["empty list"])


def _labels(doc) -> list[str]:
    """What the history views write themselves: titles, headings, paragraphs, keys and column headers."""
    from gpuwise.report.document import Chart, Heading, KeyValues, Paragraph, Table

    out = [doc.title]
    for b in doc.blocks:
        if isinstance(b, (Heading, Paragraph)):
            out.append(b.text)
        elif isinstance(b, KeyValues):
            out += [b.title or ""] + [k for k, _ in b.rows]
        elif isinstance(b, Table):
            out += [c.header for c in b.columns]
        elif isinstance(b, Chart):
            out += [b.title, b.x_label]
    return out


def test_history_labels_have_no_english_word(zh, history):
    """Stricter than the 4-word runs (the history's labels are short): no English word of three letters
    or more in any title, heading, key or column header, once the quoted names are taken out."""

    def words(docs) -> dict[str, list[str]]:
        out = {}
        for name, doc, quoted in docs:
            facts = {k for k, _ in doc.blocks[2].rows} if name == "show" else set()
            found = []
            for text in _labels(doc):
                if text in facts:
                    continue  # the recorded facts' own names
                for q in sorted(quoted, key=len, reverse=True):
                    text = text.replace(q, " ")
                found += [w for w in re.findall(r"[A-Za-z]{3,}", text) if w not in ("UTC", "GPU")]
            out[name] = found
        return out

    chinese = words(_docs(history))
    assert not any(chinese.values()), chinese
    i18n.set_language("en")
    english = words(_docs(history))
    assert all(english.values()), english  # the check can fail


def test_chinese_history_keeps_numbers_ids_and_fits_80_columns(zh, history):
    zh_docs = _docs(history)
    i18n.set_language("en")
    en_docs = _docs(history)
    i18n.set_language("zh-CN")
    for (name, zh_doc, _q), (_n, en_doc, _q2) in zip(zh_docs, en_docs, strict=True):
        zh_text, en_text = render(zh_doc, "text", width=80), render(en_doc, "text", width=80)
        assert zh_text != en_text, name
        assert set(re.findall(r"\d+(?:\.\d+)?", en_text)) == set(re.findall(r"\d+(?:\.\d+)?", zh_text)), name
        assert max(cell_len(line) for line in zh_text.splitlines()) <= 80, name
        assert "…" not in zh_text
        assert zh_doc.data == en_doc.data  # the JSON does not change with the language
    assert "matmul_bf16 的趋势" in render(zh_docs[2][1], "text", width=80)


def test_regression_sentence_in_chinese_keeps_the_numbers_and_the_changed_facts(zh, tmp_path):
    before = bench_doc()
    past = _past(tmp_path, *past_docs())
    after = scaled(before, 0.85, SLOWER, torch="2.12.0+cu130")
    found = {
        r.metric: r
        for r in find_regressions(records.metrics_of("bench", after), records.facts_of("bench", after), past)
    }
    sentence = found["matmul_bf16"].sentence()
    chinese = i18n.word(sentence)  # the sentence is an English message; worded where shown
    i18n.set_language("en")
    english = found["matmul_bf16"].sentence()
    assert sentence == english and i18n.word(english) == english
    assert chinese.startswith("matmul_bf16 自 2026-11-29 以来下降 15.0%（678.6 → 576.8 TFLOP/s")
    assert "；期间的变化：torch 2.11.0+cu130 → 2.12.0+cu130" in chinese
    assert english.startswith("matmul_bf16 down 15.0% since 2026-11-29")
    assert sorted(re.findall(r"\d+(?:\.\d+)?", chinese)) == sorted(re.findall(r"\d+(?:\.\d+)?", english))
    quoted = ("matmul_bf16", "torch 2.11.0+cu130 → 2.12.0+cu130", "TFLOP/s", "MAD")
    assert not _words(chinese, quoted) and _words(english, quoted)  # the check can fail
    latency = found["matmul_bf16"]
    latency.change = 0.2  # a latency that went up: the other sentence
    i18n.set_language("zh-CN")
    assert "以来上升 20.0%" in i18n.word(latency.sentence())


def _words(text: str, quoted) -> list[str]:
    """English words of three letters or more left once the quoted names are taken out."""
    for q in quoted:
        text = text.replace(q, " ")
    return re.findall(r"[A-Za-z]{3,}", text)


def test_recording_warns_about_a_regression_in_chinese(zh, tmp_path, capsys):
    path = tmp_path / "h.db"
    record_run("bench", bench_doc(), path)
    assert "历史记录不足" in capsys.readouterr().err
    for doc in past_docs()[1:]:
        record_run("bench", doc, path)
    record_run("bench", scaled(bench_doc(), 0.85, SLOWER), path)
    err = capsys.readouterr().err
    assert "已记为" in err and "性能回退：matmul_bf16 自 2026-11-29 以来下降 15.0%" in err
    assert "regression" not in err and "recorded as" not in err


def test_broken_database_error_in_chinese_keeps_the_fix_and_the_exit_code(zh, history):
    history.write_bytes(history.read_bytes()[:1000])
    for suffix in ("-wal", "-shm"):
        Path(str(history) + suffix).unlink(missing_ok=True)
    with pytest.raises(HistoryError) as err, History(history) as db:
        db.runs()
    text = i18n.word(err.value.text())  # as the CLI prints it
    assert f"历史数据库 {history} 无法使用" in text
    assert f"解决方法：把它移走（mv {history} {history}.broken；下次运行会新建一个）" in text
    env = {k: v for k, v in os.environ.items() if k not in ("LANG", "LC_ALL", "LC_MESSAGES", "LANGUAGE")}
    r = subprocess.run(
        [sys.executable, "-m", "gpuwise.cli", "--lang", "zh-CN", "history", "list", "--history", str(history)],
        capture_output=True, text=True, timeout=60, env=env,
    )  # fmt: skip
    assert r.returncode == 3 and "Traceback" not in r.stderr
    assert "解决方法：" in r.stderr and "To fix" not in r.stderr


def test_cli_history_commands_in_chinese(history):
    env = {k: v for k, v in os.environ.items() if k not in ("LANG", "LC_ALL", "LC_MESSAGES", "LANGUAGE")}

    def gpuwise(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "gpuwise.cli", "--lang", "zh-CN", *args, "--history", str(history)],
            capture_output=True, text=True, timeout=60, env=env,
        )  # fmt: skip

    listed = gpuwise("history", "list")
    assert listed.returncode == 0 and "已记录的运行" in listed.stdout and "Recorded runs" not in listed.stdout
    shown = gpuwise("history", "show", "4")
    assert shown.returncode == 0 and "运行记录 4：" in shown.stdout and "576.8" in shown.stdout
    missing = gpuwise("history", "trend", "matmul_bf1")
    assert missing.returncode == 3 and "你是不是想用 'matmul_bf16'" in missing.stderr
