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

import math
from pathlib import Path
from typing import Any

from pydantic import Field

from gpuwise.datafiles import read_json
from gpuwise.documents.ids import BENCH_SCHEMA, COMPARE_SCHEMA, REPORT_SCHEMA, STABILITY_SCHEMA
from gpuwise.errors import DataValidationError, UserInputError
from gpuwise.facts.diff import FactDiff, diff_facts
from gpuwise.i18n import N_, joined, msg
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


def load_any(path: str | Path) -> tuple[str, dict]:
    """Read a gpuwise-report/1 or gpuwise-bench/1 JSON file; ('report' | 'bench', data)."""
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
    schema = data.get("schema") if isinstance(data, dict) else None
    if schema == REPORT_SCHEMA:
        _check_shape(p, data, {"facts": dict, "findings": list, "measurements": (dict, type(None))})
        _check_items(p, data.get("findings"), "findings")
        _check_items(p, (data.get("measurements") or {}).get("results"), "measurements.results")
        return "report", data
    if schema == STABILITY_SCHEMA:
        _check_shape(p, data, {"results": list})
        _check_items(p, data.get("results"), "results")
        return "stability", data
    if schema == BENCH_SCHEMA:
        _check_shape(p, data, {"results": list})
        _check_items(p, data.get("results"), "results")
        return "bench", data
    raise UserInputError(
        msg("{p}: schema is {schema!r}, expected {report!r}, {bench!r} or {stability!r}").format(
            p=p, schema=schema, report=REPORT_SCHEMA, bench=BENCH_SCHEMA, stability=STABILITY_SCHEMA
        ),
        msg("compare files written by `gpuwise doctor --format json` or `gpuwise bench`"),
    )


_JSON_NAME = {dict: "an object", list: "a list", type(None): "null"}
_DAMAGED_FIX = N_("regenerate it with `gpuwise doctor --format json -o FILE` or `gpuwise bench --save FILE`")


def _check_shape(p: Path, data: dict, fields: dict[str, type | tuple[type, ...]]) -> None:
    """The top-level fields compare reads must have the right JSON type (a hand-edited or damaged file)."""
    for name, kind in fields.items():
        if name in data and not isinstance(data[name], kind):
            want = joined(" or ", (_JSON_NAME[k] for k in (kind if isinstance(kind, tuple) else (kind,))))
            raise UserInputError(
                msg(
                    "{p}: field {name!r} should be {want}, not {name2} (a damaged or hand-edited file?)"
                ).format(p=p, name=name, want=want, name2=type(data[name]).__name__),
                msg(_DAMAGED_FIX),
            )


def _check_items(p: Path, items: Any, where: str) -> None:
    if items is None:
        return
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise UserInputError(
            msg("{p}: {where} must be a list of objects").format(p=p, where=where), msg(_DAMAGED_FIX)
        )


def _results(kind: str, data: dict) -> list[dict]:
    if kind == "stability":
        return stability_results(data)
    bench = data if kind == "bench" else (data.get("measurements") or {})
    return [r for r in bench.get("results", []) if isinstance(r, dict)]


def stability_results(data: dict) -> list[dict]:
    """A gpuwise-stability/1 run as comparable rows: each metric's median, p99 and cv (cloud vs own node:
    the same metric's spread side by side)."""
    rows = []
    for r in data.get("results") or []:
        info, s = (r.get(key) if isinstance(r.get(key), dict) else {} for key in ("info", "summary"))
        name, unit = str(info.get("name") or "?"), str(info.get("unit") or "")
        rows += [
            {"name": f"{name} median", "unit": unit, "value": s.get("median")},
            {"name": f"{name} p99", "unit": unit, "value": s.get("p99")},
            {"name": f"{name} cv", "unit": "", "value": s.get("cv")},
        ]
    return rows


def _ok_value(r: dict | None) -> float | None:
    """The value of a result that ran (status ok); anything that is not a finite number counts as no value."""
    if not r or r.get("status", "ok") != "ok":
        return None
    return _finite(r.get("value"))  # NaN/inf (hand-edited JSON) would make the output invalid JSON


def _spread(r: dict | None) -> tuple[tuple[float, float] | None, int | None, list[float] | None]:
    """([min, max], repeats, samples) of a result's stats; None where it did not repeat (or the stats
    are not finite numbers)."""
    stats = (r or {}).get("stats")
    if not isinstance(stats, dict):
        return None, None, None
    repeats = stats.get("repeats")
    repeats = repeats if isinstance(repeats, int) and not isinstance(repeats, bool) else None
    low, high = (_finite(stats.get(k)) for k in ("min", "max"))
    samples = stats.get("samples")
    samples = [float(x) for x in samples if _finite(x) is not None] if isinstance(samples, list) else None
    if repeats is None and samples:
        repeats = len(samples)
    if low is None or high is None or low > high or not repeats or repeats < 2:
        return None, repeats, None
    return (low, high), repeats, samples


def _finite(x: Any) -> float | None:
    ok = isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
    return float(x) if ok else None


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


def diff_measurements(ra: list[dict], rb: list[dict]) -> list[MeasurementDiff]:
    def key(r: dict) -> tuple[str, str | None]:
        device = r.get("device")
        return str(r.get("name", "?")), None if device is None else str(device)

    ma, mb = {key(r): r for r in ra}, {key(r): r for r in rb}
    out = []
    for k in sorted(set(ma) | set(mb), key=lambda k: (k[0], k[1] or "")):
        va, vb = _ok_value(ma.get(k)), _ok_value(mb.get(k))
        unit = str((ma.get(k) or mb.get(k) or {}).get("unit") or "")
        ratio = vb / va if va is not None and vb is not None and va else None
        diff = MeasurementDiff(name=k[0], device=k[1], unit=unit, a=va, b=vb, ratio=ratio)
        if va is not None and vb is not None:
            (range_a, diff.a_repeats, sa), (range_b, diff.b_repeats, sb) = _spread(ma[k]), _spread(mb[k])
            diff.a_range, diff.b_range = range_a, range_b
            diff.verdict, diff.p_value = judge(unit, va, vb, range_a, range_b, sa, sb)
        out.append(diff)
    return out


def diff_findings(fa: list[dict], fb: list[dict]) -> list[FindingDiff]:
    da = {str(f.get("id")): f for f in fa if f.get("status") != "pass"}
    db = {str(f.get("id")): f for f in fb if f.get("status") != "pass"}
    out = []
    for fid in sorted(set(da) | set(db)):
        x, y = da.get(fid), db.get(fid)
        title = str((x or y).get("title", fid))
        if x and not y:
            out.append(FindingDiff(id=fid, title=title, only_in="A", status_a=_opt_str(x.get("status"))))
        elif y and not x:
            out.append(FindingDiff(id=fid, title=title, only_in="B", status_b=_opt_str(y.get("status"))))
        elif x.get("status") != y.get("status"):
            out.append(
                FindingDiff(
                    id=fid,
                    title=title,
                    status_a=_opt_str(x.get("status")),
                    status_b=_opt_str(y.get("status")),
                )
            )
    return out


def compare_files(path_a: str | Path, path_b: str | Path) -> Comparison:
    """Compare two gpuwise JSON files (reports or bench results, in any combination)."""
    ka, a = load_any(path_a)
    kb, b = load_any(path_b)
    comp = Comparison(
        a=str(path_a),
        b=str(path_b),
        kind_a=ka,
        kind_b=kb,
        host_a=_opt_str(a.get("hostname") or a.get("host")),
        host_b=_opt_str(b.get("hostname") or b.get("host")),
    )
    if ka == kb == "report":
        comp.facts = diff_facts(a.get("facts") or {}, b.get("facts") or {})
        comp.findings = diff_findings(a.get("findings") or [], b.get("findings") or [])
    comp.measurements = diff_measurements(_results(ka, a), _results(kb, b))
    for m in comp.in_common:
        comp.verdicts[m.verdict] = comp.verdicts.get(m.verdict, 0) + 1
    return comp


def _opt_str(x: Any) -> str | None:
    return None if x is None else str(x)
