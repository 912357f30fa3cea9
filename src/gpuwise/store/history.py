"""The run history: one SQLite file, `~/.local/share/gpuwise/history.db` unless GPUWISE_HISTORY names another.

Every recorded run (bench, doctor) is a row with its kind, time, masked host, the GPU model its numbers
come from, whether it was measured here (live) or read from another machine's files (replay), a digest
of the facts that matter for performance (driver, torch, CUDA, ...), those facts, its JSON document, and
one row per metric (median, min and max of the repeats). The schema is versioned with SQLite's
`user_version` and migrated forward in order (MIGRATIONS: SQL statements, or a function for a step
SQL cannot do); a database written by an older gpuwise is migrated in place the first time a newer one
opens it. The database runs in WAL mode with a busy
timeout, so concurrent runs both land. Every SQLite failure becomes a HistoryError with a "To fix";
the caller warns and carries on, so a broken history never loses the run being recorded.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from gpuwise.errors import EnvironmentProblem
from gpuwise.i18n import joined, msg
from gpuwise.store.identity import LIVE, gpu_of, origin_of
from gpuwise.store.identity import mask_host as mask_host  # re-exported: callers mask with it


def _fill_gpu_and_origin(db: sqlite3.Connection) -> None:
    """Migration 2: the GPU model and live/replay of every run recorded before they were columns,
    read from its stored document (runs of another GPU or a replayed capture then leave this host's
    trends and regression baselines, as new runs do)."""
    from gpuwise.documents.load import DocumentError
    from gpuwise.store import records

    last = -1
    while rows := db.execute(  # in batches: a long history's documents never sit in memory at once
        "SELECT id, kind, document FROM runs WHERE id > ? ORDER BY id LIMIT 100", (last,)
    ).fetchall():
        for run_id, kind, text in rows:
            try:
                document = records.parse(kind, json.loads(text), where=f"run {run_id}")
            except (ValueError, KeyError, DocumentError):  # not JSON, an unknown kind, or not its document
                continue
            db.execute(
                "UPDATE runs SET gpu = ?, origin = ? WHERE id = ?",
                (gpu_of(document), origin_of(document), run_id),
            )
        last = rows[-1][0]


# (version, steps). Append only; never edit a released step (databases in the field ran it).
MIGRATIONS: list[tuple[int, list[str | Callable[[sqlite3.Connection], None]]]] = [
    (
        1,
        [
            "CREATE TABLE runs (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, created_at TEXT NOT NULL, "
            "host TEXT NOT NULL, facts_digest TEXT NOT NULL, facts TEXT NOT NULL, document TEXT NOT NULL)",
            "CREATE INDEX runs_by_host ON runs(host, kind, created_at)",
            "CREATE TABLE metrics (run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, "
            "name TEXT NOT NULL, value REAL NOT NULL, unit TEXT NOT NULL DEFAULT '', low REAL, high REAL, "
            "repeats INTEGER, PRIMARY KEY (run_id, name))",
            "CREATE INDEX metrics_by_name ON metrics(name)",
        ],
    ),
    (
        2,
        [
            "ALTER TABLE runs ADD COLUMN gpu TEXT NOT NULL DEFAULT ''",
            f"ALTER TABLE runs ADD COLUMN origin TEXT NOT NULL DEFAULT '{LIVE}'",
            _fill_gpu_and_origin,
            "CREATE INDEX runs_by_series ON runs(host, gpu, origin, kind, created_at)",
        ],
    ),
]
BUSY_TIMEOUT_S = 15.0


class HistoryError(EnvironmentProblem):
    """The history database cannot be opened, read or written."""


def default_path() -> Path:
    if os.environ.get("GPUWISE_HISTORY"):
        return Path(os.environ["GPUWISE_HISTORY"]).expanduser()
    data_home = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data_home) / "gpuwise" / "history.db"


def facts_digest(facts: dict) -> str:
    return hashlib.sha256(json.dumps(facts, sort_keys=True, default=str).encode()).hexdigest()[:16]


@dataclass
class Metric:
    name: str
    value: float
    unit: str = ""
    low: float | None = None  # the worst and best repeat of the run, when measured
    high: float | None = None
    repeats: int | None = None


@dataclass
class Run:
    id: int
    kind: str
    created_at: str
    host: str
    facts_digest: str
    facts: dict
    metrics: list[Metric] = field(default_factory=list)
    document: dict | None = None
    gpu: str = ""  # the GPU model(s) its numbers come from ('none': no GPU; '': not applicable)
    origin: str = LIVE  # live (measured where it was recorded) or replay (another machine's files)

    @property
    def series(self) -> tuple[str, str, str]:
        """Runs that may be compared with each other: the same host, GPU model and origin."""
        return self.host, self.gpu, self.origin


class History:
    """An open history database. Use as a context manager; every method raises only HistoryError."""

    def __init__(self, path: Path | None = None):
        self.path = Path(path) if path is not None else default_path()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        except (OSError, sqlite3.Error) as err:
            raise self._error(err) from err
        self._guard(self._setup_retrying)

    def __enter__(self) -> History:
        return self

    def __exit__(self, *exc) -> None:
        self._db.close()

    def _error(self, err: Exception) -> HistoryError:
        text = str(err)
        if "locked" in text or "busy" in text:
            return HistoryError(
                msg("the history database {path} stayed locked for {seconds:.0f} s ({error})").format(
                    path=self.path, seconds=BUSY_TIMEOUT_S, error=text
                ),
                msg("wait for the other gpuwise run to finish, or skip recording with --no-history"),
            )
        return HistoryError(
            msg("the history database {path} cannot be used: {error}").format(path=self.path, error=text),
            msg(
                "move it aside (mv {path} {path}.broken; the next run starts a new one), "
                "point GPUWISE_HISTORY or --history at another file, or skip recording with --no-history"
            ).format(path=self.path),
        )

    def _guard(self, fn, *args):
        try:
            return fn(*args)
        except (sqlite3.Error, OSError) as err:
            raise self._error(err) from err

    def _setup_retrying(self) -> None:
        """_setup, retried while another process holds the lock: switching a new file to WAL needs an
        exclusive lock that SQLite refuses at once (no busy wait) while another opener migrates it."""
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        while True:
            try:
                return self._setup()
            except sqlite3.OperationalError as err:
                if "locked" not in str(err) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def _setup(self) -> None:
        self._db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        self._db.execute("PRAGMA journal_mode = WAL")
        self._db.execute("PRAGMA foreign_keys = ON")
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        pending = [(v, steps) for v, steps in MIGRATIONS if v > version]
        if not pending:
            return
        self._db.execute("BEGIN IMMEDIATE")  # one process migrates; the others wait, then see it done
        try:
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            for v, steps in MIGRATIONS:
                if v > version:
                    for step in steps:
                        step(self._db) if callable(step) else self._db.execute(step)
                    self._db.execute(f"PRAGMA user_version = {v}")
            self._db.execute("COMMIT")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

    def schema_version(self) -> int:
        return self._guard(lambda: self._db.execute("PRAGMA user_version").fetchone()[0])

    def record(self, kind: str, host: str, created_at: str, facts: dict, metrics: list[Metric],
               document: dict, *, gpu: str = "", origin: str = LIVE) -> int:  # fmt: skip
        """Store one run (host already masked or not, as the caller decides); its id."""

        def write() -> int:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                cur = self._db.execute(
                    "INSERT INTO runs (kind, created_at, host, facts_digest, facts, document, gpu, origin) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (kind, created_at, host, facts_digest(facts), json.dumps(facts, sort_keys=True),
                     json.dumps(document), gpu, origin),
                )  # fmt: skip
                run_id = cur.lastrowid
                self._db.executemany(
                    "INSERT OR REPLACE INTO metrics (run_id, name, value, unit, low, high, repeats) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [(run_id, m.name, m.value, m.unit, m.low, m.high, m.repeats) for m in metrics],
                )
                self._db.execute("COMMIT")
                return run_id
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

        return self._guard(write)

    def runs(self, *, kind: str | None = None, host: str | None = None, gpu: str | None = None,
             origin: str | None = None, before_id: int | None = None, limit: int = 50) -> list[Run]:  # fmt: skip
        """Newest first, with their metrics (documents are loaded by get()); None matches any."""
        where, args = ["1=1"], []
        for clause, value in (("kind = ?", kind), ("host = ?", host), ("gpu = ?", gpu),
                              ("origin = ?", origin), ("id < ?", before_id)):  # fmt: skip
            if value is not None:
                where.append(clause)
                args.append(value)
        sql = (
            "SELECT id, kind, created_at, host, facts_digest, facts, gpu, origin FROM runs WHERE "
            + joined(" AND ", where)
            + " ORDER BY created_at DESC, id DESC LIMIT ?"
        )
        return self._guard(self._load, sql, [*args, limit], False)

    def get(self, run_id: int) -> Run | None:
        sql = "SELECT id, kind, created_at, host, facts_digest, facts, gpu, origin, document FROM runs WHERE id = ?"
        found = self._guard(self._load, sql, [run_id], True)
        return found[0] if found else None

    def trend(
        self, metric: str, host: str | None = None, origin: str | None = None
    ) -> list[tuple[Run, Metric]]:
        """Every recorded value of `metric` (of `host` and `origin` when given), oldest first, with the
        run it came from; Run.series tells which of them belong together."""
        runs = self.runs(host=host, origin=origin, limit=10_000)
        return [(r, m) for r in reversed(runs) for m in r.metrics if m.name == metric]

    def metric_names(self) -> list[str]:
        rows = self._guard(
            lambda: self._db.execute("SELECT DISTINCT name FROM metrics ORDER BY name").fetchall()
        )
        return [name for (name,) in rows]

    def _load(self, sql: str, args: list, with_document: bool) -> list[Run]:
        runs = []
        for row in self._db.execute(sql, args).fetchall():
            run = Run(*row[:5], facts=json.loads(row[5]), gpu=row[6], origin=row[7])
            if with_document:
                run.document = json.loads(row[8])
            run.metrics = [
                Metric(*m)
                for m in self._db.execute(
                    "SELECT name, value, unit, low, high, repeats FROM metrics WHERE run_id = ? ORDER BY name",
                    (run.id,),
                )
            ]
            runs.append(run)
        return runs
