"""packing.plan.model: reserve then headroom (exact), the demands' grid, growth, stranded capacity."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

from packing.errors import InputError
from packing.model.instance import App
from packing.plan.model import (
    Adjustment,
    Demand,
    HostOffer,
    build_instance,
    demand_grid,
    parse_growth,
    parse_headroom,
    parse_reserve,
    stranded,
)

GI = 2**30
MI = 2**20


def test_reserve_then_headroom_by_hand() -> None:
    # 16 cores, 64 GiB; reserve 100m, 128Mi; headroom 15%: (16 - 0.1) * 0.85 = 13.515 cores,
    # (64 GiB - 128 MiB) * 0.85 = 58,384,061,644.8 bytes -> floor to whole bytes.
    adj = Adjustment(parse_reserve("100m,128Mi"), parse_headroom("15%"))
    cpu, mem, gpu = adj.planned(HostOffer("std", 16000, 64 * GI))
    assert cpu == 13515
    assert mem == (64 * GI - 128 * MI) * 85 // 100
    assert gpu == 0
    # the order matters: headroom first would give 16 * 0.85 - 0.1 = 13.5
    assert cpu != 13500


def test_grid_rounding_loses_no_packing() -> None:
    # memory demands are multiples of 256 MiB: the planned memory is floored to that step
    d = Demand((App("a", (0.5, 0.25, 0.0), 3), App("b", (1.0, 0.75, 0.0), 2)))
    assert demand_grid(d) == (500, 256 * MI, 1)
    adj = Adjustment((0, 0, 0), parse_headroom("10%"))
    _c, m, _g = adj.planned(HostOffer("h", 3000, 3 * GI), demand_grid(d))
    assert m == 2.5 * GI  # 2.7 GiB floored to a multiple of 0.25 GiB
    inst = build_instance(d, [HostOffer("h", 3000, 3 * GI)], [2], adj)
    assert inst.host_types[0].capacity == (2.5, 2.5, 110)  # 2.7 cores floored to 0.5 steps
    assert inst.resources == ("cpu", "memory", "pods")


def test_grid_reads_millicores_and_bytes() -> None:
    # 0.7 and 1.05 cores are not exact floats: read as 700m and 1050m; 2G is 2e9 bytes exactly
    d = Demand((App("a", (0.7, 2e9 / 2**30, 0.0), 1), App("b", (1.05, 0.5, 0.0), 1)))
    assert demand_grid(d) == (350, math.gcd(2 * 10**9, 2**29), 1)


def test_grid_none_for_non_base_units() -> None:
    d = Demand((App("a", (0.0005, 1.0, 0.0), 1),))
    assert demand_grid(d)[0] is None


def test_headroom_forms() -> None:
    h = parse_headroom("cpu=20%,memory=10%")
    assert h == (Fraction(1, 5), Fraction(1, 10), Fraction(0))
    assert parse_headroom("15%") == (Fraction(3, 20), Fraction(3, 20), Fraction(0))
    assert parse_headroom("gpu=25%")[2] == Fraction(1, 4)
    assert parse_headroom(0.15)[0] == Fraction(3, 20)
    for bad in ("15", "100%", "-5%", "cpu=1x", "disk=5%"):
        with pytest.raises(InputError):
            parse_headroom(bad)


def test_reserve_forms() -> None:
    assert parse_reserve("cpu=100m,memory=128Mi") == (100, 128 * MI, 0)
    assert parse_reserve("1,1Gi,1") == (1000, GI, 1)
    for bad in ("100m,128", "100x", "cpu=1,2", "1,2Gi,3,4", "cpu=1,cpu=2"):
        with pytest.raises(InputError):
            parse_reserve(bad)


def test_reserve_that_leaves_nothing() -> None:
    adj = Adjustment(parse_reserve("16,1Gi"), parse_headroom(None))
    with pytest.raises(InputError, match="leaves no cpu"):
        adj.planned(HostOffer("std", 16000, 64 * GI))


def test_growth_rounds_up_exactly() -> None:
    d = Demand((App("a", (1.0, 1.0, 0.0), 4), App("b", (1.0, 1.0, 0.0), 3)))
    assert [a.count for a in d.scaled(1.25).apps] == [5, 4]  # 5.0 exactly, 3.75 -> 4
    assert [a.count for a in d.scaled(1.1).apps] == [5, 4]  # 4.4 -> 5, 3.3 -> 4
    assert parse_growth("1,1.25, 2") == (1.0, 1.25, 2.0)
    for bad in ("0", "-1", "1,x", "nan", "inf", "", "1,2,1.0"):
        with pytest.raises(InputError):
            parse_growth(bad)


def test_combine_refuses_clashing_names() -> None:
    a = Demand((App("web", (1.0, 1.0, 0.0), 1),), sources={"web": "a.csv"})
    b = Demand((App("web", (1.0, 1.0, 0.0), 1),), sources={"web": "b.csv"})
    with pytest.raises(InputError, match="also used in a.csv"):
        Demand.combine([a, b])


@pytest.mark.parametrize("app, field, reason", [
    (App("a", (1.0, 2.0), 1), "apps[0] (a).demand", "has 2 values, expected 3"),
    (App("a", (math.nan, 2.0, 0.0), 1), "apps[0] (a).demand[0]", "expected a finite number, got nan"),
    (App("a", (1.0, 2.0, 0.5), 1), "apps[0] (a).demand[2]", "GPU cards are whole, got 0.5"),
])
def test_a_demand_built_in_python_is_checked(app: App, field: str, reason: str) -> None:
    """As a DEMAND file's apps: a short vector raised an IndexError in the plan, NaN a ValueError."""
    with pytest.raises(InputError) as e:
        Demand((app,))
    assert [(p.source, p.field, p.reason) for p in e.value.problems] == [("demand", field, reason)]


def test_a_demand_by_resource_name_becomes_the_vector() -> None:
    loose: Any = {"cpu": 1.5, "memory": 4}
    d = Demand([App("a", loose, 2)])  # type: ignore[arg-type]
    assert d.apps == (App("a", (1.5, 4, 0.0), 2),)


def test_stranded_by_hand() -> None:
    demand = np.array([[2.0, 4.0], [1.0, 0.0]])  # (apps, resources)
    free = np.array([[1.0, 10.0],   # app 1 fits (uses cpu): cpu usable; no memory user fits
                     [0.5, 3.0],    # nothing fits: all stranded
                     [2.0, 4.0]])   # app 0 fits exactly: nothing stranded
    got = stranded(demand, free)
    assert got.tolist() == [[0.0, 10.0], [0.5, 3.0], [0.0, 0.0]]


def test_scenario_gap_is_relative_to_the_plan() -> None:
    from packing.model.instance import Placement
    from packing.plan.result import summarise

    d = Demand((App("a", (1.0, 1.0, 0.0), 4),))
    for price, bound, value in ((None, 1.0, 2.0), (3.0, 4.5, 6.0)):
        offers = [HostOffer("h", 2000, 2 * GI, price=price)]
        inst = build_instance(d, offers, [4])
        s = summarise(inst, 1.0, Placement({"a": (0, 0, 1, 1)}), "feasible", bound, offers, 0.0)
        assert (s.hosts, s.cost, s.bound) == (2, None if price is None else value, bound)
        assert s.gap == pytest.approx((value - bound) / value)  # 0.5, then 0.25
