"""Traffic: the workload's request rates as one week of hourly demand (168 values), plus growth.

The daily shape comes from 24 hourly values, a peak/valley pair, or a CSV of measured hourly rates.
A CSV that covers at least a week gives the hour-of-week means directly; a shorter one gives an
hour-of-day profile that the workload's weekly factors multiply. Bad CSVs (gaps, negative rates,
non-numbers, timestamps out of order) are refused with the line to fix.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gpuwise.datafiles import read_rows
from gpuwise.errors import DataValidationError
from gpuwise.i18n import N_, joined, msg
from gpuwise.plan.serving.workload import Traffic

HOURS_PER_WEEK = 168
DAYS = (N_("Mon"), N_("Tue"), N_("Wed"), N_("Thu"), N_("Fri"), N_("Sat"), N_("Sun"))


@dataclass(frozen=True)
class DemandWeek:
    """Requests/s for each hour of a week (index 0 = Monday 00:00), before growth."""

    rps: np.ndarray  # (168,)
    source: str  # where the shape came from, for the plan's notes
    growth_per_year: float

    @property
    def peak(self) -> float:
        return float(self.rps.max())

    @property
    def valley(self) -> float:
        return float(self.rps.min())

    @property
    def mean(self) -> float:
        return float(self.rps.mean())

    @property
    def peak_to_valley(self) -> float:
        return self.peak / self.valley if self.valley > 0 else float("inf")

    def growth_factor(self, months: float) -> float:
        return (1.0 + self.growth_per_year) ** (months / 12.0)

    def first_year_mean_growth(self) -> float:
        """Mean demand multiplier over the first 12 months (costs are averaged over them)."""
        return float(np.mean([self.growth_factor(m + 0.5) for m in range(12)]))

    def daily_profile(self) -> np.ndarray:
        """Mean over the week per hour of day (24,): what the hourly table and chart show."""
        return self.rps.reshape(7, 24).mean(axis=0)

    def scaled_shape(self, peak_to_valley: float) -> DemandWeek:
        """The same mean and timing with another peak/valley ratio (for 'what would flip it')."""
        lo, hi = self.valley, self.peak
        if hi <= lo:
            return self
        share = (self.rps - lo) / (hi - lo)  # 0 in the valley, 1 at the peak
        # valley v, peak r·v, mean fixed: v·(1 + (r - 1)·mean(share)) = mean
        v = self.mean / (1.0 + (peak_to_valley - 1.0) * float(share.mean()))
        return DemandWeek(v * (1.0 + (peak_to_valley - 1.0) * share), self.source, self.growth_per_year)


def peak_valley_day(peak: float, valley: float, first: int, end: int) -> np.ndarray:
    hours = np.arange(24)
    inside = (hours >= first) & (hours < end) if first < end else (hours >= first) | (hours < end)
    return np.where(inside, peak, valley).astype(float)


def demand_week(traffic: Traffic, workload_dir: Path) -> DemandWeek:
    weekly = np.asarray(traffic.weekly, dtype=float)
    if traffic.csv is not None:
        path = Path(traffic.csv)
        path = path if path.is_absolute() else workload_dir / path
        rps, source = _from_csv(path, weekly)
    elif traffic.hourly_rps is not None:
        rps = np.tile(np.asarray(traffic.hourly_rps, dtype=float), 7) * np.repeat(weekly, 24)
        source = msg("24 hourly values")
    else:
        first, end = traffic.peak_hours
        day = peak_valley_day(traffic.peak_rps, traffic.valley_rps, first, end)
        rps = np.tile(day, 7) * np.repeat(weekly, 24)
        source = msg("peak {peak} req/s from {first}:00 to {end}:00, valley {valley}").format(
            peak=f"{traffic.peak_rps:g}", first=first, end=end, valley=f"{traffic.valley_rps:g}"
        )
    if traffic.csv is None and any(w != 1.0 for w in traffic.weekly):
        source += msg(" × weekly factors {factors}").format(
            factors=joined(", ", (f"{msg(d)} {w:g}" for d, w in zip(DAYS, traffic.weekly, strict=True)))
        )
    return DemandWeek(rps, source, traffic.growth_per_year)


def _from_csv(path: Path, weekly: np.ndarray) -> tuple[np.ndarray, str]:
    """Hour-of-week demand from a CSV of hourly measured rates (columns timestamp,rps)."""
    stamps: list[dt.datetime] = []
    rates: list[float] = []
    previous_line = 0
    for row in read_rows(path, ["timestamp", "rps"], ["timestamp", "rps"]):
        text = row.text("timestamp", required=True)
        try:
            when = dt.datetime.fromisoformat(text)
        except ValueError:
            raise row.error(
                "timestamp",
                msg("{text!r} is not an ISO-8601 time").format(text=text),
                msg("write times like {example}").format(example="2026-11-02T09:00"),
            ) from None
        raw = row.text("rps", required=True)
        try:
            rate = float(raw)
        except ValueError:
            raise row.error(
                "rps", msg("{raw!r} is not a number (requests per second)").format(raw=raw)
            ) from None
        if not np.isfinite(rate):
            raise row.error("rps", msg("{raw!r} is not a finite number").format(raw=raw))
        if rate < 0:
            raise row.error(
                "rps",
                msg("negative rate {rate}").format(rate=f"{rate:g}"),
                msg("request rates are 0 or more (line {line})").format(line=row.line),
            )
        if stamps:
            step_h = (when - stamps[-1]).total_seconds() / 3600.0
            if step_h <= 0:
                raise row.error(
                    "timestamp",
                    msg("{time} is not after the previous row's {previous} (line {line})").format(
                        time=text, previous=stamps[-1].isoformat(), line=previous_line
                    ),
                    msg("sort the rows by time and remove duplicates"),
                )
            if step_h > 1.0:
                raise row.error(
                    "timestamp",
                    msg("gap: {hours} hour(s) missing between {previous} (line {line}) and {time}").format(
                        hours=f"{step_h - 1:g}",
                        previous=stamps[-1].isoformat(),
                        line=previous_line,
                        time=text,
                    ),
                    msg("fill the missing hours (a rate of 0 is a measurement; a missing row is not)"),
                )
            if step_h < 1.0:
                raise row.error(
                    "timestamp",
                    msg("{time} is {minutes} minutes after the previous row: rows must be hourly").format(
                        time=text, minutes=f"{step_h * 60:g}"
                    ),
                    msg("aggregate the measurements to one row per hour"),
                )
        stamps.append(when)
        rates.append(rate)
        previous_line = row.line
    if len(rates) < 24:
        raise DataValidationError(
            msg("{n} hourly rows: a traffic CSV needs at least 24 (one day)").format(n=len(rates)),
            msg("export at least a day of hourly request rates (columns timestamp,rps)"),
            path=str(path),
        )
    if max(rates) <= 0:
        raise DataValidationError(
            msg("the traffic CSV has no requests (every rate is 0)"),
            msg("check the rps column"),
            path=str(path),
        )
    hour_of_week = np.array([s.weekday() * 24 + s.hour for s in stamps])
    values = np.asarray(rates)
    if len(rates) >= HOURS_PER_WEEK:
        sums = np.bincount(hour_of_week, weights=values, minlength=HOURS_PER_WEEK)
        counts = np.bincount(hour_of_week, minlength=HOURS_PER_WEEK)
        return sums / counts, msg("{file}: {n} hourly rates, mean per hour of the week").format(
            file=path.name, n=len(rates)
        )
    hour = hour_of_week % 24
    # 24+ consecutive hourly rows cover every hour of the day
    day = np.bincount(hour, weights=values, minlength=24) / np.bincount(hour, minlength=24)
    return (
        np.tile(day, 7) * np.repeat(weekly, 24),
        msg("{file}: {n} hourly rates, mean per hour of day × weekly factors").format(
            file=path.name, n=len(rates)
        ),
    )
