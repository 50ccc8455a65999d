"""Balanced assignment of time curves (``solvers.search.curves``): placements, rules, the large path."""

from __future__ import annotations

import dataclasses

import numpy as np
from hypothesis import HealthCheck, assume, given, settings

from packing.feasibility.checker import check
from packing.model.instance import App, HostType, Instance, Placement, Rule
from solvers.base import SolveOptions
from solvers.exact.auto import AutoSettings, solve_auto
from solvers.search.curves import (
    balance,
    balance_search,
    excluded_mass,
    first_fit_rest,
    group_weights,
    improve,
    one_type,
    open_hosts,
    settle,
)
from solvers.search.spread import applicable, work_arrays
from tests.packing.brute import brute_force
from tests.packing.strategies import tiny_instances
from tests.solvers.warm import warm_search

LARGE = AutoSettings(spread_min_work=0, spread_balance_min_left=0.0)
"""Settings that send every instance to the large-scale path and always balance time curves."""


def _hosts(host_of: np.ndarray) -> int:
    return len(np.unique(host_of[host_of >= 0]))


def _ok(inst: Instance, host_of: np.ndarray) -> bool:
    return check(inst, Placement.from_arrays(inst, host_of, None)) == []


def _day_night(n: int = 3) -> Instance:
    """``n`` day containers (4, 1) and ``n`` night ones (1, 4) on hosts of capacity 5 at both points.

    Two of a kind never share a host (8 > 5); one of each fills a host exactly (5, 5), so the
    optimum is ``n`` hosts, each with one day and one night container.
    """
    return Instance("dn", ("cpu_t00", "cpu_t01"), (HostType("h", (5.0, 5.0), 2 * n),),
                    (App("day", (4.0, 1.0), n), App("night", (1.0, 4.0), n)))


def test_balance_pairs_curves_whose_peaks_differ() -> None:
    inst = _day_night(3)
    h = balance(inst, 3)
    assert _ok(inst, h) and (h >= 0).all() and _hosts(h) == 3
    day, night = h[:3], h[3:]
    assert sorted(day.tolist()) == sorted(night.tolist()) == sorted(set(day.tolist()))


def test_balance_finishes_on_further_hosts() -> None:
    """Two open hosts cannot take three pairs: the rest goes by first fit to the next host."""
    inst = _day_night(3)
    h = balance(inst, 2)
    assert _ok(inst, h) and (h >= 0).all() and _hosts(h) == 3
    left = balance(inst, 2, finish=False)
    assert (left == -1).sum() == 2 and _ok(inst, left)


def _timed(seed: int, n_apps: int = 40, points: int = 8, types: int = 2) -> Instance:
    """Random non-integer CPU curves (a bump at a random time) and flat memory, rules and caps."""
    rng = np.random.default_rng(seed)
    t = np.arange(points)
    apps = []
    for a in range(n_apps):
        peak = rng.uniform(0.5, 6.0)
        curve = peak * (0.3 + 0.7 * np.exp(-0.5 * ((t - rng.integers(points)) / 1.5) ** 2))
        mem = rng.uniform(0.5, 12.0)
        apps.append(App(f"a{a}", tuple(np.round(curve, 3)) + (round(mem, 3),) * points,
                        int(rng.integers(1, 6))))
    names = tuple(f"cpu_t{i:02d}" for i in range(points)) + tuple(f"mem_t{i:02d}" for i in range(points))
    hts = [HostType("big", (16.0,) * points + (32.0,) * points, 60)]
    if types > 1:
        hts.append(HostType("small", (8.0,) * points + (16.0,) * points, 60))
    rules = [Rule("a0", "a1", 0), Rule("a2", "a2", 1), Rule("a3", "a4", 1)]
    return Instance(f"timed{seed}", names, tuple(hts), tuple(apps), tuple(rules))


def test_balance_keeps_rules_and_is_deterministic() -> None:
    inst = _timed(1)
    a, b = balance(inst, 10), balance(inst, 10)
    assert np.array_equal(a, b) and (a >= 0).all() and _ok(inst, a)
    assert check(inst, Placement.from_arrays(inst, a, None), require_all=True) == []


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tiny_instances())
def test_balance_is_feasible_and_never_beats_brute_force(inst: Instance) -> None:
    """On tiny instances (rules, caps, non-integer data) every placement passes the checker."""
    assume(applicable(inst))
    opt, _, _ = brute_force(inst)
    h = balance(inst, max(1, inst.n_hosts // 2))
    assert _ok(inst, h)
    if (h >= 0).all():
        assert _hosts(h) >= opt
    elif opt < float("inf"):  # what the open hosts leave, first fit may still fail to place
        assert check(inst, Placement.from_arrays(inst, h, None), require_all=False) == []


def test_group_weights_count_a_curve_once() -> None:
    inst = Instance("w", ("cpu_t00", "cpu_t01", "cpu_t02", "disk"),
                    (HostType("h", (10.0, 10.0, 10.0, 10.0), 2),),
                    (App("a", (5.0, 5.0, 5.0, 5.0), 2),))
    d, c = work_arrays(inst, True, 49)
    w = group_weights(inst, d, c, inst.counts, 49)
    # every resource is half full: the curve's three points share the weight of disk
    assert np.allclose(w, [1 / 6, 1 / 6, 1 / 6, 1 / 2])


def test_excluded_mass_counts_partners_both_ways() -> None:
    inst = Instance("x", ("cpu",), (HostType("h", (10.0,), 5),),
                    (App("a", (1.0,), 2), App("b", (1.0,), 9), App("c", (1.0,), 3)),
                    (Rule("a", "b", 0), Rule("c", "a", 0), Rule("b", "c", 1)))
    assert excluded_mass(inst, 5).tolist() == [5 + 3, 2, 2]


def test_one_type_and_improve_free_hosts_on_the_type_used() -> None:
    inst = _timed(2)
    h = balance(inst, 40)  # far too many open hosts: the tabu search frees them
    assert (h >= 0).all() and _ok(inst, h)
    sub = one_type(inst, h)
    assert sub is not None and sub[1] == 0 and sub[0].n_hosts == 60
    warm_search()
    better = improve(inst, h, target=1, time_limit=2.0, seed=0)
    assert better is not None and _hosts(better) < _hosts(h)
    assert check(inst, Placement.from_arrays(inst, better, None), require_all=True) == []
    assert set(inst.host_type_of[np.unique(better)]) == {0}
    mixed = h.copy()
    mixed[0] = 60 + 59  # a container on the second type: several types, no search
    assert one_type(inst, mixed) is None


def test_balance_search_keeps_the_fewest_hosts() -> None:
    inst = _timed(3)
    seen: list[int] = []
    h = balance_search(inst, 5.0, deadline=float("inf"), slack=(0.0, 1.0), settle_limit=1.0,
                       on_found=lambda _h, n: seen.append(n))
    assert h is not None and _ok(inst, h) and (h >= 0).all()
    assert _hosts(h) == min(seen)


def test_auto_large_path_balances_time_curves_on_several_types() -> None:
    inst = _timed(4, n_apps=60)
    warm_search()
    r = solve_auto(inst, SolveOptions(time_limit=6.0), settings=LARGE)
    assert r.placement is not None and check(inst, r.placement, require_all=True) == []
    assert any(p.method == "balance" for p in r.history)
    assert r.objective is not None and r.objective >= r.bound - 1e-9
    off = solve_auto(inst, SolveOptions(time_limit=5.0),
                     settings=dataclasses.replace(LARGE, spread_balance=False))
    assert not any(p.method == "balance" for p in off.history)


def _three_two() -> Instance:
    """Sizes 3, 3, 2, 2, 2 on hosts of 6: the optimum is 2 hosts (3+3, 2+2+2).

    Balancing on 2 hosts puts 3 and 2 on each and leaves the last 2 (5 + 2 > 6).
    """
    return Instance("32", ("cpu",), (HostType("h", (6.0,), 3),),
                    (App("three", (3.0,), 2), App("two", (2.0,), 3)))


def test_settle_places_the_leftover_on_the_open_hosts() -> None:
    inst = _three_two()
    left = balance(inst, 2, finish=False)
    assert (left == -1).sum() == 1
    hosts = open_hosts(inst, 2)
    warm_search()
    h = settle(inst, left, hosts, target=2, time_limit=30.0, seed=0)
    assert h is not None and _ok(inst, h) and (h >= 0).all() and _hosts(h) == 2
    assert h[0] == h[1] and len(set(h[2:].tolist())) == 1  # 3+3 and 2+2+2
    again = settle(inst, left, hosts, target=2, time_limit=30.0, seed=0)
    assert again is not None and np.array_equal(h, again)
    # without it the leftover goes by first fit to a third host
    ff = first_fit_rest(inst, left, hosts)
    assert _ok(inst, ff) and (ff >= 0).all() and _hosts(ff) == 3


def test_balance_search_settles_instead_of_opening_hosts() -> None:
    inst = _three_two()
    warm_search()
    h = balance_search(inst, 2.0, deadline=float("inf"), slack=(0.0,), settle_limit=30.0)
    assert h is not None and _ok(inst, h) and _hosts(h) == 2
    h0 = balance_search(inst, 2.0, deadline=float("inf"), slack=(0.0,), settle_limit=0.0)
    assert h0 is not None and _ok(inst, h0) and _hosts(h0) == 3
