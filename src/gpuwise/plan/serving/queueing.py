"""Tails of a continuous-batching LLM server under random arrivals: p95/p99 TTFT and TPOT at a load.

The server is the one vLLM and TensorRT-LLM (in-flight batching) run: every iteration decodes one token
for each running sequence, and a request that arrives is prefilled in the next iteration (prefills take
priority), then joins the running batch until its last token. For a replica with decode step s(n) at n
running sequences, full-prompt prefill time t_p, O output tokens per request and arrival rate λ:

* mean: Little's law gives the load that keeps n sequences running, λ(n) = n / (O·s(n) + n·t_p) (each
  output token waits for one decode step plus its share of the prefills interleaved with it);
* occupancy: the number of running sequences behaves like an infinite-server queue, Poisson with mean n
  for Poisson arrivals; burstier arrivals (squared coefficient of variation of the inter-arrival times
  c_a² > 1) widen it by the peakedness z = (1 + c_a²) / 2 (Whitt 1984, "Heavy-traffic approximations
  for service systems with blocking", AT&T Bell Labs Tech. J. 63(5), for exponential holding times);
* TPOT of one request is its mean time per token (MLPerf Inference: (latency − TTFT) / (tokens − 1)):
  s at the occupancy averaged over its lifetime, plus the prefills of the requests arriving meanwhile
  (on average n of them, λ × lifetime = n); its p-th percentile takes both at the same normal quantile;
* TTFT = the rest of the running iteration + the wait for the prefills queued ahead + its own prefill
  and the decode step it rides with; the wait is a GI/G/1 queue of prefills at utilisation λ·t_p, with
  Kingman's mean (c_a² + c_s²)/2 · ρ/(1 − ρ) · t_p and the exponential tail of heavy traffic
  P(W > x) ≈ ρ·exp(−ρ·x / E[W]) (Kingman 1962; the Cramér–Lundberg form for M/G/1);
* memory: the percentile occupancy must fit in the KV cache, or requests queue for a slot.

Everything is vectorised over n, so one capacity evaluation is a few numpy passes (well under 10 ms).
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

PERCENTILES = (0.95, 0.99)


def z_score(p: float) -> float:
    return NormalDist().inv_cdf(p)


@dataclass(frozen=True)
class Arrivals:
    """How requests arrive at a replica: c_a² = 1 is Poisson; prefill_cv2 is the prompts' length spread."""

    cv2: float = 1.0  # squared coefficient of variation of the inter-arrival times
    prefill_cv2: float = 1.0  # squared coefficient of variation of prefill times (prompt lengths)
    lifetime_variance: float = 1.0  # variance of the lifetime-averaged occupancy / variance of occupancy

    @property
    def peakedness(self) -> float:
        return (1.0 + self.cv2) / 2.0


@dataclass(frozen=True)
class Tails:
    """At each mean occupancy n (arrays over n): the load and the percentile latencies, in seconds."""

    n: np.ndarray
    rps: np.ndarray
    tpot_mean: np.ndarray
    ttft: dict[float, np.ndarray]
    tpot: dict[float, np.ndarray]
    occupancy: dict[float, np.ndarray]


def tails(step, n: np.ndarray, prefill_s: float, output_tokens: int, arrivals: Arrivals) -> Tails:
    """`step(batch)` gives the decode step time (array-friendly); n is the grid of mean occupancies."""
    n = np.asarray(n, dtype=float)
    out = float(output_tokens)
    s_n = step(n)
    rps = n / (out * s_n + n * prefill_s)
    rho = np.minimum(rps * prefill_s, 0.999999)
    z = arrivals.peakedness
    # Kingman's mean wait for the prefill queue; its exponential tail has rate ρ / E[W]
    mean_wait = (arrivals.cv2 + arrivals.prefill_cv2) / 2.0 * rho / (1.0 - rho) * prefill_s
    ttft, tpot, occupancy = {}, {}, {}
    for p in PERCENTILES:
        q = z_score(p)
        spread = np.sqrt(n * z)
        occupancy[p] = n + q * spread
        lifetime_n = n + q * spread * np.sqrt(arrivals.lifetime_variance)
        arrivals_meanwhile = n + q * spread
        tpot[p] = step(np.maximum(lifetime_n, 1.0)) + arrivals_meanwhile * prefill_s / out
        with np.errstate(divide="ignore", invalid="ignore"):
            wait = np.where(rho > 1.0 - p, mean_wait / np.maximum(rho, 1e-12) * np.log(rho / (1.0 - p)), 0.0)
        iteration = step(np.maximum(occupancy[p], 1.0))
        ttft[p] = p * iteration + wait + prefill_s + iteration
    return Tails(n, rps, s_n + n * prefill_s / out, ttft, tpot, occupancy)
