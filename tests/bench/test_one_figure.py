"""One statistic per result: every benchmark's headline is the median of its own timed samples (so
inside their [min, max]), and the bench text, JSON and HTML, `history show` and `compare` all show
that one figure, rounded the same way (units.number).

Checked on results run here (every benchmark, at the smallest settings) and on the recorded H200
`bench --quick` results (tests/captures, tests/plan/data).
"""

from __future__ import annotations

import html as html_lib
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuwise import units
from gpuwise.bench import collective, compute, dataloader, memory, storage, training
from gpuwise.bench.context import BenchOptions, build_context
from gpuwise.bench.registry import benchmarks
from gpuwise.bench.runner import judge, run_benchmarks
from gpuwise.cli import app
from gpuwise.commands.history import record_run
from gpuwise.documents.bench import BenchReport, Measurement, Stats
from gpuwise.report.formats import render
from gpuwise.report.views.bench import bench_view

TESTS = Path(__file__).resolve().parents[1]
RECORDED_H200 = [
    TESTS / "captures" / "h200-1gpu-kvm-vm.bench-quick.json",
    TESTS / "plan" / "data" / "bench_h200_quick.json",
]
MiB = 1 << 20


def _tiny_specs(data_dir: str) -> dict:
    """The quickest settings of each benchmark that still time several samples (even counts on purpose:
    there the median of rates and the rate of the median time differ)."""
    return {
        "compute": compute.Spec(
            dtypes=("fp32", "bf16"), shapes=((64, 64, 64), (128, 128, 128)), warmup=1, repeats=4,
            target_sample_s=0.005,
        ),
        "memory": memory.Spec(host_bytes=4 * MiB, warmup=1, repeats=4, target_sample_s=0.005),
        "collective": collective.Spec(
            sizes=(4096, 256 * 1024), backend="gloo", warmup=1, repeats=4, target_bytes=1 * MiB, timeout_s=20
        ),
        "storage": storage.Spec(data_dir, file_bytes=8 * MiB, runtime_s=1, repeats=2, jobs=storage.JOBS[:2]),
        "dataloader": dataloader.Spec(data_dir, samples=16, image_hw=8, batch_size=4, workers=(0, 1), epochs=2),
        "training": training.Spec(
            gpt=training.GPTConfig(vocab=64, seq_len=8, d_model=16, n_layers=1, n_heads=2), gpt_batch=2,
            cnn=training.CNNConfig(image_hw=8, width=4), cnn_batch=2, warmup=1, repeats=4,
            target_sample_s=0.005,
        ),
    }  # fmt: skip


@pytest.fixture(scope="module")
def run_here(tmp_path_factory) -> BenchReport:
    """Every registered benchmark, run here through the runner (GPU-only ones skip on a CPU machine)."""
    data = tmp_path_factory.mktemp("data")
    ctx = build_context(BenchOptions(data_dir=str(data)))
    tiny = _tiny_specs(str(data))
    entries = list(benchmarks())
    with pytest.MonkeyPatch.context() as mp:
        for entry in entries:
            if entry.name in tiny:
                mp.setattr(entry.load(), "make_spec", lambda _ctx, spec=tiny[entry.name]: spec)
        return run_benchmarks(ctx, entries, isolate=False)


def _measured(report: BenchReport) -> list[Measurement]:
    return [m for m in report.results if m.value is not None and m.status in ("ok", "invalid")]


def _assert_headlines_are_their_stats(report: BenchReport) -> None:
    for m in _measured(report):
        assert m.stats is not None, f"{m.name}: a value without the samples behind it"
        assert m.stats.statistic == "median" and m.value == m.stats.headline(), m.name
        assert m.stats.min <= m.value <= m.stats.max, (m.name, m.value, m.stats)


def _row(lines: list[str], name: str) -> str:
    word = re.compile(rf"(?<![\w]){re.escape(name)}(?![\w])")
    found = [line for line in lines if word.search(line)]
    assert found, f"{name} not shown"
    return found[0]


def _md_cells(text: str, name: str) -> list[str]:
    return [c.strip() for c in _row(text.splitlines(), name).strip().strip("|").split("|")]


def _assert_one_figure_everywhere(report: BenchReport, tmp_path: Path) -> None:
    measured = _measured(report)
    figure = {m.name: units.number(m.value) for m in measured}
    doc = bench_view(report)

    text = render(doc, "text", width=400).splitlines()
    page = render(doc, "html")
    rows = [html_lib.unescape(re.sub(r"<[^>]+>", " ", tr)) for tr in re.findall(r"<tr>.*?</tr>", page, re.S)]
    as_json = {r["name"]: r for r in json.loads(render(doc, "json"))["results"]}
    for m in measured:
        shown = f"{figure[m.name]} {m.unit}"
        assert shown in _row(text, m.name), ("text", m.name, shown)
        assert shown in _row(rows, m.name), ("html", m.name, shown)
        assert as_json[m.name]["value"] == m.value and as_json[m.name]["stats"]["median"] == m.value

    saved = tmp_path / "bench.json"
    saved.write_text(report.model_dump_json(by_alias=True, indent=2))
    history = tmp_path / "history.db"
    record_run("bench", json.loads(saved.read_text()), history)
    cli = CliRunner()
    shown = cli.invoke(app, ["history", "show", "1", "--history", str(history), "--format", "md"])
    assert shown.exit_code == 0, shown.output
    compared = cli.invoke(app, ["compare", str(saved), str(saved), "--format", "md"])
    assert compared.exit_code == 0, compared.output
    for m in measured:
        if m.status != "ok":  # history and compare keep results that ran fine (status ok) only
            continue
        # history: | metric | median | min | max | unit | repeats |
        cells = _md_cells(shown.output, m.name)
        assert cells[1:4] == [figure[m.name], units.number(m.stats.min), units.number(m.stats.max)], cells
        # compare: | name | device | unit | A | B | ratio |
        cells = _md_cells(compared.output, m.name)
        assert cells[3:5] == [figure[m.name], figure[m.name]], cells


@pytest.mark.slow
def test_every_benchmark_run_here_reports_one_figure(run_here, tmp_path):
    assert {m.layer for m in run_here.results} >= {
        "compute", "memory", "collective", "storage", "dataloader", "training",
    }  # fmt: skip
    failed = [(m.name, m.reason) for m in run_here.results if m.status == "failed"]
    assert not failed
    collectives = [m for m in run_here.results if m.layer == "collective"]
    for m in collectives:  # the headline is the largest size's row, and says so
        largest = m.extra["table"][-1]
        assert m.stats.of == "256 KiB" and m.value == largest["busbw_gb_s"] and m.stats.repeats == 4
    _assert_headlines_are_their_stats(run_here)
    _assert_one_figure_everywhere(run_here, tmp_path)


@pytest.mark.parametrize("path", RECORDED_H200, ids=lambda p: p.name)
def test_recorded_h200_results_report_one_figure(path, tmp_path):
    report = BenchReport.model_validate_json(path.read_text())
    assert _measured(report) and report.environment.get("gpus")
    _assert_headlines_are_their_stats(report)
    _assert_one_figure_everywhere(report, tmp_path)


def test_a_headline_outside_its_own_samples_is_invalid():
    """The issue's allgather: value 0.3584 GB/s with samples from 0.4229 to 0.4891."""
    stats = Stats(median=0.4500, min=0.4229, max=0.4891, repeats=5)
    m = judge(Measurement(name="allgather_busbw", layer="collective", value=0.3584, unit="GB/s", stats=stats))
    assert m.status == "invalid" and "outside its own samples" in m.reason
    fine = judge(Measurement(name="allgather_busbw", layer="collective", unit="GB/s", stats=stats))
    assert (fine.status, fine.value) == ("ok", 0.45)  # the value is the samples' headline
