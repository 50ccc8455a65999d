"""Exact cover by tight patterns (``solvers.exact.cover``) and its use in ``auto``."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from packing.feasibility.checker import check
from packing.feasibility.predicates import fits, rule_broken
from packing.model.instance import App, HostType, Instance, Placement, Rule
from solvers import solve
from solvers.exact.cover import solve_cover, tight_patterns


def _items(sizes: list[tuple[float, ...]], cap: tuple[float, ...], hosts: int = 6) -> Instance:
    names = tuple(f"r{k}" for k in range(len(cap)))
    return Instance("t", names, (HostType("h", cap, hosts),),
                    tuple(App(f"i{k}", s, 1) for k, s in enumerate(sizes)))


def _brute(inst: Instance, hosts: int) -> set[tuple[int, ...]]:
    """Every count vector within caps, rules and capacity, with load at least C - slack."""
    cap = np.asarray(inst.host_types[0].capacity)
    slack = hosts * cap - inst.counts @ inst.demand
    out = set()
    for n in itertools.product(*(range(int(c) + 1) for c in inst.counts)):
        v = np.array(n)
        load = v @ inst.demand
        ra, rb, rk = inst.rule_arrays
        if (v > inst.cap).any() or (len(ra) and rule_broken(v[ra], v[rb], rk).any()):
            continue
        if v.any() and fits(load, cap).all() and (load >= cap - slack - 1e-9).all():
            out.add(tuple(int(x) for x in v))
    return out


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_tight_patterns_are_exactly_the_brute_force_ones(data: st.DataObject) -> None:
    """Capacities, caps and one random <A, B, k> rule; compared with every count vector."""
    n_apps = data.draw(st.integers(1, 5))
    dims = data.draw(st.integers(1, 2))
    demand = [tuple(float(data.draw(st.integers(1, 6))) for _ in range(dims))
              for _ in range(n_apps)]
    counts = [data.draw(st.integers(1, 3)) for _ in range(n_apps)]
    caps = [data.draw(st.none() | st.integers(1, 2)) for _ in range(n_apps)]
    rules = []
    if n_apps >= 2 and data.draw(st.booleans()):
        a, b = data.draw(st.permutations(range(n_apps)))[:2]
        rules.append(Rule(f"a{a}", f"a{b}", data.draw(st.integers(0, 2))))
    cap = (10.0,) * dims
    inst = Instance("b", tuple(f"r{k}" for k in range(dims)), (HostType("h", cap, 20),),
                    tuple(App(f"a{k}", d, c, max_per_host=m)
                          for k, (d, c, m) in enumerate(zip(demand, counts, caps, strict=True))),
                    rules=tuple(rules))
    volume = int(np.ceil((inst.counts @ inst.demand / 10.0).max() - 1e-9))
    for hosts in (volume, volume + 1):
        pats, complete = tight_patterns(inst, hosts)
        assert complete
        got = {tuple(int(x) for x in row) for row in pats}
        assert len(got) == len(pats)  # no pattern twice
        assert got == _brute(inst, hosts)


def test_finds_the_perfect_packing() -> None:
    # (6,4), (7,3), (5,5) fill three hosts of 10 exactly; first fit uses 4
    inst = _items([(6.0,), (4.0,), (7.0,), (3.0,), (5.0,), (5.0,)], (10.0,))
    res = solve_cover(inst, 3, time_limit=60)
    assert res.host_of is not None and not res.infeasible
    assert check(inst, Placement.from_arrays(inst, res.host_of), require_all=True) == []
    assert len(np.unique(res.host_of)) == 3


def test_proves_that_the_volume_bound_is_too_low() -> None:
    # total (20, 20) on hosts of (10, 10): two hosts would have to be filled exactly, and no
    # subset of these items sums to (10, 10)
    sizes = [(6.0, 2.0), (2.0, 6.0), (6.0, 2.0), (2.0, 6.0), (4.0, 4.0)]
    inst = _items(sizes, (10.0, 10.0))
    res = solve_cover(inst, 2, time_limit=60)
    assert res.infeasible and res.complete and res.host_of is None
    auto = solve(inst, "auto", time_limit=25)
    assert auto.status == "optimal" and auto.objective == 3 and auto.bound == 3
    assert auto.proofs["bound"] == "cover"
    assert check(inst, auto.placement, require_all=True) == []  # type: ignore[arg-type]


def test_caps_limit_the_patterns() -> None:
    # two containers of 5 fill a host exactly, but at most one per host is allowed
    inst = Instance("c", ("s",), (HostType("h", (10.0,), 4),),
                    (App("a", (5.0,), 2, max_per_host=1), App("b", (5.0,), 2)))
    pats, complete = tight_patterns(inst, 2)
    assert complete
    assert {tuple(p) for p in pats.tolist()} == {(1, 1), (0, 2)}
    res = solve_cover(inst, 2, time_limit=60)
    assert res.host_of is not None
    assert check(inst, Placement.from_arrays(inst, res.host_of), require_all=True) == []


def test_an_incomplete_pattern_list_proves_nothing() -> None:
    # 3 + 3 + 4 | 7 + 3 | 6 + 4 fills 3 hosts exactly; the two-container patterns alone hold every
    # app but no partition of the 7 containers: cut to them, the cover finds nothing and must not
    # claim that no packing on 3 hosts exists
    inst = _items([(3.0,), (3.0,), (4.0,), (7.0,), (3.0,), (6.0,), (4.0,)], (10.0,))
    full = solve_cover(inst, 3)
    assert full.complete and full.host_of is not None
    short = solve_cover(inst, 3, max_patterns=8)
    assert not short.complete and short.patterns == 5 and short.host_of is None
    assert not short.infeasible
    none = solve_cover(inst, 3, max_patterns=2)  # no pattern listed at all
    assert not none.complete and none.host_of is None and not none.infeasible
