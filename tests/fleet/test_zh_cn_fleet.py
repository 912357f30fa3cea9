"""`--lang zh-CN` for `gpuwise fleet report` and `fleet healthcheck`, on the fleets the fleet tests build from
real recordings (fleet_kit): the report is Chinese throughout, keeps its numbers, fits 80 columns, and its
JSON keeps the English keys and enum values the history identifies a fleet by. A Slurm drain reason stays
English whatever the run's language (every operator of the cluster reads it with `sinfo -R`)."""

from __future__ import annotations

import json
import re

import pytest
from rich.cells import cell_len

from gpuwise import i18n
from gpuwise.fleet.analyze import analyze_fleet
from gpuwise.report.document import Code, Table, cell_text
from gpuwise.report.formats import render
from gpuwise.report.views.fleet import fleet_view, health_view
from tests.conftest import CAPTURES
from tests.fleet.fleet_kit import build_fleet
from tests.report.zh_check import english_runs, written_texts

# what the report quotes rather than writes: the statistics reference it cites by its English title
CITATION = "Iglewicz and Hoaglin, NIST/SEMATECH e-Handbook 1.3.5.17"


def _both(build) -> tuple:
    """The same analysis in English and in Chinese."""
    try:
        i18n.set_language("en")
        english = build()
        i18n.set_language("zh-CN")
        return english, build()
    finally:
        i18n.set_language("en")


@pytest.fixture(scope="module")
def sixteen(tmp_path_factory):
    """16 nodes, four of them edited (fleet_kit.EDITS): drift, an outlier, findings by reach, stragglers."""
    from tests.conftest import REAL

    if not REAL.is_dir():
        pytest.skip(f"real fixtures not present at {REAL}")
    root = build_fleet(tmp_path_factory.mktemp("gwfl-zh16"))
    return _both(lambda: analyze_fleet(root))


@pytest.fixture(scope="module")
def partial(tmp_path_factory):
    """Four real nodes, one that never wrote its bench.json, one with a broken doctor.json, one with no
    capture, a pairwise link test with a slow node and a failed all-reduce: every problem the report lists."""
    from tests.conftest import REAL

    if not REAL.is_dir():
        pytest.skip(f"real fixtures not present at {REAL}")
    root = build_fleet(tmp_path_factory.mktemp("gwfl-zh4"), count=4)
    (root / "node02" / "bench.json").unlink()
    (root / "node02" / "bench.log").write_text(
        "Traceback (most recent call last):\nRuntimeError: CUDA error\n"
    )
    (root / "node04" / "doctor.json").write_text('{"schema": "other"}')
    (root / "node05").mkdir()
    rows = [
        {"src": s, "dst": d, "gb_s": 0.8 * v, "best_gb_s": v}
        for s, d, v in [
            ("node01", "node02", 11.0), ("node02", "node01", 11.5), ("node03", "node01", 11.2),
            ("node03", "node02", 11.4), ("node01", "node03", 0.02), ("node02", "node03", 0.02),
        ]
    ]  # fmt: skip
    (root / "links.json").write_text(json.dumps({"schema": "gpuwise-links/1", "pairs": rows}))
    bench = json.loads((CAPTURES / "h200-1gpu-kvm-vm.bench-quick.json").read_text())
    result = next(r for r in bench["results"] if r["status"] == "ok")
    bench["results"] = [dict(result, name="allreduce_busbw", layer="collective", status="failed",
                             value=None, reason="NCCL timeout")]  # fmt: skip
    (root / "collective.json").write_text(json.dumps(bench))
    return _both(lambda: analyze_fleet(root))


def _quoted(report) -> list[str]:
    """The directory and node names the report names, and the citation; the node's own problem texts
    are gpuwise's words (translated), the tail of a node's bench.log is the node's."""
    out = [report.directory, CITATION, "Traceback (most recent call last):", "RuntimeError: CUDA error"]
    return out + [n.node for n in report.nodes]


def _reports(sixteen, partial) -> list[tuple[str, object, object]]:
    return [("16 nodes", *sixteen), ("partial", *partial)]


def test_fleet_report_in_chinese_leaves_no_english_sentence(zh, sixteen, partial):
    for name, _en, chinese in _reports(sixteen, partial):
        runs = english_runs(fleet_view(chinese), _quoted(chinese))
        assert not runs, f"{name}: untranslated text (wrap it in _() and translate it): {runs}"


def test_the_english_check_catches_english(sixteen, partial):
    """The check above must be able to fail: the same reports in English are full of English runs."""
    for name, english, _zh in _reports(sixteen, partial):
        assert len(english_runs(fleet_view(english), _quoted(english))) > 5, name


def test_partial_fleet_lists_every_problem_in_chinese(partial):
    english, chinese = partial
    zh_json, en_json = chinese.to_json_dict(), english.to_json_dict()
    zh_json.pop("created_at"), en_json.pop("created_at")  # built a second apart
    assert zh_json == en_json  # the report is English under every --lang
    i18n.set_language("zh-CN")
    try:  # each problem words in Chinese where it is shown
        problems = {n.node: [i18n.word(p) for p in n.problems] for n in chinese.nodes}
        collective = [i18n.word(p) for p in chinese.collective.problems]
    finally:
        i18n.set_language("en")
    assert any("bench.log 最后一行：RuntimeError: CUDA error" in p for p in problems["node02"])
    assert any(p.startswith("doctor.json：不是 gpuwise-report/1 文档") for p in problems["node04"])
    assert problems["node05"] == ["没有 capture.tar.gz 或 capture/ 目录"]
    assert collective == ["allreduce_busbw：failed（NCCL timeout）"]
    assert [(o.node, o.metric) for o in chinese.outliers if o.scope == "link"] == [
        ("node03", "link_rx_best_pair")
    ]


def _numbers(text: str) -> set[str]:
    return set(re.findall(r"\d+(?:\.\d+)?", text))


def test_chinese_fleet_report_keeps_numbers_nodes_and_commands(sixteen, partial):
    for name, english, chinese in _reports(sixteen, partial):
        i18n.set_language("en")
        en_text = render(fleet_view(english), "text", width=100)
        i18n.set_language("zh-CN")
        try:
            zh_text = render(fleet_view(chinese), "text", width=100)
        finally:
            i18n.set_language("en")
        assert _numbers(en_text) - _numbers(zh_text) == set(), name
        assert chinese.odd_nodes() == english.odd_nodes()
        assert chinese.straggler.sbatch_line == english.straggler.sbatch_line
        if chinese.straggler.sbatch_line:
            assert chinese.straggler.sbatch_line in zh_text
        assert "Drift" in en_text and "配置漂移" in zh_text and "Drift" not in zh_text


def test_json_keys_enums_and_history_identity_do_not_change_with_the_language(sixteen):
    """Drift keys name the setting in the JSON and in the history's facts: they stay English, so a
    fleet reported in Chinese and one reported in English have the same facts digest."""
    from gpuwise.store.history import facts_digest
    from gpuwise.store.records import facts_of, metrics_of

    english, chinese = (r.to_json_dict() for r in sixteen)

    def shape(node):
        if isinstance(node, dict):
            return {k: shape(v) for k, v in node.items()}
        if isinstance(node, list):
            return [shape(v) for v in node]
        return type(node).__name__

    assert shape(chinese) == shape(english)
    for part in ("drift", "outliers", "distributions"):
        assert chinese[part] == english[part]
    assert [(g["id"], g["status"], g["nodes"]) for g in chinese["reach"]] == [
        (g["id"], g["status"], g["nodes"]) for g in english["reach"]
    ]
    assert "label" not in chinese["drift"][0]  # the shown label is not part of the JSON
    assert facts_digest(facts_of("fleet", chinese)) == facts_digest(facts_of("fleet", english))
    assert [vars(m) for m in metrics_of("fleet", chinese)] == [vars(m) for m in metrics_of("fleet", english)]
    # the text values are English in both (worded only where shown), so the whole JSON is identical
    chinese.pop("created_at"), english.pop("created_at")  # written a second apart
    assert chinese == english
    i18n.set_language("zh-CN")
    try:
        reasons = sixteen[1].straggler.reasons
        shown = {node: [i18n.word(r) for r in rs] for node, rs in reasons.items()}
    finally:
        i18n.set_language("en")
    assert shown != chinese["straggler"]["reasons"]


@pytest.mark.parametrize("width", [80, 60])
def test_chinese_fleet_text_fits_the_width_and_nothing_is_cut(zh, sixteen, partial, width):
    for name, _en, chinese in _reports(sixteen, partial):
        doc = fleet_view(chinese)
        out = render(doc, "text", width=width)
        code = {line for b in doc.blocks if isinstance(b, Code) for line in b.lines}
        urls = re.compile(r"https?://\S+")
        for line in out.splitlines():
            if not any(c in line for c in code) and not urls.search(line):
                assert cell_len(line) <= width, (name, line)
        assert "…" not in out
        flat = re.sub(r"\s+", "", out)
        cells = {cell for b in doc.blocks if isinstance(b, Table) for cell in _table_texts(b)}
        for text in written_texts(doc):
            squeezed = re.sub(r"\s+", "", text)
            if text in cells:  # a table cell wraps beside its neighbours: its characters, in order
                assert _in_order(squeezed, flat), (name, text)
            else:
                assert squeezed in flat, (name, text)  # every character, in a row


def _table_texts(table: Table) -> list[str]:
    return [c.header for c in table.columns] + [cell_text(c) for row in table.rows for c in row]


def _in_order(text: str, flat: str) -> bool:
    rest = iter(flat)
    return all(ch in rest for ch in text)


def test_healthcheck_in_chinese_leaves_no_english_sentence(zh, monkeypatch, tmp_path):
    from gpuwise.advise.expect import parse_expect
    from gpuwise.fleet import healthcheck as hc

    facts = _facts()
    result = hc.HealthResult(node="gwfl-node1", seconds=0.4)
    result.findings = hc.health_findings(facts, parse_expect("gpus=8,ib=4,pcie_width=16,driver=580.159.04"))
    monkeypatch.setenv("PATH", str(tmp_path))  # no scontrol: the drain fails with a message
    result.drain_error = hc.drain(result.node, result.findings)
    doc = health_view(result)
    assert not english_runs(doc, [result.node]), english_runs(doc, [result.node])
    text = render(doc, "text", width=80)
    assert "严重：2 项发现" in text and "GPU 数量应为 8，实际为 1" in text
    assert "未找到 scontrol（不是 Slurm 节点？）" in text
    assert max(cell_len(line) for line in text.splitlines()) <= 80
    i18n.set_language("en")
    result.findings = hc.health_findings(facts, parse_expect("gpus=8,ib=4"))
    result.drain_error = hc.drain(result.node, result.findings)
    assert english_runs(health_view(result), [result.node])  # the check can fail


def _facts():
    from gpuwise.capture.host import CaptureHost
    from gpuwise.facts.collect import collect_facts

    return collect_facts(CaptureHost(CAPTURES / "h200-1gpu-kvm-vm"))


def test_drain_reason_stays_english_in_a_chinese_run(zh):
    """`scontrol update ... reason=` is read by every operator (sinfo -R): English, from the same findings.
    Findings are English messages under every --lang (no English rerun): shown worded, drained as they are."""
    from gpuwise.advise.expect import parse_expect, short_reason
    from gpuwise.fleet import healthcheck as hc

    facts, expected = _facts(), parse_expect("gpus=8,ib=4")
    findings = hc.health_findings(facts, expected)
    assert i18n.language() == "zh-CN"
    reason = short_reason(findings)
    assert type(reason) is str and reason.startswith("gpuwise: expected GPUs 8, found 1; expected active")
    failed = [f for f in findings if f.status == "fail"]
    assert i18n.word(failed[0].title).startswith("GPU 数量应为 8")  # the same finding, as a view shows it
    i18n.set_language("en")
    assert hc.health_findings(facts, expected) == findings  # the findings do not depend on the language
    i18n.set_language("zh-CN")
    # a node that could not be read: the broken finding, English, worded where shown
    _, broken = hc.collect_with_deadline(lambda: 1 / 0, 2.0)
    assert broken.title == "could not read the node: division by zero"
    assert i18n.word(broken.title) == "无法读取节点信息：division by zero"
    assert short_reason([broken]) == "gpuwise: could not read the node: division by zero"


def test_cli_fleet_report_and_healthcheck_in_chinese(sixteen):
    """The real CLI with --lang zh-CN: headings in Chinese, the same exit codes as in English."""
    from tests.fleet.test_cli import gpuwise

    english, _zh = sixteen
    directory = english.directory
    zh = gpuwise("--lang", "zh-CN", "fleet", "report", directory, "--no-history")
    en = gpuwise("fleet", "report", directory, "--no-history")
    assert zh.exit_code == en.exit_code == 1
    assert "下一个作业的慢节点结论" in zh.stdout and "Straggler verdict" not in zh.stdout
    assert "#SBATCH --exclude=node03,node07,node11,node14" in zh.stdout
    capture = str(CAPTURES / "h200-1gpu-kvm-vm")
    r = gpuwise("--lang", "zh-CN", "fleet", "healthcheck", "--from", capture, "--expect", "gpu=8")
    assert r.exit_code == 3 and "你是不是想用 'gpus'" in r.output and "解决方法：" in r.output
