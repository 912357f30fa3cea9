"""gpuwise.units: the one way every view writes values."""

from __future__ import annotations

import math

from gpuwise import units


def test_unknown_is_one_token():
    for f in (
        units.value,
        units.number,
        units.size,
        units.money,
        units.seconds,
        units.duration,
        units.percent,
    ):
        assert f(None) == units.UNKNOWN
    assert units.number(math.nan) == units.UNKNOWN and units.money(math.nan, "USD") == units.UNKNOWN


def test_values_and_numbers():
    assert units.value(True) == "yes" and units.value([]) == "none" and units.value([1, None]) == "1, —"
    assert units.value(3) == "3" and units.value("a[b]") == "a[b]"
    assert (
        units.number(1234.6) == "1,235" and units.number(56.78) == "56.8" and units.number(1.2345) == "1.23"
    )
    assert (
        units.number(989.5, 1) == "989.5"
        and units.number(67.0, 1) == "67"
        and units.number(12345, 0) == "12,345"
    )
    assert units.number(3.35, 2, "TB/s") == "3.35 TB/s" and units.number(math.inf) == "∞"
    assert units.number(135148564480) == "135,148,564,480"


def test_sizes_money_times_percent():
    assert units.size(135148564480) == "125.9 GiB" and units.size(512) == "512 B"
    assert units.size(3 * 2**40 + 2**39) == "3.5 TiB" and units.size(4096) == "4 KiB"
    assert units.money(31464, "USD") == "$31,464.00" and units.money(3.5, "GBP") == "GBP 3.50"
    assert (
        units.money(12345, "CNY", compact=True) == "¥12.3k" and units.money(1.25e6, compact=True) == "1.25M"
    )
    assert (
        units.seconds(13.8) == "13.8 s"
        and units.seconds(0.16) == "160 ms"
        and units.seconds(7.8e-4) == "780 us"
    )
    assert units.duration(2.5 * 86400) == "2.5 d" and units.duration(42 * 60) == "42 min"
    assert units.duration(30) == "30 s" and units.duration(math.inf) == "never"
    assert units.percent(0.803) == "80%" and units.percent(0.8034, 1) == "80.3%"
