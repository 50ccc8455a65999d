"""solvers.plan.type_bounds: the per-type count bound is first fit's and never cuts off an optimum."""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import pytest

from packing.model.instance import App, HostType, Instance, Rule
from solvers.plan.type_bounds import cost_cap, count_bounds, fits_alone, type_bound
from tests.vbp.plan_oracle import optimum


def test_bound_by_hand() -> None:
    # capacity 10; five containers of 4 (two per host) -> 3 hosts on "small";
    # "tiny" (capacity 3) takes none of them; "big" (capacity 20) takes five per host -> 1
    inst = Instance("h", ("cpu",), (HostType("small", (10.0,), 1), HostType("tiny", (3.0,), 1),
                                    HostType("big", (20.0,), 1)), (App("a", (4.0,), 5),))
    assert [type_bound(inst, t) for t in range(3)] == [3, 0, 1]
    # counting hosts, one big host is a whole plan: no optimal plan has more than 1 host
    assert count_bounds(inst).tolist() == [1, 0, 1]
    assert fits_alone(inst).tolist() == [[True, False, True]]


def test_bound_honours_caps_and_rules() -> None:
    inst = Instance("r", ("cpu",), (HostType("h", (100.0,), 1),),
                    (App("a", (1.0,), 6, max_per_host=2), App("b", (1.0,), 2)),
                    rules=(Rule("a", "b", 0),))
    # a: 2 per host -> 3 hosts; b may not join a -> one more host
    assert count_bounds(inst).tolist() == [4]


def _random_case(rng: random.Random) -> Instance:
    n_types = rng.randint(2, 3)
    types = tuple(HostType(f"t{t}", (float(rng.randint(4, 12)), float(rng.randint(4, 16))), 1,
                           cost=float(rng.choice([1, 2, 3, 5])))
                  for t in range(n_types))
    apps = tuple(App(f"a{i}", (float(rng.randint(1, 6)), float(rng.randint(1, 8))),
                     rng.randint(1, 4), max_per_host=rng.choice([None, None, 1, 2]))
                 for i in range(rng.randint(2, 3)))
    rules = (Rule("a0", "a1", rng.randint(0, 1)),) if rng.random() < 0.5 else ()
    return Instance("rand", ("cpu", "mem"), types, apps, rules)


def _oracle(inst: Instance, counts: list[int]) -> Fraction | None:
    types = [([int(c) for c in t.capacity], Fraction(t.cost), n)
             for t, n in zip(inst.host_types, counts, strict=True)]
    apps = [([int(d) for d in a.demand], a.count, a.max_per_host) for a in inst.apps]
    idx = inst.app_index
    rules = [(idx[r.a], idx[r.b], r.k) for r in inst.rules]
    return optimum(types, apps, rules)[0]


@pytest.mark.parametrize("seed", range(8))
def test_bound_keeps_the_optimum_under_limits(seed: int) -> None:
    """With given counts as limits, capping at the bounds keeps the limited optimum (oracle)."""
    rng = random.Random(100 + seed)
    inst = _random_case(rng)
    limits = [rng.choice([None, 1, 2]) for _ in inst.host_types]
    bound = count_bounds(inst, limits)
    assert all(m is None or b <= m for b, m in zip(bound.tolist(), limits, strict=True))
    every = [inst.n_containers if m is None else m for m in limits]
    assert _oracle(inst, bound.tolist()) == _oracle(inst, every)


@pytest.mark.parametrize("seed", range(8))
def test_bound_keeps_the_optimum(seed: int) -> None:
    """With every type capped at its bound, the optimum equals the unbounded one (oracle)."""
    inst = _random_case(random.Random(seed))
    bound = count_bounds(inst)
    every = [inst.n_containers] * len(inst.host_types)
    free = _oracle(inst, every)
    capped = _oracle(inst, bound.tolist())
    assert capped == free
    # first fit's part is never below the volume share of the containers that fit on the type
    fit = fits_alone(inst)
    for t, ht in enumerate(inst.host_types):
        vol = (inst.demand * np.where(fit[:, t], inst.counts, 0)[:, None]).sum(axis=0)
        assert type_bound(inst, t, fit) >= np.ceil((vol / np.asarray(ht.capacity)).max() - 1e-9)


def test_cost_cap_by_hand() -> None:
    # "cheap" (cost 1) takes everything with 4 hosts: a plan costs at most 4, so at most one
    # "dear" host (cost 3) and no "gold" host (cost 5); "tiny" takes nothing: no cap from it
    inst = Instance("c", ("cpu",), (HostType("cheap", (10.0,), 1, cost=1.0),
                                    HostType("dear", (40.0,), 1, cost=3.0),
                                    HostType("gold", (40.0,), 1, cost=5.0),
                                    HostType("tiny", (1.0,), 1, cost=0.5)),
                    (App("a", (5.0,), 8),))
    assert cost_cap(inst, np.array([4, 2, 1, 0])).tolist() == [4, 1, 0, 0]
    # only 2 "cheap" hosts exist: they are no whole plan, and the cap comes from "gold" (5)
    assert cost_cap(inst, np.array([4, 2, 1, 0]), limits=[2, None, None, None]).tolist() == [
        2, 1, 1, 0]
    # with first fit's own bounds, one "dear" host (cost 3) takes everything too: at most 3
    assert count_bounds(inst).tolist() == [3, 1, 0, 0]


def test_topology_bounds_by_hand() -> None:
    from packing.model.topology import HOSTNAME, ZONE

    def one(app: App) -> Instance:
        return Instance("s", ("cpu",), (HostType("h", (10.0,), 1, labels=((ZONE, "z1"),)),),
                        (app,))

    # four containers of 1 fit one host; a zone spread keeps that (one type is one zone)
    assert type_bound(one(App("a", (1.0,), 4, spreads=((ZONE, 1),))), 0) == 1
    # a hostname spread depends on which hosts exist: the trivial bound, one host per container
    assert type_bound(one(App("a", (1.0,), 4, spreads=((HOSTNAME, 1),))), 0) == 4
    # a hostname domain cap is a per-host cap: two per host
    assert type_bound(one(App("a", (1.0,), 4, domain_caps=((HOSTNAME, 2),))), 0) == 2
