"""Tuner efficiency: does Optuna (as gpuwise tune drives it) find the best setting in few trials?

    python benchmarks/tune_efficiency.py measure   # once: every grid point, measured (minutes)
    python benchmarks/tune_efficiency.py replay    # replays the table: 20 seeds, no training

`measure` runs every point of GRID on mlp-slow-data through the same isolated trial runner tune uses
and writes benchmarks/data/tune_grid_mlp_slow_data.csv (samples/s per point, with how it was measured).
`replay` searches that table instead of training: for 20 seeds it runs gpuwise's procedure (baseline,
one-knob probes in prior order, then TPE) and plain TPE, and reports the trials each needed to reach
95 % of the grid's best throughput; the target is the median within 30 % of the grid's trials.
DeepSpeed Autotuning's approach is the exhaustive grid: all points, the best found at the end.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import statistics
import sys
from datetime import datetime, timezone
from pathlib import Path

DATA = Path(__file__).parent / "data" / "tune_grid_mlp_slow_data.csv"
GRID = {
    "precision": ("fp32", "bf16"),
    "accumulation": (1, 2),
    "optimizer_impl": ("default", "fused"),
    "num_workers": (0, 2, 4),
    "prefetch_factor": (2, 4),
}
SEEDS, TARGET, BUDGET = 20, 0.95, 0.30


def points() -> list[dict]:
    out = []
    for values in itertools.product(*GRID.values()):
        p = dict(zip(GRID, values, strict=True))
        if p["num_workers"] == 0:
            if p["prefetch_factor"] != GRID["prefetch_factor"][0]:
                continue
            del p["prefetch_factor"]
        out.append(p)
    return out


def key(p: dict) -> str:
    return json.dumps(p, sort_keys=True)


def measure(warmup: int, steps: int) -> None:
    import tempfile

    from gpuwise.tune.knobs import to_settings
    from gpuwise.tune.search import TuneOptions, warmup_for
    from gpuwise.tune.trial import run_trial

    rows = []
    grid = points()
    with tempfile.TemporaryDirectory(prefix="gw-tune-grid-") as tmp:
        for i, p in enumerate(grid):
            settings = {k: v for k, v in to_settings(p).__dict__.items() if k != "env"}
            config = {"target": "mlp-slow-data", "device": "cpu", "seed": 0, "batch_size": 32}
            skip = warmup_for(TuneOptions(target="mlp-slow-data", warmup=warmup), p)  # as tune does
            config.update(steps=skip + steps, settings=settings)
            out = run_trial(config, Path(tmp) / str(i), timeout_s=300)
            timed = [r.seconds for r in out.steps[skip:]]
            sps = 32 * len(timed) / sum(timed) if out.status == "ok" and timed else 0.0
            rows.append({"setting": key(p), "samples_per_s": round(sps, 2), "status": out.status})
            print(f"{i + 1}/{len(grid)} {key(p)} {sps:.1f} samples/s", flush=True)
    DATA.parent.mkdir(parents=True, exist_ok=True)
    with DATA.open("w", newline="", encoding="utf-8") as fh:
        fh.write(
            f"# measured {datetime.now(timezone.utc):%Y-%m-%dT%H:%MZ} by `python benchmarks/tune_efficiency.py "
            f"measure` on a shared 2-core VM: mlp-slow-data, batch 32, {warmup} warm-up (more with loader workers, "
            f"as tune does) + {steps} timed steps, "
            "samples/s = 32 x steps / their total time\n"
        )
        writer = csv.DictWriter(fh, fieldnames=["setting", "samples_per_s", "status"])
        writer.writeheader()
        writer.writerows(rows)


def load() -> dict[str, float]:
    lines = [line for line in DATA.read_text(encoding="utf-8").splitlines() if not line.startswith("#")]
    return {r["setting"]: float(r["samples_per_s"]) for r in csv.DictReader(lines)}


def _trials_to_target(table: dict[str, float], seed: int, procedure: bool) -> int:
    import optuna

    from gpuwise.tune.search import baseline_params, category_order, probes, suggest

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    best = max(table.values())
    space = dict(GRID)
    study = optuna.create_study(
        direction="maximize", sampler=optuna.samplers.TPESampler(seed=seed, n_startup_trials=4)
    )
    if procedure:
        study.enqueue_trial(baseline_params(space))
        order, _ = category_order("data")  # the baseline of mlp-slow-data is data-bound: tune's prior
        for p in probes(space, order):
            study.enqueue_trial(p)
    for n in range(1, len(table) * 3 + 1):
        trial = study.ask()
        value = table[key(suggest(trial, space))]
        study.tell(trial, value)
        if value >= TARGET * best:
            return n
    return len(table) * 3


def replay_counts(table: dict[str, float]) -> dict[str, list[int]]:
    """Trials each seed needed to reach TARGET x the grid's best, per procedure."""
    return {
        "gpuwise tune (probes, then TPE)": [_trials_to_target(table, seed, True) for seed in range(SEEDS)],
        "plain TPE": [_trials_to_target(table, seed, False) for seed in range(SEEDS)],
    }


def replay() -> int:
    table = load()
    n = len(table)
    best_key = max(table, key=table.get)
    print(f"grid: {n} points; best {table[best_key]:.1f} samples/s at {best_key}")
    counts = replay_counts(table)
    for name, found in counts.items():
        median = statistics.median(found)
        within = sum(c <= BUDGET * n for c in found)
        print(
            f"{name}: median {median:g} trials to reach {TARGET:.0%} of the best ({median / n:.0%} of the grid); "
            f"{within}/{SEEDS} seeds within {BUDGET:.0%} of the grid ({BUDGET * n:.0f} trials); max {max(found)}"
        )
    print(f"DeepSpeed Autotuning-style exhaustive grid: {n} trials (100% of the grid) to know the best")
    ours = statistics.median(counts["gpuwise tune (probes, then TPE)"])
    return 0 if ours <= BUDGET * n else 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=["measure", "replay"])
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--steps", type=int, default=5)
    args = ap.parse_args()
    if args.mode == "measure":
        measure(args.warmup, args.steps)
        return 0
    return replay()


if __name__ == "__main__":
    sys.exit(main())
