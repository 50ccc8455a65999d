"""``vbp plan`` and every exact method against a brute force on tiny random fleets.

The brute force (:func:`tests.packing.brute.brute_force`) searches every placement on the *fleet*:
every host type with its given count, or, without one, as many hosts as there are containers
(enough for any plan). The plan's instance is built with derived counts (possibly 0), so a plan
that drops a host type from the model (a zone of a type whose derived count is 0) is caught here.
Cases draw decimal CPU demands, pod slots that bind, an extended resource only some types offer,
host-port exclusions and caps, zone spreads over types in two zones, taints, prices, counts
(given, absent, 0) and N+1. Every plan's placement must pass the checker on the fleet, an
"optimal" plan must meet the brute-force optimum, a bound never exceed it, and an N+1 plan keeps
the given counts.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from packing.feasibility.checker import check
from packing.io import load_placement, save_placement
from packing.model.instance import App, HostType, Instance
from packing.model.selection import Taint, Toleration
from packing.plan.model import Demand, HostOffer, build_instance
from solvers import available, solve
from tests.packing.brute import brute_force
from vbp import plan

GI = 2**30
ZONE = "topology.kubernetes.io/zone"
FOO = "example.com/foo"


def random_case(seed: int) -> tuple[Demand, list[HostOffer], bool]:
    """A tiny demand and fleet (see the module docstring), and whether to plan N+1."""
    rng = np.random.default_rng(seed)
    offers = []
    priced = rng.random() < 0.5
    for t in range(int(rng.integers(1, 4))):
        labels = (((ZONE, f"z{int(rng.integers(1, 3))}"),) if rng.random() < 0.6 else ())
        taints = (Taint("spot", "", "NoSchedule"),) if rng.random() < 0.2 else ()
        count = [None, None, 0, 1, 2][int(rng.integers(0, 5))]
        offers.append(HostOffer(
            f"t{t}", int(rng.choice([500, 1000, 1500, 2000])), int(rng.choice([2, 4])) * GI,
            price=float(rng.choice([0.5, 1.0, 1.7])) if priced else None, count=count,
            labels=labels, taints=taints, pods=int(rng.choice([2, 3, 110])),
            other=((FOO, int(rng.integers(0, 3))),) if rng.random() < 0.5 else ()))
    apps = []
    foo = rng.random() < 0.3
    for a in range(int(rng.integers(1, 4))):
        cpu = float(rng.choice([0.1, 0.3, 0.7, 0.45, 1.0]))
        spreads = ((ZONE, 1),) if rng.random() < 0.25 else ()
        tol = (Toleration("spot", "Exists", "", ""),) if rng.random() < 0.3 else ()
        cap = 1 if rng.random() < 0.3 else None  # a host port: one pod per host
        apps.append(App(f"a{a}", (cpu, float(rng.choice([0.5, 1.0])), 0.0,
                                  float(rng.integers(0, 2)) if foo else 0.0),
                        int(rng.integers(1, 4)), max_per_host=cap, spreads=spreads,
                        tolerations=tol))
    excl = (("a0", "a1"),) if len(apps) > 1 and rng.random() < 0.3 else ()  # a shared host port
    demand = Demand(tuple(apps), exclusions=excl, resources=("cpu", "memory", "gpu", FOO))
    if not foo:
        demand = Demand(tuple(dataclasses.replace(a, demand=a.demand[:3]) for a in apps),
                        exclusions=excl)
    return demand, offers, rng.random() < 0.25


def fleet(demand: Demand, offers: list[HostOffer]) -> Instance:
    """The fleet: given counts, else one host per container."""
    n = sum(a.count for a in demand.apps)
    return build_instance(demand, offers, [n if o.count is None else o.count for o in offers])


@pytest.mark.parametrize("chunk", range(4))
def test_plan_against_brute_force(chunk: int, tmp_path) -> None:
    for seed in range(10 * chunk, 10 * chunk + 10):
        demand, offers, n1 = random_case(seed)
        try:
            res = plan(demand, offers, time_limit=10, threads=1, n_plus_one=n1)
        except Exception as e:  # only bad input may be refused: a selection no type admits
            assert "matches no host type" in str(e) or "no host type offers" in str(e), (seed, e)
            continue
        (s,) = res.scenarios
        inst = fleet(demand, offers)
        hosts, cost, _ = brute_force(inst)
        opt = cost if s.objective_kind == "cost" else hosts
        where = (seed, s.status, s.hosts, s.cost, s.bound, opt, s.proofs, s.reason)
        if math.isinf(opt):
            assert s.status in ("infeasible", "unknown"), where
            continue
        assert s.status != "infeasible", where
        assert n1 or s.bound <= opt + 1e-6, where  # an N+1 bound is above the plain optimum
        if s.placement is None:
            continue
        assert s.instance is not None
        for o in offers:  # no plan uses more hosts of a type than the host list allows
            used = {t.type: t.hosts for t in s.per_type}
            assert o.count is None or used[o.name] <= o.count, (where, o.name)
        if n1:
            continue
        value = s.cost if s.objective_kind == "cost" else s.hosts
        if s.status == "optimal":
            assert value == pytest.approx(opt), where
        assert value >= opt - 1e-6, where
        # the plan's placement, by host name, on the fleet: the checker accepts it
        p = tmp_path / f"p{seed}.json"
        save_placement(s.placement, s.instance, p)
        assert check(inst, load_placement(p, inst), require_all=True) == [], where


def random_instance(seed: int) -> Instance:
    """Tiny instances with pod slots, an extended resource, host-port caps and exclusions."""
    rng = np.random.default_rng(seed)
    res = ("cpu", "pods", FOO)
    apps = tuple(App(f"a{a}", (round(float(rng.uniform(0.1, 0.9)), 7), 1.0,
                               float(rng.integers(0, 2))),
                     int(rng.integers(1, 4)), max_per_host=1 if rng.random() < 0.3 else None)
                 for a in range(int(rng.integers(2, 4))))
    types = tuple(HostType(f"h{t}", (float(rng.choice([1.0, 1.5])), float(rng.integers(2, 4)),
                                     float(rng.integers(0, 3))), 4)
                  for t in range(int(rng.integers(1, 3))))
    excl = (("a0", "a1"),) if rng.random() < 0.4 else ()
    return Instance(f"k{seed}", res, types, apps, exclusions=excl)


@pytest.mark.parametrize("seed", range(12))
def test_exact_methods_with_pod_slots_ports_and_extended_resources(seed: int) -> None:
    inst = random_instance(seed)
    hosts, _, _ = brute_force(inst)
    for method in ("auto", "cpsat", "pulp", "colgen"):
        if not available(method):
            continue
        r = solve(inst, method, time_limit=3, workers=1)
        if math.isinf(hosts):
            assert r.placement is None or check(inst, r.placement, require_all=True), method
            continue
        assert r.bound <= hosts + 1e-9, (seed, method, r.bound, hosts)
        if r.placement is not None and not check(inst, r.placement, require_all=True):
            assert r.objective >= hosts - 1e-9, (seed, method)
            if r.status == "optimal":
                assert r.objective == pytest.approx(hosts), (seed, method, r.objective, hosts)
