"""The runner: peak judging, and isolation of benchmarks that crash, hang, raise or skip."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from gpuwise import i18n
from gpuwise.bench import registry
from gpuwise.bench.context import BenchContext, BenchOptions
from gpuwise.bench.registry import BenchEntry, benchmarks, select
from gpuwise.bench.runner import judge, run_benchmarks, run_inline, run_isolated
from gpuwise.documents.bench import Measurement
from gpuwise.errors import UserInputError


def fake(behaviour: str, timeout_s: float = 30) -> BenchEntry:
    return BenchEntry(
        behaviour, "fake", f"tests.bench.fakebench.{behaviour}", behaviour, timeout_s, timeout_s
    )


@pytest.fixture
def ctx(tmp_path) -> BenchContext:
    return BenchContext(BenchOptions(data_dir=str(tmp_path)), device="cpu")


def test_judge_percentages_and_invalid_above_peak():
    m = judge(Measurement(name="x", layer="memory", value=80, unit="GB/s", peak=100, achievable_fraction=0.8))
    assert (m.status, m.percent_of_peak, m.percent_of_achievable) == ("ok", 80.0, 100.0)
    m = judge(
        Measurement(name="x", layer="memory", value=101, unit="GB/s", peak=100, peak_source="catalog: H200")
    )
    assert m.status == "invalid" and "101% of peak" in m.reason and "catalog: H200" in m.reason


def test_judge_nvls_allreduce_is_the_known_exception():
    m = Measurement(
        name="allreduce_busbw",
        layer="collective",
        value=480,
        unit="GB/s",
        peak=450,
        extra={"in_network_reduction": True},
    )
    m = judge(m)
    assert m.status == "ok" and m.percent_of_peak > 100 and "NVLS" in m.reason
    same_without = judge(
        Measurement(name="allgather_busbw", layer="collective", value=480, unit="GB/s", peak=450)
    )
    assert same_without.status == "invalid"


def test_judge_leaves_peakless_and_failed_results_alone():
    assert judge(Measurement(name="x", layer="l", value=5)).percent_of_peak is None
    assert judge(Measurement(name="x", layer="l", status="failed", value=500, peak=1)).status == "failed"


def test_isolated_ok_returns_measurements_and_progress(ctx):
    seen = []
    [m] = run_isolated(ctx, fake("ok"), progress=lambda name, text: seen.append((name, text)))
    assert (m.name, m.value, m.status) == ("fake_ok", 50.0, "ok")
    assert ("ok", "working") in seen
    assert "clocks_after" in m.extra


def test_crash_becomes_failed_with_the_signal(ctx):
    [m] = run_isolated(ctx, fake("crash"))
    assert m.status == "failed" and "SIGSEGV" in m.reason


def test_hang_times_out_and_kills_the_whole_group(ctx, tmp_path):
    start = time.monotonic()
    [m] = run_isolated(ctx, fake("hang", timeout_s=3))
    assert m.status == "failed" and "timed out after 3 s" in m.reason
    assert time.monotonic() - start < 20
    pids = [int(p) for p in (tmp_path / "pids").read_text().split()]
    time.sleep(0.5)
    for pid in pids:  # the benchmark and the process it started are both gone (or zombies awaiting reaping)
        assert not _running(pid), pid


def _group_members(pgid: int) -> list[str]:
    """The live (not zombie) processes in process group `pgid`, as "pid command"."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:  # it exited while we looked
            continue
        fields = text.rsplit(")", 1)[1].split()
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            found.append(f"{stat.parent.name} {text.split('(', 1)[1].rsplit(')', 1)[0]}")
    return found


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


def test_exception_and_oom_become_failed_with_reason(ctx):
    [m] = run_isolated(ctx, fake("raises"))
    assert m.status == "failed" and m.reason.startswith("out of memory") and "To fix" in m.reason


def test_skip_becomes_skipped(ctx):
    [m] = run_inline(ctx, fake("skips"))
    assert (m.status, m.reason, m.layer) == ("skipped", "no CUDA GPU: this needs one", "fake")


def test_a_missing_tool_is_a_skip_that_names_the_tool_and_stops_nothing(ctx):
    report = run_benchmarks(ctx, [fake("needs_a_tool"), fake("skips"), fake("ok")], stop_on_failure=True)
    tool, no_gpu, ok = report.results
    assert (tool.status, tool.missing_tool) == ("skipped", "gw-tool")
    assert tool.reason == "gw-tool is not installed. To fix: apt-get install gw-tool"
    assert (no_gpu.status, no_gpu.missing_tool) == ("skipped", None)  # nothing the user could install
    assert ok.status == "ok"


def test_isolated_worker_sends_its_reason_as_a_message_the_caller_words(ctx):
    """A worker is a forkserver child, which never saw --lang and needs not: its reason is an English
    message (pickled with its id) that words in the caller's language where it is shown."""
    i18n.set_language("zh-CN")
    try:
        [m] = run_isolated(ctx, fake("skips_translated"))
        assert (m.status, m.reason) == ("skipped", "error: x")  # the data: English
        assert isinstance(m.reason, i18n.Msg) and i18n.word(m.reason) == "错误：x"
    finally:
        i18n.set_language("en")
    [again] = run_isolated(ctx, fake("skips_translated"))
    assert again.reason == m.reason and i18n.word(again.reason) == "error: x"


def test_run_benchmarks_goes_on_after_a_failure_and_flags_invalid(ctx):
    report = run_benchmarks(ctx, [fake("crash"), fake("above_peak"), fake("ok")])
    assert [m.status for m in report.results] == ["failed", "invalid", "ok"]
    assert report.to_json_dict()["schema"] == "gpuwise-bench/1"


def test_select_by_name_layer_alias_and_did_you_mean():
    assert [e.name for e in select(None)] == [e.name for e in benchmarks()]
    assert [e.name for e in select("storage,compute")] == ["compute", "storage"]  # run order
    assert [e.name for e in select("p2p,fio")] == ["gpu-gpu", "storage"]
    assert [e.name for e in select("h2d,host_device,nccl,collectives,data,train,matmul,gpu_gpu")] == [
        "compute",
        "host-device",
        "gpu-gpu",
        "collective",
        "dataloader",
        "training",
    ]
    with pytest.raises(UserInputError, match="did you mean 'memory'|Did you mean 'memory'"):
        select("memroy")


def test_every_registered_module_has_the_plugin_interface():
    import dataclasses

    for entry in benchmarks():
        module = entry.load()
        assert callable(module.make_spec) and callable(module.run), entry.module
        assert dataclasses.is_dataclass(module.Spec) and module.Spec.__dataclass_params__.frozen, entry.module


def test_the_modules_declare_the_benchmarks_in_run_order():
    """Discovered from the bench package: the names --only took before, in the same run order."""
    assert [e.name for e in benchmarks()] == [
        "compute",
        "memory",
        "host-device",
        "gpu-gpu",
        "collective",
        "storage",
        "dataloader",
        "training",
    ]
    assert all(e.help and e.title and e.quick_timeout_s < e.full_timeout_s for e in benchmarks())
    assert registry.titles()["collective"] == "Collectives (busbw, nccl-tests definition)"


# A new benchmark as one module: tests/test_registry.py.


def test_scratch_is_removed_by_the_parent_whatever_the_benchmark_did(ctx, tmp_path):
    """A benchmark writes into its temp dir, starts a child that writes too, and SIGKILLs itself."""
    [m] = run_isolated(ctx, fake("litter"))
    assert m.status == "failed" and "SIGKILL" in m.reason
    scratch = (tmp_path / "scratch").read_text()
    assert scratch.startswith(str(tmp_path / "gpuwise-bench-litter-"))  # in --data-dir, made by the runner
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pgid", "scratch"]  # fio file, child's file: gone
    # and so are the processes it started (`sh -c ...; sleep 3600`), though the benchmark died first
    assert _group_members(int((tmp_path / "pgid").read_text())) == []


def test_timeout_sends_sigterm_first_so_the_benchmark_cleans_up(ctx, tmp_path):
    start = time.monotonic()
    [m] = run_isolated(ctx, fake("cleans_up", timeout_s=2))
    assert m.status == "failed" and "timed out" in m.reason
    assert (tmp_path / "cleaned").read_text() == "yes"  # its `finally` ran: SIGTERM came before SIGKILL
    assert time.monotonic() - start < 15


def test_stop_on_failure_lists_the_rest_as_not_run(ctx):
    report = run_benchmarks(ctx, [fake("raises"), fake("ok")], stop_on_failure=True)
    assert [(m.name, m.status) for m in report.results] == [("raises", "failed"), ("ok", "skipped")]
    assert "raises failed first" in report.results[1].reason and "--keep-going" in report.results[1].reason
    report = run_benchmarks(ctx, [fake("raises"), fake("ok")], stop_on_failure=False)
    assert [m.status for m in report.results] == ["failed", "ok"]
