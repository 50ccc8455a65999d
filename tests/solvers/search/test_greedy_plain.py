"""First fit where only capacities and caps bind: the fast path makes the general path's decisions."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import solvers.search.greedy as greedy
from packing.feasibility.checker import check
from packing.feasibility.predicates import ClusterState
from packing.generators.random import generate_random
from packing.model.instance import App, HostType, Instance


def _general(inst: Instance, kind: str, measure: str) -> greedy.Greedy:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(greedy, "plain_applies", lambda state: False)
        mp.setattr(greedy, "COMPILED_MIN_WORK", 10**18)
        return greedy.first_fit(inst, kind, measure)  # type: ignore[arg-type]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), types=st.integers(1, 3), measure=st.sampled_from(["max", "sum"]),
       kind=st.sampled_from(["hosts", "cost", "deployed"]), caps=st.sampled_from([0.0, 0.5, 1.0]),
       tight=st.sampled_from([0.5, 0.8, 1.0]), few=st.booleans())
def test_plain_first_fit_equals_general_first_fit(seed: int, types: int, measure: str, kind: str,
                                                  caps: float, tight: float, few: bool) -> None:
    inst = generate_random(8, 60, rule_density=0.0, exclusion_density=0.0, cap_fraction=caps,
                           n_host_types=types, tightness=tight, seed=seed)
    if few:  # too few hosts: some containers stay unplaced
        inst = inst.replace(host_types=tuple(dataclasses.replace(t, count=max(1, t.count // 3))
                                             for t in inst.host_types))
    assert greedy.plain_applies(ClusterState(inst))
    fast = greedy.first_fit(inst, kind, measure)  # type: ignore[arg-type]
    slow = _general(inst, kind, measure)
    assert np.array_equal(fast.host_of, slow.host_of)
    assert fast.objective == slow.objective and fast.placed == slow.placed
    assert not check(inst, fast.placement(inst))


def test_plain_first_fit_on_decimal_loads_at_the_limit() -> None:
    # 0.1 + 0.2 lands one ulp above 0.3: the tolerance accepts it, exactly as the checker does
    inst = Instance("dec", ("r",), (HostType("h", (0.3,), 4), HostType("g", (0.25,), 2)),
                    (App("a", (0.2,), 3, max_per_host=1), App("b", (0.1,), 5), App("z", (0.0,), 2),
                     App("n", (0.31,), 1)))
    for kind in ("hosts", "cost", "deployed"):
        fast = greedy.first_fit(inst, kind)  # type: ignore[arg-type]
        slow = _general(inst, kind, "max")
        assert np.array_equal(fast.host_of, slow.host_of)
        assert fast.placed == inst.n_containers - 1  # the 0.31 container fits nowhere
        assert not check(inst, fast.placement(inst))


def test_one_resource_tries_one_size_measure() -> None:
    inst = Instance("one", ("r",), (HostType("h", (10.0,), 5),), (App("a", (6.0,), 2), App("b", (4.0,), 3)))
    g = greedy.ffd(inst)
    assert g.complete and g.objective == 3.0 and g.measure == "max"
