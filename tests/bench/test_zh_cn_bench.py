"""`--lang zh-CN` reaches the processes bench starts: a benchmark runs in a forkserver child (which starts in
English) and collectives in rank processes, so the reasons and peak sources they write follow the language."""

from __future__ import annotations

import pytest

from gpuwise import i18n
from gpuwise.bench.context import BenchContext, BenchOptions
from gpuwise.bench.models import Measurement
from gpuwise.bench.registry import select
from gpuwise.bench.runner import judge, run_isolated
from tests.bench.test_bench_runner import fake


@pytest.fixture
def ctx(tmp_path) -> BenchContext:
    return BenchContext(BenchOptions(data_dir=str(tmp_path)), device="cpu")


def test_a_skip_in_the_child_process_speaks_the_callers_language(zh, ctx):
    [m] = run_isolated(ctx, select("gpu-gpu")[0])
    assert m.status == "skipped" and m.reason == "没有 CUDA GPU：点对点拷贝需要两块 GPU"
    i18n.set_language("en")
    [m] = run_isolated(ctx, select("gpu-gpu")[0])
    assert m.reason == "no CUDA GPU: peer copies need two"


def test_a_crash_is_reported_in_chinese(zh, ctx):
    [m] = run_isolated(ctx, fake("crash"))
    assert m.status == "failed" and "在返回结果前崩溃" in m.reason and "SIG" in m.reason


def test_a_reading_above_the_peak_keeps_its_numbers_in_chinese(zh):
    m = judge(
        Measurement(name="x", layer="memory", value=101, unit="GB/s", peak=100, peak_source="catalog: H200")
    )
    assert m.status == "invalid" and m.reason.startswith("占峰值 101%") and "100%" in m.reason
    assert "catalog: H200" in m.reason


def test_collective_ranks_speak_the_launchers_language(zh):
    from gpuwise.bench import collective
    from tests.bench.test_collective import SMALL

    rows = collective.launch(SMALL, deadline_s=120)
    peaks = {(r.get("peak_source") or {}).get("text") for r in rows}
    assert peaks == {"CPU 上的 gloo：回环/TCP 没有物理链路峰值"}, peaks
