"""The spec protocol: finding a spec, checking what it returns, and the loop on every reference spec."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gpuwise.errors import UserInputError
from gpuwise.workloads import loop
from gpuwise.workloads.reference import REFERENCE_SPECS, mlp_slow_data
from gpuwise.workloads.spec import SpecConfig, build, load_spec

sys.path.insert(0, str(Path(__file__).parents[1] / "tune"))


def test_unknown_workload_suggests_the_close_name():
    with pytest.raises(UserInputError, match="did you mean gpt-small") as err:
        load_spec("gpt-smal")
    assert "To fix" in str(err.value)


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("no_such_module_gw:spec", "cannot import"),
        ("specs:nothing", "has no function"),
        ("specs:not_a_spec", "not a TrainingSpec"),
    ],
)
def test_bad_user_specs_are_clear_errors(target, message):
    with pytest.raises(UserInputError, match=message):
        build(target, SpecConfig())


def _losses(target_fn, settings: loop.LoopSettings, steps: int = 3, batch: int = 8) -> list[float]:
    spec = target_fn(SpecConfig(batch_size=batch))
    out: list[float] = []
    loop.train(
        spec, settings, device="cpu", batch_size=batch, steps=steps, on_step=lambda r: out.append(r.loss)
    )
    return out


@pytest.mark.parametrize("name", sorted(REFERENCE_SPECS))
def test_every_reference_spec_trains_and_its_loss_is_finite(name):
    losses = _losses(REFERENCE_SPECS[name], loop.LoopSettings(), steps=2, batch=4)
    assert len(losses) == 2 and all(0 < x < 100 for x in losses)


def test_loader_workers_give_the_same_losses_as_the_main_process():
    """The 'numerics: none' claim for data-loading knobs, measured."""
    fast = lambda cfg: mlp_slow_data(cfg, read_latency_s=0.0)  # noqa: E731
    plain = _losses(fast, loop.LoopSettings())
    workers = _losses(fast, loop.LoopSettings(num_workers=2, prefetch_factor=4, persistent_workers=True))
    assert plain == workers


def test_checkpointing_keeps_the_losses_and_wraps_the_marked_blocks():
    info = {}
    spec = REFERENCE_SPECS["gpt-small"](SpecConfig(batch_size=4))
    out: list[float] = []
    info = loop.train(
        spec,
        loop.LoopSettings(checkpointing=True),
        device="cpu",
        batch_size=4,
        steps=2,
        on_step=lambda r: out.append(r.loss),
    )
    assert info["checkpointed_blocks"] == 2
    assert out == pytest.approx(
        _losses(REFERENCE_SPECS["gpt-small"], loop.LoopSettings(), steps=2, batch=4), rel=1e-5
    )


def test_accumulation_keeps_the_global_batch():
    """Two micro-batches of 4 give about the loss of one batch of 8 (same samples, same update)."""
    fast = lambda cfg: mlp_slow_data(cfg, read_latency_s=0.0)  # noqa: E731
    whole = _losses(fast, loop.LoopSettings(), steps=3)
    split = _losses(fast, loop.LoopSettings(accumulation=2), steps=3)
    assert split == pytest.approx(whole, rel=1e-4)


def test_the_readme_example_spec_trains(monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).parents[2]))
    losses = _losses(
        load_spec("examples.tune_spec:spec"), loop.LoopSettings(checkpointing=True), steps=2, batch=8
    )
    assert len(losses) == 2 and all(x > 0 for x in losses)
