"""`--lang zh-CN` on a real tune study: the report is Chinese throughout, keeps every number, knob and
command, and fits 80 columns.

The study is measured once (specs:fast_mlp, a baseline, one probe and the baseline again: about half a
minute here) and summarized in each language from its SQLite storage: a study keeps its reasons in English
with their messages (trial.because), so the same measurement reads the same in both languages.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rich.cells import cell_len

from gpuwise import i18n
from gpuwise.report.document import Code, Table, cell_text
from gpuwise.report.formats import render
from gpuwise.report.views.tune import view
from gpuwise.tune.model import TrialRecord
from tests.report.zh_check import english_runs, written_texts
from tests.tune.test_views import _tune_result

NUMBER = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?")


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """One real study, measured in English; `summarize()` reads it back in the active language."""
    from gpuwise.tune.run import tune
    from gpuwise.tune.search import TuneOptions

    storage = tmp_path_factory.mktemp("gwzh-tune") / "tune.sqlite3"
    opts = TuneOptions(
        target="tests.tune.specs:fast_mlp",  # the trials import it from the repository root (the cwd)
        batch_size=8,
        warmup=1,
        steps=5,
        trials=2,
        study="zh",
        storage=storage,
        env={"PYTHONPATH": str(Path(__file__).parents[2])},
    )
    i18n.set_language("en")
    english = tune(opts)
    ran = [t.status for t in english.trials if t.status != "skipped"]  # queued probes the budget left
    assert set(ran) <= {"ok", "unreliable"} and ran.count("ok") >= 2, english.trials

    def summarize():
        again = tune(opts)  # the study is complete: nothing runs, the result is read back from storage
        assert [t.number for t in again.trials] == [t.number for t in english.trials]
        return again

    return english, summarize


def _quoted(result) -> list[str]:
    """What the report quotes: the user's spec and study names, the file, the documentation URLs, the
    exception text of a trial that raised (its reason has no message to reword)."""
    out = [result.workload, result.study, result.storage, *result.sources.values()]
    return out + [t.reason for t in result.trials if t.reason and t.failure == "error"]


def _failed_and_short(result):
    """The real result plus what a hard trial leaves: an out-of-memory kill, a pruned trial, a
    timeout, and sharding offered because memory ran short, each reason worded as the study keeps it."""
    from gpuwise.tune.search import memory_short
    from gpuwise.tune.summary import reworded
    from gpuwise.tune.trial import TrialOutcome, because, typed

    kind, oom = typed(None, -9, "")
    pruned = because("slower than the median of earlier trials at this step")
    timeout = because("no result within {seconds} s (killed)", seconds="300")
    extra = [
        TrialRecord(number=90, role="probe", changes={"num_workers": 8}, status="failed", failure=kind),
        TrialRecord(number=91, role="search", changes={"compile": "default"}, status="pruned"),
        TrialRecord(number=92, role="search", changes={"compile": "max-autotune"}, status="failed"),
    ]
    for record, why in zip(extra, (oom, pruned, timeout), strict=True):
        record.reason = reworded(why["reason"], why["reason_msg"])
    extra[2].failure = "timeout"
    short = memory_short(TrialOutcome("failed", failure="oom"), 90, 0.85)
    return result.model_copy(
        update={
            "trials": [*result.trials, *extra],
            "memory_short": reworded(short["reason"], short["reason_msg"]),
        }
    )


def test_tune_report_in_chinese_leaves_no_english_sentence(zh, study):
    _english, summarize = study
    chinese = _failed_and_short(summarize())
    runs = english_runs(view(chinese), _quoted(chinese))
    assert not runs, f"untranslated text (wrap it in _() and translate it): {runs}"
    verdict = i18n.word(chinese.verdict)  # the result keeps English; the view words it
    assert "没有任何设置" in verdict or "是基线的" in verdict, verdict


def test_the_english_check_catches_english_in_the_tune_report(study):
    english, _summarize = study
    result = _failed_and_short(english)
    assert len(english_runs(view(result), _quoted(result))) > 10


def test_tune_numbers_knobs_and_code_are_the_same_in_both_languages(zh, study):
    english, summarize = study
    chinese = summarize()
    i18n.set_language("en")
    en_text = render(view(english), "text", width=100)
    i18n.set_language("zh-CN")
    zh_text = render(view(chinese), "text", width=100)
    # the JSON keeps its keys and enumerations; the numbers are the same measurement
    strip = ("verdict", "order_reason", "skipped", "held", "knobs", "trials")  # sentences
    en_json, zh_json = english.to_json_dict(), chinese.to_json_dict()
    assert {k: v for k, v in en_json.items() if k not in strip} == {
        k: v for k, v in zh_json.items() if k not in strip
    }
    unsaid = [{**t, "reason": None} for t in en_json["trials"]]
    assert unsaid == [{**t, "reason": None} for t in zh_json["trials"]]
    assert [(v["knob"], v["outcome"]) for v in en_json["knobs"]] == [
        (v["knob"], v["outcome"]) for v in zh_json["knobs"]
    ]
    assert [(s["knob"], s["value"]) for s in en_json["skipped"]] == [
        (s["knob"], s["value"]) for s in zh_json["skipped"]
    ]
    assert set(NUMBER.findall(en_text)) - set(NUMBER.findall(zh_text)) == set()
    for trial in chinese.trials:
        for knob, value in trial.changes.items():
            assert f"{knob}={value}" in zh_text
    for line in chinese.snippet_python + chinese.snippet_env + chinese.snippet_yaml:
        assert line in zh_text  # the paste-ready code stays as it is
    assert "基线" in zh_text and "baseline" not in zh_text.replace("baseline mean", "")


@pytest.mark.parametrize("width", [80, 60])
def test_chinese_tune_text_fits_the_width_and_nothing_is_cut(zh, study, width):
    _english, summarize = study
    for result in (_failed_and_short(summarize()), _tune_result()):
        doc = view(result)
        out = render(doc, "text", width=width)
        code = {line for b in doc.blocks if isinstance(b, Code) for line in b.lines}
        for line in out.splitlines():
            if not any(c in line for c in code):
                assert cell_len(line) <= width, line
        assert "…" not in out
        flat = re.sub(r"\s+", "", out)
        cells = {cell_text(c) for b in doc.blocks if isinstance(b, Table) for row in b.rows for c in row}
        for text in written_texts(doc):
            if not re.search(r"\w", text):
                continue  # "#": a narrow table stacks its rows under their numbers, without that header
            if text in cells:  # a cell may wrap within its column: its characters are all there
                assert set(re.sub(r"\s+", "", text)) <= set(flat), text
            else:
                assert re.sub(r"\s+", "", text) in flat, text  # every character, in order


def test_trial_failures_are_reworded_but_the_study_keeps_english(zh):
    from gpuwise.tune.summary import reworded
    from gpuwise.tune.trial import typed

    kind, why = typed(None, -9, "")
    assert kind == "oom" and why["reason"] == "out of memory: killed by SIGKILL (the kernel's OOM killer)"
    again = reworded(why["reason"], why["reason_msg"])
    assert again == why["reason"]  # the message again: English as data
    assert i18n.word(again) == "内存不足：被 SIGKILL 终止（内核的 OOM killer）"  # worded where shown
    kind, why = typed({"type": "ValueError", "message": "bad shape"}, 1, "")
    again = reworded(why["reason"], why.get("reason_msg"))
    assert kind == "error" and i18n.word(again) == "ValueError: bad shape"  # quoted: as it was


def test_the_snippet_keeps_its_code_and_words_its_comments_in_the_language(zh):
    from gpuwise.tune import snippet

    changes = {"precision": "bf16", "channels_last": True, "checkpointing": True, "accumulation": 2}
    lines = snippet.python_lines(changes, "cuda", 32)
    chinese = [i18n.word(line) for line in lines]  # as the view shows them
    i18n.set_language("en")
    english = snippet.python_lines(changes, "cuda", 32)
    assert lines == english  # the snippet itself is English under every --lang
    assert len(chinese) == len(english)
    for zh_line, en_line in zip(chinese, english, strict=True):
        code_zh, code_en = zh_line.split("#")[0], en_line.split("#")[0]
        assert code_zh == code_en  # the code itself never changes
        assert ("#" in zh_line) == ("#" in en_line)
    comments = [line for line in chinese if "#" in line]
    assert comments and all(re.search(r"[\u4e00-\u9fff]", line) for line in comments)
    assert any("torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)" in c for c in comments)
    assert any("2" in c and "16" in c and "32" in c for c in comments)  # the accumulation's numbers
