"""Kubernetes quantities: hand-computed values for every suffix, exponents, rounding and errors."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from packing.model.quantity import count, cpu_cores, memory_bytes, memory_gib, parse_quantity


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("500m", Fraction(1, 2)), ("1.5", Fraction(3, 2)), ("2", Fraction(2)), (".5", Fraction(1, 2)),
        ("5.", Fraction(5)), ("+3", Fraction(3)), ("-1", Fraction(-1)),
        ("1n", Fraction(1, 10**9)), ("1u", Fraction(1, 10**6)),
        ("1k", Fraction(1000)), ("1M", Fraction(10**6)), ("1G", Fraction(10**9)),
        ("1T", Fraction(10**12)), ("1P", Fraction(10**15)), ("1E", Fraction(10**18)),
        ("1Ki", Fraction(1024)), ("1Mi", Fraction(2**20)), ("4Gi", Fraction(4 * 2**30)),
        ("1Ti", Fraction(2**40)), ("1Pi", Fraction(2**50)), ("1Ei", Fraction(2**60)),
        ("1e3", Fraction(1000)), ("1E3", Fraction(1000)), ("12e-1", Fraction(6, 5)),
        ("1.5e+2", Fraction(150)), ("0.1", Fraction(1, 10)),
    ],
)
def test_values(text: str, value: Fraction) -> None:
    assert parse_quantity(text) == value


def test_plain_numbers_from_yaml() -> None:
    assert parse_quantity(2) == 2
    assert parse_quantity(0.25) == Fraction(1, 4)
    assert parse_quantity(0.1) == Fraction(1, 10)


def test_scheduler_rounding_is_up() -> None:
    assert cpu_cores("100m") == 0.1
    assert cpu_cores("1.0001") == 1.001  # 1000.1 millicores round up to 1001
    assert cpu_cores("250u") == 0.001
    assert memory_bytes("1.5") == 2
    assert memory_bytes("4Gi") == 4 * 2**30
    assert memory_gib("512Mi") == 0.5
    assert memory_gib("2G") == pytest.approx(2e9 / 2**30)


@pytest.mark.parametrize("bad", ["4GB", "1Kb", "abc", "", "1.2.3", "e3", "1e", "1 Gi", "--1", "1ki", "1e99"])
def test_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_quantity(bad)


def test_unknown_unit_is_named() -> None:
    with pytest.raises(ValueError, match="unknown unit 'GB'"):
        parse_quantity("4GB")


def test_refused_types() -> None:
    for bad in (True, None, float("nan"), float("inf"), [1]):
        with pytest.raises(ValueError):
            parse_quantity(bad)  # type: ignore[arg-type]


def test_count() -> None:
    assert count("2") == 2
    assert count(3) == 3
    with pytest.raises(ValueError, match="whole"):
        count("500m")


@given(st.integers(min_value=0, max_value=10**9), st.sampled_from(["", "m", "k", "Mi", "Gi"]))
def test_integer_with_suffix_matches_multiplier(n: int, suffix: str) -> None:
    mult = {"": 1, "m": Fraction(1, 1000), "k": 1000, "Mi": 2**20, "Gi": 2**30}[suffix]
    assert parse_quantity(f"{n}{suffix}") == n * mult
