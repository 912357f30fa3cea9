"""`doctor --profile FILE`: a gpuwise-profile/1 document becomes findings through the rules engine, with the
measured evidence and the `gpuwise tune` command that addresses each; bad or foreign files are refused."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuwise.advise.engine import registry, run_rules
from gpuwise.advise.rules.profiles import TUNE_KNOBS, tune_command
from gpuwise.cli import app
from gpuwise.errors import UserInputError
from gpuwise.facts.models import Facts
from gpuwise.profile.model import LoadedProfile, ProfileResult, read_profiles
from gpuwise.tune.knobs import by_name

CAPTURE = Path(__file__).parents[1] / "captures" / "cpu-vm-kvm-docker"
PROFILE_RULES = [r for r in registry().values() if r.id.startswith("profile.")]


def _phases(**fractions) -> list[dict]:
    step_ms = 100.0
    names = ("data", "forward", "backward", "optimizer", "all-reduce", "other")
    return [
        {"name": n, "fraction": fractions.get(n, 0.0), "ms_per_step": fractions.get(n, 0.0) * step_ms}
        for n in names
    ]


def _profile(workload="mlp-slow-data", device="cpu", gpu=None, **fractions) -> dict:
    return {
        "schema": "gpuwise-profile/1",
        "workload": workload,
        "device": device,
        "batch_size": 32,
        "wait_steps": 1,
        "warmup_steps": 2,
        "active_steps": 5,
        "trace_path": "/tmp/trace.json",
        "step_ms": 100.0,
        "samples_per_s": 320.0,
        "phases": _phases(**fractions),
        "gpu_kernels": gpu or {},
    }


def _run(doc: dict, source="p.json"):
    loaded = LoadedProfile(source=source, result=ProfileResult.model_validate(doc))
    return run_rules(Facts(), None, "onprem", PROFILE_RULES, profiles=[loaded])


def test_a_data_bound_step_is_a_warning_with_the_numbers_and_the_tune_command():
    findings = {f.id: f for f in _run(_profile(data=0.42, forward=0.2))}
    f = findings["profile.data_loader_bound"]
    assert f.status == "warn" and f.layer == "framework" and "42%" in f.title
    values = {e.path: e.value for e in f.evidence}
    assert values["profile[p.json].phases.data.fraction"] == 0.42
    assert values["profile[p.json].phases.data.ms_per_step"] == pytest.approx(42.0)
    assert all(e.kind == "measurement" for e in f.evidence)
    assert f.recommendation.commands == [
        "gpuwise tune --workload mlp-slow-data --batch-size 32 --profile p.json "
        "--only num_workers,prefetch_factor,persistent_workers,pin_memory"
    ]
    assert "profile.exposed_communication" not in findings
    assert findings["profile.step_breakdown"].status == "info"


def test_exposed_communication_names_the_ddp_knobs_and_ranks():
    doc = _profile("my_pkg.train:spec")
    assert not [f for f in _run(doc) if f.status == "warn"]  # nothing exposed: no warning
    doc["phases"][4]["fraction"] = 0.3
    f = next(f for f in _run(doc) if f.id == "profile.exposed_communication")
    assert f.status == "warn"
    assert f.recommendation.commands[0].startswith("gpuwise tune my_pkg.train:spec --batch-size 32 --nproc N")
    assert "comm_hook" in f.recommendation.commands[0]


def test_gpu_profiles_find_launch_bound_kernels_and_pageable_copies():
    gpu = {
        "kernels_per_step": 900,
        "busy_fraction": 0.3,
        "median_kernel_us": 4.0,
        "short_kernel_fraction": 0.8,
        "memcpy_ms_per_step": {"Memcpy HtoD (Pageable -> Device)": 12.0},
    }
    findings = {f.id: f for f in _run(_profile(device="cuda", gpu=gpu))}
    launch = findings["profile.launch_bound"]
    assert launch.status == "warn" and "--only compile" in launch.recommendation.commands[0]
    assert {e.path.rsplit(".", 1)[1]: e.value for e in launch.evidence}["busy_fraction"] == 0.3
    h2d = findings["profile.host_to_device_stall"]
    assert h2d.status == "warn" and "pageable" in h2d.title  # 12 of 100 ms, above 5 %
    # the same numbers on a CPU profile mean nothing: kernels there are not GPU kernels
    assert not {"profile.launch_bound", "profile.host_to_device_stall"} & {
        f.id for f in _run(_profile(gpu=gpu))
    }


def test_without_profiles_the_rules_say_nothing():
    assert run_rules(Facts(), None, "onprem", PROFILE_RULES) == []


def test_tune_commands_name_real_knobs_and_quote_paths():
    knobs = by_name()
    assert all(k in knobs for names in TUNE_KNOBS.values() for k in names.split(","))
    loaded = LoadedProfile("my dir/p.json", ProfileResult.model_validate(_profile()))
    assert "--profile 'my dir/p.json'" in tune_command(loaded, "data-loader-bound")


def test_doctor_cli_reads_profiles(tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps(_profile(data=0.42)))
    result = CliRunner().invoke(
        app, ["doctor", "--from", str(CAPTURE), "--profile", str(path), "--format", "json"]
    )
    assert result.exit_code in (1, 2), result.output
    ids = {f["id"]: f for f in json.loads(result.stdout)["findings"]}
    assert ids["profile.data_loader_bound"]["status"] == "warn"
    assert str(path) in ids["profile.data_loader_bound"]["recommendation"]["commands"][0]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not json", "cannot read profile"),
        ('{"schema": "gpuwise-tune/1"}', "not a gpuwise-profile/1"),
        ('{"traceEvents": []}', "is a Chrome/Kineto trace"),
        ("[1, 2]", "not a gpuwise-profile/1"),
        (json.dumps({**_profile(), "step_ms": 0}), "invalid gpuwise-profile/1"),
        (json.dumps({**_profile(), "phases": "x"}), "invalid gpuwise-profile/1"),
    ],
)
def test_bad_or_foreign_profiles_are_refused_clearly(tmp_path, text, message):
    path = tmp_path / "p.json"
    path.write_text(text)
    with pytest.raises(UserInputError, match=message) as err:
        read_profiles([path])
    assert "To fix" in str(err.value)


def test_the_cli_refuses_a_bad_profile_with_exit_3_and_no_traceback(tmp_path):
    bad = tmp_path / "trace.json"
    bad.write_text('{"traceEvents": []}')
    cmd = [sys.executable, "-m", "gpuwise.cli", "doctor", "--from", str(CAPTURE), "--profile", str(bad)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 3 and "Chrome/Kineto trace" in r.stderr and "To fix" in r.stderr
    assert "Traceback" not in r.stderr and r.stdout == ""
    with pytest.raises(UserInputError, match="cannot read profile"):
        read_profiles([tmp_path / "missing.json"])


def test_profile_findings_in_chinese_keep_their_numbers_and_commands():
    """doctor --profile in zh-CN: the rule's wrapper, titles and the profile's own judgement are Chinese;
    the tune commands, the evidence and the ids are the English run's."""
    from gpuwise import i18n
    from tests.report.zh_check import ENGLISH_RUN

    gpu = {
        "kernels_per_step": 900,
        "busy_fraction": 0.3,
        "median_kernel_us": 4.0,
        "short_kernel_fraction": 0.8,
        "memcpy_ms_per_step": {"Memcpy HtoD (Pageable -> Device)": 12.0},
    }
    docs = [_profile(data=0.42, forward=0.2), _profile(device="cuda", gpu=gpu, **{"all-reduce": 0.3})]
    english = [f for doc in docs for f in _run(doc)]
    i18n.set_language("zh-CN")
    try:
        chinese = [f for doc in docs for f in _run(doc)]
        assert [f.title for f in chinese] == [f.title for f in english]  # English until shown
        chinese = [i18n.worded(f) for f in chinese]  # as the doctor view shows them
    finally:
        i18n.set_language("en")
    assert [f.id for f in chinese] == [f.id for f in english] and len(chinese) >= 5
    assert [f.recommendation.commands for f in chinese] == [f.recommendation.commands for f in english]
    assert [[e.value for e in f.evidence] for f in chinese] == [
        [e.value for e in f.evidence] for f in english
    ]
    written = [
        t.replace("https://ui.perfetto.dev", "") for f in chinese for t in (f.title, f.recommendation.text)
    ]
    assert not [run for t in written for run in ENGLISH_RUN.findall(t)], written
    assert [run for f in english for run in ENGLISH_RUN.findall(f.recommendation.text)]  # the check can fail
