"""N+1 verification and spares (solvers.plan.failover) against hand cases and an exhaustive search."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from packing.feasibility.checker import check
from packing.model.instance import UNPLACED, App, HostType, Instance, Placement, Rule
from solvers.plan.failover import extra_lower_bound, plan_hosts, plan_spares, verify_n_plus_one
from solvers.search.greedy import ffd


def _hand() -> tuple[Instance, Placement]:
    inst = Instance("t", ("cpu",), (HostType("h", (4.0,), 4),),
                    (App("a", (2.0,), 4), App("b", (1.0,), 2)), rules=(Rule("a", "b", 0),))
    return inst, Placement({"a": (0, 0, 1, 1), "b": (2, 2)})


def test_hand_case_first_failure_is_proven() -> None:
    inst, p = _hand()
    v = verify_n_plus_one(inst, p)
    assert v.holds is False
    assert v.first_failure is not None
    assert v.first_failure.host == "h#0"
    assert v.first_failure.proof == "cpsat"
    assert v.first_failure.unplaced == {"a": 2}


def test_hand_case_one_spare_makes_it_hold() -> None:
    inst, p = _hand()
    sp = plan_spares(inst, p)
    assert len(sp.spares) == 1
    assert sp.check.holds is True
    assert not check(sp.instance, sp.placement, require_all=True)
    assert _brute_holds(sp.instance, sp.placement, plan_hosts(sp.instance, sp.placement,
                                                               sp.spares))


def _brute_holds(inst: Instance, p: Placement, mask: np.ndarray) -> bool:
    """Exhaustive: for every plan host, some re-placement of its containers passes the checker."""
    host_of = p.host_array(inst)
    for h in np.flatnonzero(mask).tolist():
        lost = np.flatnonzero(host_of == h)
        others = [g for g in np.flatnonzero(mask).tolist() if g != h]
        ok = len(lost) == 0
        for combo in itertools.product(others, repeat=len(lost)):
            trial = host_of.copy()
            trial[lost] = combo
            if not check(inst, Placement.from_arrays(inst, trial), require_all=True):
                ok = True
                break
        if not ok:
            return False
    return True


def _random_case(seed: int) -> tuple[Instance, Placement]:
    rng = np.random.default_rng(seed)
    apps = tuple(App(f"a{i}", (float(rng.integers(1, 5)), float(rng.integers(1, 5))),
                     int(rng.integers(1, 3)), max_per_host=int(rng.integers(1, 3)))
                 for i in range(3))
    rules = (Rule("a0", "a1", int(rng.integers(0, 2))),)
    inst = Instance(f"r{seed}", ("cpu", "mem"), (HostType("h", (6.0, 6.0), 4),), apps,
                    rules=rules)
    if seed % 2 == 0:
        return inst, Placement.from_arrays(inst, np.asarray(ffd(inst, "hosts").host_of))
    # spread: each container on a random host that takes it (mixed verdicts)
    from packing.feasibility.predicates import ClusterState

    st = ClusterState(inst)
    host_of = np.full(inst.n_containers, UNPLACED)
    for j, a in enumerate(inst.container_app.tolist()):
        ok = np.flatnonzero(st.mask(a))
        if len(ok):
            host_of[j] = int(rng.choice(ok))
            st.place(a, int(host_of[j]))
    return inst, Placement.from_arrays(inst, host_of)


@pytest.mark.parametrize("seed", range(40))
def test_verdict_matches_exhaustive_search(seed: int) -> None:
    inst, p = _random_case(seed)
    if check(inst, p, require_all=True) or (p.host_array(inst) == UNPLACED).any():
        pytest.skip("first fit found no complete placement")
    mask = plan_hosts(inst, p)
    v = verify_n_plus_one(inst, p, mask)
    assert v.holds is _brute_holds(inst, p, mask)
    sp = plan_spares(inst, p)
    if sp.check.holds:
        assert _brute_holds(sp.instance, sp.placement,
                            plan_hosts(sp.instance, sp.placement, sp.spares))


def test_extra_lower_bound_is_met_by_a_homogeneous_optimum() -> None:
    # 4 containers of 3 on hosts of 6: optimum 2 hosts; N+1 needs 3 (S - {h} is a plain plan)
    inst = Instance("h", ("cpu",), (HostType("h", (6.0,), 5),), (App("a", (3.0,), 4),))
    p = Placement({"a": (0, 0, 1, 1)})
    sp = plan_spares(inst, p)
    assert sp.check.holds is True
    assert 2 + len(sp.spares) == 2 + extra_lower_bound(inst, "hosts") == 3
    # two hosts cannot be N+1: exhaustive
    assert not _brute_holds(inst, p, plan_hosts(inst, p))


def test_inexact_data_still_prove_a_failure() -> None:
    from solvers.exact.cpsat import scale_instance

    # 0.09999999999999999 needs 17 decimals: no exact integer scaling within CP-SAT's limit
    inst = Instance("x", ("cpu",), (HostType("h", (1.0,), 2),),
                    (App("a", (0.6,), 2), App("b", (0.09999999999999999,), 1)))
    assert not scale_instance(inst).rows.exact
    p = Placement({"a": (0, 1), "b": (1,)})
    v = verify_n_plus_one(inst, p)
    assert v.holds is False and v.first_failure is not None
    assert (v.first_failure.host, v.first_failure.proof) == ("h#0", "cpsat")


def test_extra_cost_bound_is_the_price_of_the_hardest_app() -> None:
    # b fits only on the expensive type: any N+1 plan has such a host, and S - {h} is a plan
    inst = Instance("p", ("cpu",), (HostType("small", (2.0,), 3, cost=1.0),
                                    HostType("large", (8.0,), 3, cost=5.0)),
                    (App("a", (1.0,), 2), App("b", (6.0,), 1)))
    assert extra_lower_bound(inst, "cost") == 5.0
    assert extra_lower_bound(inst, "cost", cheapest=True) == 1.0
    assert extra_lower_bound(inst, "hosts") == 1.0
    # brute force over tiny host sets: the cheapest N+1 set costs the plain optimum (5) + 5
    best = None
    for n_small in range(4):
        for n_large in range(4):
            hosts = list(range(n_small)) + [3 + i for i in range(n_large)]
            if not hosts:
                continue
            for combo in itertools.product(hosts, repeat=inst.n_containers):
                p = Placement.from_arrays(inst, np.asarray(combo))
                if check(inst, p, require_all=True):
                    continue
                if _brute_holds(inst, p, np.isin(np.arange(6), hosts)):
                    cost = n_small * 1.0 + n_large * 5.0
                    best = cost if best is None else min(best, cost)
                    break
    assert best == 10.0


def test_exact_check_absorbs_what_first_fit_cannot() -> None:
    # h#0 runs 3 + 2 + 2; h#1 has 4 free, h#2 has 3 free. First fit (largest first, host order)
    # puts 3 on h#1 and one 2 on h#2, then the last 2 fits nowhere; 3 on h#2, 2 + 2 on h#1 works.
    inst = Instance("ff", ("cpu",), (HostType("h", (8.0,), 3),),
                    (App("x", (3.0,), 1), App("y", (2.0,), 2), App("f4", (4.0,), 1),
                     App("f5", (5.0,), 1)))
    p = Placement({"x": (0,), "y": (0, 0), "f4": (1,), "f5": (2,)})
    from packing.feasibility.predicates import ClusterState
    from solvers.plan.failover import lose_host

    host_of = p.host_array(inst)
    base = ClusterState.from_placement(inst, host_of)
    loss = lose_host(inst, base, host_of, None, np.ones(3, dtype=bool), 0)
    assert (loss.absorbed, loss.proof) == (True, "cpsat")
    lost = np.flatnonzero(host_of == 0)
    assert any(not check(inst, Placement.from_arrays(inst, _moved(host_of, lost, c)),
                         require_all=True)
               for c in itertools.product([1, 2], repeat=len(lost)))


def _moved(host_of: np.ndarray, lost: np.ndarray, combo: tuple[int, ...]) -> np.ndarray:
    out = host_of.copy()
    out[lost] = combo
    return out


def test_zone_caps_make_a_fit_no_proof() -> None:
    """The exact check leaves zone caps out: a loss it can absorb only by breaking one is undecided.

    Zone a has hosts a#0 and a#1, zone b host b#0; q (cap 1 per zone) runs on a#0 and b#0, and a
    filler keeps a#1 in the plan. Losing b#0 leaves q's container only zone a, which holds its one
    already: it cannot be absorbed, though a#1 has the room. The verdict must not be True.
    """
    from packing.model.instance import App, HostType, Instance, Placement
    from packing.model.topology import ZONE
    from solvers.plan.failover import verify_n_plus_one

    inst = Instance("z", ("cpu",),
                    (HostType("a", (4.0,), 2, labels=((ZONE, "a"),)),
                     HostType("b", (4.0,), 1, labels=((ZONE, "b"),))),
                    (App("q", (1.0,), 2, domain_caps=((ZONE, 1),)), App("f", (1.0,), 1)))
    pl = Placement({"q": (0, 2), "f": (1,)})
    v = verify_n_plus_one(inst, pl, time_limit=5)
    assert v.holds is not True


def test_spares_keep_the_given_counts() -> None:
    """Two 1-core pods on small=2c4g: with count=1 no N+1 plan exists (it needs 2 hosts), proven;
    with count=3 the plan has 2 hosts; a spare is never one more host than the count allows."""
    from packing.plan.model import Demand, HostOffer
    from vbp import plan

    demand = Demand((App("web", (1.0, 1.0, 0.0), 2),))
    one = HostOffer("small", 2000, 4 * 2**30, count=1)
    (s,) = plan(demand, [one], n_plus_one=True, time_limit=10).scenarios
    assert s.status == "infeasible" and s.placement is None
    assert "allow 1" in (s.reason or "")
    (s,) = plan(demand, [HostOffer("small", 2000, 4 * 2**30, count=3)], n_plus_one=True,
                time_limit=10).scenarios
    assert (s.status, s.hosts) == ("optimal", 2)
    # a count of 2 when the plain plan needs 2 (4 pods): no room for a spare
    (s,) = plan(Demand((App("web", (1.0, 1.0, 0.0), 4),)),
                [HostOffer("small", 2000, 4 * 2**30, count=2)], n_plus_one=True,
                time_limit=10).scenarios
    assert s.status == "infeasible"
