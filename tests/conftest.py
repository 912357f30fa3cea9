"""Shared test plumbing: real-fixture paths, golden files, and the gpu/root markers."""

from __future__ import annotations

import json
import os
import shutil
import signal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

TESTS = Path(__file__).parent
CAPTURES = TESTS / "captures"
GOLDEN = TESTS / "golden"
# Real outputs recorded by others live beside the project, never inside it (DESIGN.md #7).
REAL = Path(os.environ.get("GPUWISE_REAL_FIXTURES", TESTS.parent.parent / "shared" / "fixtures" / "real"))


# Hypothesis fails an example that takes over 200 ms (its default deadline) or generates slowly
# (HealthCheck.too_slow), and a loaded CI machine (2 cores, neighbours' CPU steal) does both: neither says
# anything about the code. A test's own @settings replaces only the options it names.
settings.register_profile("gpuwise", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("gpuwise")

# The tests run in the environment CI has (a clean VM, no terminal), whatever the developer's shell
# exports: Rich/Typer read the width and colour forcing, gpuwise its language from the locale variables,
# and the exporter its job labels from torchrun's and Slurm's. A test that needs one sets it itself.
_NOT_FROM_THE_SHELL = (
    "COLUMNS", "LINES", "TERMINAL_WIDTH", "FORCE_COLOR", "PY_COLORS", "CLICOLOR_FORCE", "NO_COLOR",
    "GITHUB_ACTIONS", "LC_ALL", "LC_MESSAGES", "LANGUAGE",
    "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "SLURMD_NODENAME", "SLURM_JOB_ID",
    "SLURM_PROCID", "SLURM_NODEID", "SLURM_NTASKS",
)  # fmt: skip
for _name in _NOT_FROM_THE_SHELL:
    os.environ.pop(_name, None)
os.environ["LANG"] = "C.UTF-8"


@pytest.fixture(scope="session", autouse=True)
def _empty_user_dirs(tmp_path_factory):
    """The developer's ~/.config, ~/.local/share and ~/.local/state (user offers, tune studies, history)
    are never read: each is an empty folder for the session, as on a clean CI machine."""
    with pytest.MonkeyPatch.context() as mp:
        for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
            mp.setenv(name, str(tmp_path_factory.mktemp(name.lower())))
        yield


def pytest_addoption(parser):
    parser.addoption(
        "--update-goldens", action="store_true", help="rewrite golden files instead of comparing"
    )


def pytest_collection_modifyitems(config, items):
    has_gpu = shutil.which("nvidia-smi") is not None and Path("/dev/nvidia0").exists()
    is_root = hasattr(os, "geteuid") and os.geteuid() == 0
    for item in items:
        if "gpu" in item.keywords and not has_gpu:
            item.add_marker(pytest.mark.skip(reason="needs an NVIDIA GPU and driver"))
        if "root" in item.keywords and not is_root:
            item.add_marker(pytest.mark.skip(reason="needs root (network namespaces / tc)"))


@pytest.fixture
def real() -> Path:
    """The shared real-fixtures folder; tests using it skip cleanly when it is absent."""
    if not REAL.is_dir():
        pytest.skip(f"real fixtures not present at {REAL}")
    return REAL


def real_files(subdir: str, pattern: str = "*") -> list[Path]:
    """For parametrizing: the real fixture files in `subdir` (empty when the folder is absent)."""
    d = REAL / subdir
    return sorted(p for p in d.glob(pattern) if p.is_file()) if d.is_dir() else []


def capture_dirs() -> list[Path]:
    return (
        sorted(p for p in CAPTURES.iterdir() if p.is_dir() or p.name.endswith(".tar.gz"))
        if CAPTURES.is_dir()
        else []
    )


@pytest.fixture
def golden(request):
    """golden(name, data): compare `data` with tests/golden/<name>, or rewrite it with --update-goldens."""

    def check(name: str, data) -> None:
        path = GOLDEN / name
        text = data if isinstance(data, str) else json.dumps(data, indent=2, sort_keys=True) + "\n"
        if request.config.getoption("--update-goldens"):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            return
        if not path.exists():
            pytest.fail(f"golden file {path} missing: run `pytest --update-goldens` and review the diff")
        assert text == path.read_text(), (
            f"{name} differs from golden; if intended, run pytest --update-goldens and review"
        )

    return check


@pytest.fixture(autouse=True)
def _history_in_tmp(tmp_path_factory, monkeypatch):
    """bench and doctor record their runs: in tests, into a throwaway database, never the user's."""
    monkeypatch.setenv("GPUWISE_HISTORY", str(tmp_path_factory.mktemp("gwhistory") / "history.db"))


@pytest.fixture(scope="session")
def slurm_cluster():
    """The real Slurm test cluster (tests/fleet/slurm_cluster.py), started once per test session and shared
    by the fleet and launch tests (its names are unique per run; one cluster spares the CPUs), torn down afterwards."""
    from tests.fleet.slurm_cluster import SlurmCluster, available

    reason = available()
    if reason:
        pytest.skip(reason)
    cluster = SlurmCluster(nodes=3)
    try:
        cluster.up()
        yield cluster
    finally:
        cluster.down()


@pytest.fixture
def zh():
    """The test runs with gpuwise speaking Simplified Chinese; English again afterwards."""
    from gpuwise import i18n

    i18n.set_language("zh-CN")
    yield
    i18n.set_language("en")


@pytest.fixture(autouse=True)
def _english_after_each_test():
    """gpuwise speaks English again after each test: one that switched to Chinese (set_language, or an
    in-process `--lang zh-CN` run) and failed or returned early does not change the next test's output,
    whatever order the tests run in."""
    yield
    from gpuwise import i18n

    if i18n.language() != i18n.DEFAULT:
        i18n.set_language(i18n.DEFAULT)


_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_PYTEST_DISPOSITIONS = {sig: signal.getsignal(sig) for sig in _STOP_SIGNALS}


@pytest.fixture(autouse=True)
def _stop_signals_as_pytest_had_them():
    """After each test, SIGINT/SIGTERM are handled as when pytest started: a test that calls gpuwise
    in-process (cli.main installs its handler) changes nothing for the next. One that leaves a signal
    ignored fails here, where it did it (or the first test of a module whose fixture did): every program
    a later test starts would inherit the ignored signal (exec keeps SIG_IGN) and outlive its kill."""
    yield
    ignored = [
        sig.name
        for sig, handler in _PYTEST_DISPOSITIONS.items()
        if signal.getsignal(sig) == signal.SIG_IGN != handler
    ]
    for sig, handler in _PYTEST_DISPOSITIONS.items():
        signal.signal(sig, handler)
    assert not ignored, f"the test (or its fixtures) left {', '.join(ignored)} ignored in the test process"
