"""The analytic tails of plan/serving/queueing.py against a seeded simulation of the scheduler they model
(continuous batching, prefill priority, Poisson arrivals), and their monotonic behaviour."""

from __future__ import annotations

import numpy as np
import pytest

from gpuwise.plan.serving.queueing import Arrivals, tails

OUT, PREFILL = 100, 0.02  # output tokens per request, seconds per prefill


def step(batch):
    return 0.010 + 0.0001 * np.asarray(batch, dtype=float)


def simulate(rps: float, requests: int = 4000, seed: int = 7, burst_cv2: float = 1.0):
    """Every iteration prefills all waiting requests (their first token) and decodes one token for each
    running sequence; returns per-request TTFT and TPOT = (finish - first token) / (tokens - 1)."""
    rng = np.random.default_rng(seed)
    if burst_cv2 == 1.0:
        gaps = rng.exponential(1.0 / rps, requests)
    else:  # gamma gaps with the same mean and squared coefficient of variation burst_cv2
        shape = 1.0 / burst_cv2
        gaps = rng.gamma(shape, 1.0 / (rps * shape), requests)
    arrive = np.cumsum(gaps)
    first = np.full(requests, np.nan)
    finish = np.full(requests, np.nan)
    left = np.zeros(requests, dtype=int)
    t, nxt, running = 0.0, 0, []
    while nxt < requests or running:
        if not running and nxt < requests and arrive[nxt] > t:
            t = arrive[nxt]
        new = []
        while nxt < requests and arrive[nxt] <= t:
            new.append(nxt)
            nxt += 1
        t += len(new) * PREFILL + (step(len(running)) if running else 0.0)
        for r in running:
            left[r] -= 1
        done = [r for r in running if left[r] == 0]
        for r in done:
            finish[r] = t
        running = [r for r in running if left[r] > 0]
        for r in new:
            first[r] = t
            left[r] = OUT - 1
        running += new
    warm = requests // 10  # leave out the start-up transient
    return (first - arrive)[warm:], ((finish - first) / (OUT - 1))[warm:]


# Measured here (seeded): Poisson p99s within 8-16% of the simulation at 50-90% load; with a burst factor
# of 2 the model under-predicts p99 TTFT by about 30% and p99 TPOT by 15-32% (docs/serving-model.md).
@pytest.mark.parametrize(
    "load, burst, tolerance", [(0.5, 1.0, 0.2), (0.8, 1.0, 0.2), (0.9, 1.0, 0.2), (0.8, 2.0, 0.35)]
)
def test_p99_tails_agree_with_a_simulated_continuous_batching_server(load, burst, tolerance):
    n = np.arange(1, 400, dtype=float)
    arrivals = Arrivals(cv2=burst, prefill_cv2=0.0, lifetime_variance=2 / np.e)
    model = tails(step, n, PREFILL, OUT, arrivals)
    saturation = 1.0 / PREFILL  # requests/s at which prefills alone fill the GPU
    i = int(np.searchsorted(model.rps, load * model.rps.max()))
    rps = float(model.rps[i])
    assert rps < saturation
    ttft, tpot = simulate(rps, burst_cv2=burst)
    for name, predicted, observed in (
        ("TTFT", model.ttft[0.99][i], np.percentile(ttft, 99)),
        ("TPOT", model.tpot[0.99][i], np.percentile(tpot, 99)),
        ("mean TPOT", model.tpot_mean[i], tpot.mean()),
    ):
        assert predicted == pytest.approx(observed, rel=tolerance), (
            f"{name} at {load:.0%} load, burst {burst}"
        )


def test_tails_grow_with_load_and_burstiness():
    n = np.arange(1, 300, dtype=float)
    poisson = tails(step, n, PREFILL, OUT, Arrivals())
    bursty = tails(step, n, PREFILL, OUT, Arrivals(cv2=4.0))
    assert np.all(np.diff(poisson.rps) > 0)
    for p in (0.95, 0.99):
        assert np.all(np.diff(poisson.ttft[p]) >= 0) and np.all(np.diff(poisson.tpot[p]) >= 0)
        assert np.all(bursty.ttft[p] >= poisson.ttft[p]) and np.all(bursty.tpot[p] >= poisson.tpot[p])
    assert np.all(poisson.ttft[0.99] >= poisson.ttft[0.95]) and np.all(
        poisson.tpot[0.99] > poisson.tpot[0.95]
    )
