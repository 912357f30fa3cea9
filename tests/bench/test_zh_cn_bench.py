"""`--lang zh-CN` and the processes bench starts: a benchmark runs in a forkserver child and collectives in
rank processes. Their reasons and peak sources are English messages (the same under every --lang) that word
in the caller's language where they are shown: the child's come back pickled (a Msg keeps its id), the ranks'
as JSON (English), given their message back by the launcher."""

from __future__ import annotations

import pytest

from gpuwise import i18n
from gpuwise.bench.context import BenchContext, BenchOptions
from gpuwise.bench.registry import select
from gpuwise.bench.runner import judge, run_isolated
from gpuwise.documents.bench import Measurement
from tests.bench.test_bench_runner import fake


@pytest.fixture
def ctx(tmp_path) -> BenchContext:
    return BenchContext(BenchOptions(data_dir=str(tmp_path)), device="cpu")


def test_a_skip_in_the_child_process_words_in_the_callers_language(zh, ctx):
    [m] = run_isolated(ctx, select("gpu-gpu")[0])
    assert m.status == "skipped" and m.reason == "no CUDA GPU: peer copies need two"  # English data
    assert isinstance(m.reason, i18n.Msg) and i18n.word(m.reason) == "没有 CUDA GPU：点对点拷贝需要两块 GPU"
    i18n.set_language("en")
    [again] = run_isolated(ctx, select("gpu-gpu")[0])
    assert (
        again.model_dump() == m.model_dump()
        and i18n.word(again.reason) == "no CUDA GPU: peer copies need two"
    )


def test_a_crash_is_reported_in_chinese(zh, ctx):
    [m] = run_isolated(ctx, fake("crash"))
    assert m.status == "failed" and "before returning a result" in m.reason
    shown = i18n.word(m.reason)
    assert "在返回结果前崩溃" in shown and "SIG" in shown


def test_a_reading_above_the_peak_keeps_its_numbers_in_chinese(zh):
    m = judge(
        Measurement(name="x", layer="memory", value=101, unit="GB/s", peak=100, peak_source="catalog: H200")
    )
    assert m.status == "invalid" and m.reason.startswith("101% of peak")
    shown = i18n.word(m.reason)
    assert shown.startswith("占峰值 101%") and "100%" in shown and "catalog: H200" in shown


def test_collective_ranks_write_english_and_the_launcher_words_it(zh):
    from gpuwise.bench import collective
    from tests.bench.test_collective import SMALL

    rows = collective.launch(SMALL, deadline_s=120)
    peaks = {(r.get("peak_source") or {}).get("text") for r in rows}
    assert peaks == {"gloo on CPU: loopback/TCP has no physical link peak"}, peaks  # JSON: English
    ms = collective.with_peak_messages([Measurement.model_validate(r) for r in rows], SMALL.backend)
    assert {i18n.word(m.peak_source.text) for m in ms} == {"CPU 上的 gloo：回环/TCP 没有物理链路峰值"}
    assert [m.model_dump() for m in ms] == [Measurement.model_validate(r).model_dump() for r in rows]
