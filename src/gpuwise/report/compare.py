"""Compare two doctor reports or two bench results: facts that differ (by layer), measurements with the
ratio B/A and whether the change is beyond the noise, and findings present in only one of them. Used by
`gpuwise compare A.json B.json`.

The noise rule (NOISE_RULE): a measurement is judged only when both runs repeated it (stats.repeats
>= 2, with stats.min and stats.max); its headline is the result's `value`. When both carry their
samples (stats.samples, 5 or more each), a two-sided Mann-Whitney U test at p < 0.05 decides whether
B differs from A; otherwise the ranges [min, max] of the repeats do: overlapping ranges are within
noise, disjoint ones are an improvement or a regression (throughputs up is better; times, in
LOWER_IS_BETTER_UNITS, down is better). A single repeat on either side gives no noise bound."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from pydantic import Field

from gpuwise.datafiles import read_json
from gpuwise.documents.compared import (
    ComparedBench,
    ComparedFinding,
    ComparedReport,
    ComparedStability,
    ResultRow,
)
from gpuwise.documents.ids import BENCH_SCHEMA, COMPARE_SCHEMA, REPORT_SCHEMA, STABILITY_SCHEMA
from gpuwise.documents.load import parse_document
from gpuwise.errors import DataValidationError, UserInputError
from gpuwise.facts.diff import FactDiff, diff_facts
from gpuwise.i18n import N_, msg
from gpuwise.report.mannwhitney import mann_whitney_p
from gpuwise.store.regress import lower_is_better
from gpuwise.textmodel import TextModel

IMPROVEMENT, REGRESSION, WITHIN_NOISE, NO_NOISE_BOUND = (
    "improvement",
    "regression",
    "within_noise",
    "no_noise_bound",
)
NOISE_RULE = (
    "both runs repeated (stats.repeats >= 2): with 5+ samples each (stats.samples), a two-sided "
    "Mann-Whitney U test at p < 0.05; otherwise the repeats' [min, max] ranges: overlapping = within noise"
)
MIN_SAMPLES_FOR_TEST = 5
SIGNIFICANCE = 0.05
T, K = TypeVar("T"), TypeVar("K")


class MeasurementDiff(TextModel):
    name: str
    device: str | None = None
    unit: str = ""
    a: float | None = None
    b: float | None = None
    ratio: float | None = None  # b / a
    a_range: tuple[float, float] | None = None  # [min, max] of A's repeats, when it repeated
    b_range: tuple[float, float] | None = None
    a_repeats: int | None = None
    b_repeats: int | None = None
    verdict: str | None = None  # IMPROVEMENT, REGRESSION, WITHIN_NOISE, NO_NOISE_BOUND; None: not in both
    p_value: float | None = None  # Mann-Whitney U, when both carried their samples


class FindingDiff(TextModel):
    id: str
    title: str
    only_in: str | None = None  # "A" or "B"; None when in both with another status
    status_a: str | None = None
    status_b: str | None = None


class Comparison(TextModel):
    schema_: str = Field(default=COMPARE_SCHEMA, alias="schema")
    a: str
    b: str
    kind_a: str
    kind_b: str
    host_a: str | None = None
    host_b: str | None = None
    facts: list[FactDiff] = Field(default_factory=list)
    measurements: list[MeasurementDiff] = Field(default_factory=list)
    findings: list[FindingDiff] = Field(default_factory=list)
    noise_rule: str = NOISE_RULE
    verdicts: dict[str, int] = Field(default_factory=dict)  # verdict -> how many measurements

    @property
    def in_common(self) -> list[MeasurementDiff]:
        """Measurements with a value in both files."""
        return [m for m in self.measurements if m.verdict is not None]

    @property
    def regressions(self) -> list[MeasurementDiff]:
        return [m for m in self.measurements if m.verdict == REGRESSION]


Document = ComparedReport | ComparedBench | ComparedStability
_MODELS = {REPORT_SCHEMA: ComparedReport, BENCH_SCHEMA: ComparedBench, STABILITY_SCHEMA: ComparedStability}
_KINDS = {REPORT_SCHEMA: "report", BENCH_SCHEMA: "bench", STABILITY_SCHEMA: "stability"}
_DAMAGED_FIX = N_("regenerate it with `gpuwise doctor --format json -o FILE` or `gpuwise bench --save FILE`")


def load_any(path: str | Path) -> tuple[str, Document]:
    """Read a gpuwise-report/1, gpuwise-bench/1 or gpuwise-stability/1 JSON file through its view
    (documents/compared.py); ('report' | 'bench' | 'stability', document)."""
    p = Path(path)
    if not p.exists() and not p.is_symlink():
        raise UserInputError(
            msg("{p}: no such file").format(p=p),
            msg(
                "pass two files written by `gpuwise doctor --format json -o FILE` or `gpuwise bench "
                "--save FILE`"
            ),
        )
    try:
        data = read_json(
            p, N_("report"), N_("pass a gpuwise report or bench JSON file")
        )  # size cap, NaN refused
    except DataValidationError as exc:
        raise UserInputError(
            msg("{p}: not readable JSON ({reason})").format(p=p, reason=exc.reason), exc.fix
        ) from None
    found = data["schema"] if isinstance(data, dict) and "schema" in data else None
    schema = found if isinstance(found, str) and found in _MODELS else None
    if schema is None:
        raise UserInputError(
            msg("{p}: schema is {schema!r}, expected {report!r}, {bench!r} or {stability!r}").format(
                p=p, schema=found, report=REPORT_SCHEMA, bench=BENCH_SCHEMA, stability=STABILITY_SCHEMA
            ),
            msg("compare files written by `gpuwise doctor --format json` or `gpuwise bench`"),
        )
    return _KINDS[schema], parse_document(data, _MODELS[schema], schema, path=p, fix=_DAMAGED_FIX)


def _results(doc: Document) -> list[ResultRow]:
    if isinstance(doc, ComparedStability):
        return stability_results(doc)
    rows = doc.measurements if isinstance(doc, ComparedReport) else doc
    return rows.results if rows is not None else []


def stability_results(doc: ComparedStability) -> list[ResultRow]:
    """A gpuwise-stability/1 run as comparable rows: each metric's median, p99 and cv (cloud vs own node:
    the same metric's spread side by side)."""
    rows = []
    for r in doc.results:
        name, unit, s = r.info.name, r.info.unit, r.summary
        rows += [
            ResultRow(name=f"{name} median", unit=unit, value=s.median),
            ResultRow(name=f"{name} p99", unit=unit, value=s.p99),
            ResultRow(name=f"{name} cv", unit="", value=s.cv),
        ]
    return rows


def _ok_value(r: ResultRow | None) -> float | None:
    """The value of a result that ran (status ok); a value that is not a finite number reads as None."""
    return r.value if r is not None and r.status == "ok" else None


def _spread(r: ResultRow) -> tuple[tuple[float, float] | None, int | None, list[float] | None]:
    """([min, max], repeats, samples) of a result's stats; None where it did not repeat (or the stats
    are not finite numbers)."""
    stats = r.stats
    if stats is None:
        return None, None, None
    low, high, repeats, samples = stats.min, stats.max, stats.repeats, stats.samples
    if repeats is None and samples:
        repeats = len(samples)
    if low is None or high is None or low > high or not repeats or repeats < 2:
        return None, repeats, None
    return (low, high), repeats, samples


def judge(unit: str, va: float, vb: float, ra, rb, sa, sb) -> tuple[str, float | None]:
    """The verdict on B against A (NOISE_RULE), and the Mann-Whitney p-value when samples decided it."""
    if ra is None or rb is None:
        return NO_NOISE_BOUND, None
    better = -1.0 if lower_is_better(unit) else 1.0
    if sa and sb and min(len(sa), len(sb)) >= MIN_SAMPLES_FOR_TEST:
        p = mann_whitney_p(sa, sb)
        if p >= SIGNIFICANCE or vb == va:
            return WITHIN_NOISE, p
        return (IMPROVEMENT if better * (vb - va) > 0 else REGRESSION), p
    if ra[0] <= rb[1] and rb[0] <= ra[1]:
        return WITHIN_NOISE, None
    return (IMPROVEMENT if better * (rb[0] - ra[1]) > 0 else REGRESSION), None


def _paired(a: list[T], b: list[T], key: Callable[[T], K]) -> list[tuple[K, T | None, T | None]]:
    """(key, A's item, B's item) for every key on either side, sorted by key; the last item of a key wins."""
    pairs: dict[K, list[T | None]] = {}
    for side, items in enumerate((a, b)):
        for item in items:
            pairs.setdefault(key(item), [None, None])[side] = item
    return [(k, x, y) for k, (x, y) in sorted(pairs.items(), key=lambda kv: kv[0])]


def diff_measurements(ra: list[ResultRow], rb: list[ResultRow]) -> list[MeasurementDiff]:
    def key(r: ResultRow) -> tuple[str, str, bool]:  # a device of None and "" are two keys
        return r.name, r.device or "", r.device is not None

    out = []
    for (name, *_), x, y in _paired(ra, rb, key):
        va, vb = _ok_value(x), _ok_value(y)
        unit = (x or y).unit
        ratio = vb / va if va is not None and vb is not None and va else None
        diff = MeasurementDiff(name=name, device=(x or y).device, unit=unit, a=va, b=vb, ratio=ratio)
        if va is not None and vb is not None:
            (range_a, diff.a_repeats, sa), (range_b, diff.b_repeats, sb) = _spread(x), _spread(y)
            diff.a_range, diff.b_range = range_a, range_b
            diff.verdict, diff.p_value = judge(unit, va, vb, range_a, range_b, sa, sb)
        out.append(diff)
    return out


def diff_findings(fa: list[ComparedFinding], fb: list[ComparedFinding]) -> list[FindingDiff]:
    def not_passed(findings: list[ComparedFinding]) -> list[ComparedFinding]:
        return [f for f in findings if f.status != "pass"]

    out = []
    for fid, x, y in _paired(not_passed(fa), not_passed(fb), lambda f: str(f.id)):
        title = next(t for t in ((x or y).title, fid) if t is not None)
        if y is None:
            out.append(FindingDiff(id=fid, title=title, only_in="A", status_a=x.status))
        elif x is None:
            out.append(FindingDiff(id=fid, title=title, only_in="B", status_b=y.status))
        elif x.status != y.status:
            out.append(FindingDiff(id=fid, title=title, status_a=x.status, status_b=y.status))
    return out


def compare_files(path_a: str | Path, path_b: str | Path) -> Comparison:
    """Compare two gpuwise JSON files (reports, bench results or stability runs, in any combination)."""
    ka, a = load_any(path_a)
    kb, b = load_any(path_b)
    comp = Comparison(
        a=str(path_a), b=str(path_b), kind_a=ka, kind_b=kb, host_a=a.host_name(), host_b=b.host_name()
    )
    if isinstance(a, ComparedReport) and isinstance(b, ComparedReport):
        comp.facts = diff_facts(a.facts, b.facts)
        comp.findings = diff_findings(a.findings, b.findings)
    comp.measurements = diff_measurements(_results(a), _results(b))
    comp.verdicts = dict(Counter(m.verdict for m in comp.in_common))
    return comp
