"""Every exact method is sound on decimal data: property tests against an exact brute force.

Instances are small (at most seven containers, six hosts) with demands of seven to ten decimals
cut near simple fractions of the capacity and nudged by a few units of the last decimal (so that
host loads land on the capacity, just above it, or within the checker's tolerance above it),
per-host caps, exclusions, ``<A, B, k>`` rules, priced host types and GPU cards. The optimum is
found by :func:`brute.brute_force`, which judges every placement with the checker. Every method
that accepts the instance, through :func:`solvers.solve` and (a few cases) through ``vbp solve
--json``, must satisfy ``bound <= optimum <= objective``, say "optimal" only at the optimum, and
never say "infeasible" when the brute force places every container.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from packing.errors import InputError
from packing.feasibility.checker import check
from packing.model.instance import App, HostType, Instance, Rule
from solvers import available, solve
from solvers.base import cheap_lower_bound, resolve_objective
from solvers.search.greedy import ffd
from tests.packing.brute import brute_force  # noqa: E402

METHODS = ("auto", "cpsat", "pulp", "colgen", "arcflow")
LIMIT = 2.0
FRACTIONS = (1 / 2, 1 / 3, 1 / 4, 1 / 5, 2 / 5, 3 / 10, 2 / 3, 1 / 6)


def _decimal(draw: Any, cap: float) -> float:
    """A demand near a simple fraction of ``cap`` with 7-10 decimals, nudged at its last digit."""
    d = draw(st.integers(7, 10))
    frac = draw(st.sampled_from(FRACTIONS))
    nudge = draw(st.integers(-3, 3)) * 10.0**-d
    return max(round(cap * frac + nudge, d), 10.0**-d)


def _fill(draw: Any, cap: float) -> list[float]:
    """Two or three demands that fill ``cap`` exactly (in decimals), at times one unit too much
    or (ten decimals) within the checker's tolerance above it."""
    d = draw(st.integers(7, 10))
    unit = 10.0**-d
    k = draw(st.integers(2, 3))
    cuts = sorted(draw(st.lists(st.integers(1, 9), min_size=k - 1, max_size=k - 1)))
    bounds = [0, *cuts, 10]
    parts = [(hi - lo) / 10 * cap + draw(st.integers(-3, 3)) * unit
             for lo, hi in zip(bounds[:-1], bounds[1:], strict=True) if hi > lo]
    parts[-1] = cap - sum(parts[:-1])
    extra = draw(st.sampled_from(["none", "none", "unit", "tol"]))
    if extra == "unit":
        parts[-1] += unit
    elif extra == "tol":
        parts[-1] += 5e-10
        d = 10
    return [round(p, d) for p in parts if round(p, d) > 0]


@st.composite
def decimal_instances(draw: Any, *, gpus: bool = True) -> Instance:
    """A small instance with 7-10-decimal demands (see the module docstring)."""
    n_r = draw(st.integers(1, 2))
    resources = ("cpu", "mem")[:n_r]
    base = draw(st.sampled_from([1.0, 0.5, 2.0, 0.9999999]))
    sizes: list[float] = []
    for _ in range(draw(st.integers(2, 3))):
        sizes += _fill(draw, base)
    sizes = draw(st.permutations(sizes))[:7]
    use_gpu = gpus and draw(st.integers(0, 3)) == 0
    apps = []
    for i, s in enumerate(sizes):
        demand = (s, *(_decimal(draw, base) for _ in resources[1:]))
        mph = draw(st.sampled_from([None, None, None, 1, 2]))
        cards, whole = 0, False
        share: tuple[float, ...] = ()
        if use_gpu and draw(st.booleans()):
            cards = 1
            whole = draw(st.integers(0, 3)) == 0
            if not whole:
                share = (draw(st.sampled_from([0.5, 0.5000001, 0.4999999, 0.3333333333,
                                               0.2500000004])),)
        apps.append(App(f"a{i}", demand, 1, mph, cards, share, whole))
    if len(apps) < 7 and draw(st.booleans()):  # a repeated app, capped at times
        a0 = apps[0]
        apps[0] = App("a0", a0.demand, 2, draw(st.sampled_from([None, 1])), a0.gpu_cards,
                      a0.gpu_per_card, a0.gpu_whole)
    n = sum(a.count for a in apps)
    priced = draw(st.booleans())
    n_g = draw(st.integers(1, 2)) if use_gpu else 0
    g_cap = (1.0,) if n_g else ()
    types = [HostType("t0", (base,) * n_r, draw(st.integers(max(2, n - 2), n)),
                      draw(st.sampled_from([1.0, 2.0, 3.0, 2.25])) if priced else 1.0, None,
                      n_g, g_cap, None)]
    if priced:
        cap2 = draw(st.sampled_from([base / 2, base * 2]))
        types.append(HostType("t1", (cap2,) * n_r, draw(st.integers(1, 3)),
                              draw(st.sampled_from([1.0, 1.5, 4.0])), None, n_g, g_cap, None))
    names = [a.name for a in apps]
    rules: list[Rule] = []
    excl: list[tuple[str, str]] = []
    if len(apps) > 1:
        for a, b, k in draw(st.lists(st.tuples(st.sampled_from(names), st.sampled_from(names),
                                               st.integers(0, 2)), max_size=2)):
            if a != b or k > 0:  # <a, a, 0> would forbid a everywhere
                rules.append(Rule(a, b, k))
        for a, b in draw(st.lists(st.tuples(st.sampled_from(names), st.sampled_from(names)),
                                  max_size=1)):
            if a != b:
                excl.append((a, b))
    return Instance("dec", resources, tuple(types), tuple(apps), tuple(rules), tuple(excl),
                    ("gpu",) if use_gpu else ())


def _optimum(inst: Instance) -> float:
    hosts, cost, _ = brute_force(inst)
    return cost if resolve_objective(inst, None) == "cost" else hosts


def _assert_sound(inst: Instance, method: str, opt: float, res: Any) -> None:
    """The soundness conditions of the module docstring for one result."""
    what = (method, res.status, res.objective, res.bound, opt, res.proofs)
    if opt == float("inf"):  # nothing places every container
        assert res.status in ("infeasible", "unknown"), what
        assert res.placement is None, what
        return
    assert res.status != "infeasible", what
    assert res.bound <= opt + 1e-9, ("bound above the optimum", *what)
    if res.placement is not None:
        assert check(inst, res.placement, require_all=True) == [], what
        assert res.objective >= opt - 1e-9, ("objective below the optimum", *what)
    if res.status == "optimal":
        assert res.objective == pytest.approx(opt), ("false optimal", *what)


def _closed_at_once(inst: Instance) -> bool:
    """Whether first fit meets the cheap bound (every method then stops at once)."""
    kind = resolve_objective(inst, None)
    g = ffd(inst, kind)
    return g.complete and g.objective <= cheap_lower_bound(inst, kind)[0] + 1e-9


def _solve_all(inst: Instance, methods: tuple[str, ...] = METHODS) -> int:
    """Solve with every method that accepts ``inst`` and check each result; returns how many."""
    opt = _optimum(inst)
    done = 0
    for method in methods:
        if not available(method):
            continue
        try:
            res = solve(inst, method, time_limit=LIMIT, workers=1)
        except InputError:  # the method does not take this instance
            continue
        _assert_sound(inst, method, opt, res)
        done += 1
    return done


HEALTH = [HealthCheck.too_slow, HealthCheck.filter_too_much]


@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=HEALTH)
@given(decimal_instances())
def test_every_method_sound_on_decimal_data(inst: Instance) -> None:
    assume(not _closed_at_once(inst))  # those stop at first fit: little to learn
    _solve_all(inst)


@pytest.mark.slow
@settings(max_examples=1000, deadline=None, derandomize=True, suppress_health_check=HEALTH)
@given(decimal_instances())
def test_every_method_sound_on_decimal_data_many(inst: Instance) -> None:
    assume(not _closed_at_once(inst))
    _solve_all(inst)
