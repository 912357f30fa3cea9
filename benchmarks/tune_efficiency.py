"""Tuner efficiency: does Optuna (as gpuwise tune drives it) find the best setting in few trials?

    python benchmarks/tune_efficiency.py measure [--steps N --out FILE]  # every grid point, measured (minutes)
    python benchmarks/tune_efficiency.py replay [--seeds 20 40]          # replays the tables: no training

`measure` runs every point of GRID on mlp-slow-data through the same isolated trial runner tune uses
and writes a table under benchmarks/data/ (samples/s per point, with how it was measured). Two tables are
kept, measured independently on this shared VM (5 and 10 timed steps), so a change to the search is
judged on both and cannot be fitted to one table's noise.
`replay` searches each table instead of training: for 20 seeds it runs gpuwise's own search
(gpuwise.tune.search.run_search, with only the trial runner replaced by a look-up: baseline, one-knob
probes in prior order, TPE, measured settings not re-run, neighbours of the best) and plain TPE, and
reports the trials each needed to reach 95 % of the grid's best throughput; the target is the median
within 30 % of the grid's trials. DeepSpeed Autotuning's approach is the exhaustive grid: all points,
the best known only at the end.
"""

from __future__ import annotations

import argparse
import contextlib
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
SEEDS, TARGET, BUDGET, BATCH = 20, 0.95, 0.30, 32
TABLES = sorted(DATA.parent.glob("tune_grid_*.csv"))


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


def measure(warmup: int, steps: int, table_path: Path = DATA) -> None:
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
    table_path.parent.mkdir(parents=True, exist_ok=True)
    with table_path.open("w", newline="", encoding="utf-8") as fh:
        fh.write(
            f"# measured {datetime.now(timezone.utc):%Y-%m-%dT%H:%MZ} by `python benchmarks/tune_efficiency.py "
            f"measure` on a shared 2-core VM: mlp-slow-data, batch 32, {warmup} warm-up (more with loader workers, "
            f"as tune does) + {steps} timed steps, "
            "samples/s = 32 x steps / their total time\n"
        )
        writer = csv.DictWriter(fh, fieldnames=["setting", "samples_per_s", "status"])
        writer.writeheader()
        writer.writerows(rows)


def load(path: Path = DATA) -> dict[str, float]:
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if not line.startswith("#")]
    return {r["setting"]: float(r["samples_per_s"]) for r in csv.DictReader(lines)}


class _Reached(Exception):
    """The replayed search measured a setting within TARGET of the grid's best."""


def _replay_outcome(table: dict[str, float], config: dict, on_step):
    """What run_trial would have returned for this setting: its grid throughput as equal step times."""
    from gpuwise.tune.trial import TrialOutcome
    from gpuwise.workloads.loop import StepRecord

    p = {k: config["settings"][k] for k in GRID}
    if p["num_workers"] == 0:
        del p["prefetch_factor"]
    value = table[key(p)]
    if value <= 0:
        return TrialOutcome("failed", failure="error", reason="failed in the grid"), value
    steps = []
    for i in range(config["steps"]):
        steps.append(StepRecord(index=i, seconds=BATCH / value, data_wait_s=0.0, loss=1.0))
        if on_step is not None and on_step(steps[-1]):
            return TrialOutcome("pruned", steps), value
    return TrialOutcome("ok", steps), value


def _gpuwise_search(table: dict[str, float], seed: int, folder: Path) -> int:
    """Trials gpuwise's own search (gpuwise.tune.search.run_search, unchanged) needs to reach the target;
    only the trial runner is replaced by a look-up in the table."""
    from unittest import mock

    from gpuwise.tune import search

    target, trials = TARGET * max(table.values()), [0]

    def run_trial(config, where, *, on_step=None, **_):
        if where.name == "baseline-end":
            raise _Reached
        outcome, value = _replay_outcome(table, config, on_step)
        trials[0] += 1
        if outcome.status == "ok" and value >= target:
            raise _Reached
        return outcome

    opts = search.TuneOptions(
        target="mlp-slow-data",
        batch_size=BATCH,
        warmup=2,
        steps=5,
        trials=len(table) * 3,
        seed=seed,
        study=f"replay-{seed}",
        storage=folder / f"replay-{seed}.sqlite3",
        prior="data",  # the baseline of mlp-slow-data is data-bound, which tune reads from its data wait
    )
    import optuna

    create = optuna.create_study

    def in_memory(**kwargs):  # the same study, sampler and pruner; SQLite only slows a replay down
        return create(**{**kwargs, "storage": None})

    with (
        mock.patch.object(search, "run_trial", run_trial),
        mock.patch.object(optuna, "create_study", in_memory),
        contextlib.suppress(_Reached),
    ):
        search.run_search(opts, dict(GRID), lambda event, data: None)
    return trials[0]


def _plain_tpe(table: dict[str, float], seed: int) -> int:
    """Trials Optuna's TPE alone (ask/tell, default start-up, repeats cost a trial) needs."""
    import optuna

    from gpuwise.tune.policy import suggest

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    best = max(table.values())
    study = optuna.create_study(direction="maximize", sampler=optuna.samplers.TPESampler(seed=seed))
    for n in range(1, len(table) * 3 + 1):
        trial = study.ask()
        value = table[key(suggest(trial, dict(GRID)))]
        study.tell(trial, value)
        if value >= TARGET * best:
            return n
    return len(table) * 3


def replay_counts(table: dict[str, float], seeds: range = range(SEEDS)) -> dict[str, list[int]]:
    """Trials each seed needed to reach TARGET x the grid's best, per procedure."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="gw-tune-replay-") as tmp:
        ours = [_gpuwise_search(table, seed, Path(tmp)) for seed in seeds]
    return {"gpuwise tune": ours, "plain TPE": [_plain_tpe(table, seed) for seed in seeds]}


def replay(paths: list[Path], seeds: range) -> int:
    met = True
    for path in paths:
        table = load(path)
        n = len(table)
        best_key = max(table, key=table.get)
        near = sum(v >= TARGET * table[best_key] for v in table.values())
        print(
            f"{path.name}: {n} points, {near} within {TARGET:.0%} of the best, {table[best_key]:.1f} samples/s "
            f"at {best_key}"
        )
        counts = replay_counts(table, seeds)
        for name, found in counts.items():
            median = statistics.median(found)
            within = sum(c <= BUDGET * n for c in found)
            print(
                f"  {name}: median {median:g} trials to reach {TARGET:.0%} of the best ({median / n:.0%} of the "
                f"grid); {within}/{len(found)} seeds within {BUDGET:.0%} ({BUDGET * n:.0f} trials); max {max(found)}"
            )
        print(f"  DeepSpeed Autotuning-style exhaustive grid: {n} trials (100% of the grid) to know the best")
        met &= statistics.median(counts["gpuwise tune"]) <= BUDGET * n
    return 0 if met else 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=["measure", "replay"])
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--out", type=Path, default=DATA, help="measure: the table to write")
    ap.add_argument("--table", type=Path, action="append", help="replay: a measured table (default: all)")
    ap.add_argument("--seeds", type=int, nargs=2, default=(0, SEEDS), metavar=("FIRST", "END"))
    args = ap.parse_args()
    if args.mode == "measure":
        measure(args.warmup, args.steps, args.out)
        return 0
    return replay(args.table or TABLES, range(*args.seeds))


if __name__ == "__main__":
    sys.exit(main())
