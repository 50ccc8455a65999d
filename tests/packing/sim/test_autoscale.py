"""The autoscaled pool: scale-up by the provisioning rule, scale-down after the delay, node-hours."""

from __future__ import annotations

import dataclasses
import importlib.util
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from packing.errors import InputError
from packing.feasibility.checker import check
from packing.feasibility.predicates import ClusterState
from packing.io.builtin import builtin_instance
from packing.model.instance import App, HostType, Instance, Request, Rule
from packing.sim.autoscale import Autoscale, new_node, unbounded_count
from packing.sim.engine import Engine
from packing.sim.policy import Arranging, waits_when_full
from packing.sim.simulator import simulate
from policies.autoscalers import provision
from policies.heuristics import FirstFit
from policies.registry import POLICIES, get_policy, shipped_path

NEVER = Autoscale(math.inf)


def one_type(*requests: Request, count: int = 5) -> Instance:
    return Instance("q", ("cpu",), (HostType("h", (10.0,), count),), (App("x", (10.0,), 3),),
                    requests=tuple(requests))


def test_node_hours_by_hand() -> None:
    # one container per node; arrivals at 0, 5, 10; the first two leave at 1 and 6
    inst = one_type(Request(0, "x", 1, 1), Request(5, "x", 1, 6), Request(10, "x", 1))
    hours = {}
    for delay, want in ((0.0, 2.0), (2.0, 6.0), (math.inf, 10.0)):
        r = simulate(inst, FirstFit(), autoscale=Autoscale(delay))
        assert r.pool is not None
        hours[delay] = r.pool.node_hours
        assert r.pool.node_hours == pytest.approx(want), delay
        assert r.pool.node_cost == pytest.approx(want)
    # delay 0: node 0 leaves at 1, comes back at 5, leaves at 6, comes back at 10
    r = simulate(inst, FirstFit(), autoscale=Autoscale(0.0))
    assert r.pool is not None
    assert (r.pool.opened, r.pool.removed, r.pool.nodes, r.pool.nodes_peak) == (3, 2, 1, 1)
    r = simulate(inst, FirstFit(), autoscale=NEVER)
    assert r.pool is not None
    assert (r.pool.opened, r.pool.removed, r.pool.nodes) == (1, 0, 1)
    assert hours[0.0] < hours[2.0] < hours[math.inf]


def test_counts_cap_the_nodes() -> None:
    inst = one_type(Request(0, "x", 3), count=2)
    r = simulate(inst, FirstFit(), autoscale=Autoscale())
    assert r.n_rejected == 1 and r.pool is not None and r.pool.nodes == 2
    assert r.summary()["nodes_peak"] == 2


def test_a_capped_type_then_the_next_cheapest() -> None:
    inst = Instance("c", ("cpu",), (HostType("big", (20.0,), 3, cost=3.0), HostType("small", (10.0,), 1)),
                    (App("x", (10.0,), 3),), requests=tuple(Request(t, "x", 1) for t in (0, 2, 5)))
    r = simulate(inst, FirstFit(), autoscale=Autoscale())
    assert r.host_of.tolist() == [3, 0, 0]  # the one small node, then a big one holding two
    assert r.pool is not None and r.pool.nodes == 2
    assert (r.pool.node_hours, r.pool.node_cost) == (5.0 + 3.0, 5.0 * 1.0 + 3.0 * 3.0)  # small 0..5, big 2..5


def test_the_cheapest_type_then_the_least_waste() -> None:
    inst = Instance("t", ("cpu", "mem"), (
        HostType("big", (20.0, 20.0), 2, cost=2.0), HostType("small", (10.0, 10.0), 2, cost=1.0),
        HostType("wide", (20.0, 10.0), 2, cost=1.0)),
        (App("a", (8.0, 8.0), 1), App("b", (15.0, 4.0), 1), App("c", (15.0, 15.0), 1)))
    fits = ClusterState(inst).mask
    assert new_node(inst, fits(0), 0) == 2  # small: cheapest, least idle cpu
    assert new_node(inst, fits(1), 1) == 4  # only wide and big fit; wide is cheaper
    assert new_node(inst, fits(2), 2) == 0  # only big fits
    same = dataclasses.replace(inst, host_types=tuple(dataclasses.replace(t, cost=1.0)
                                                      for t in inst.host_types))
    assert new_node(same, fits(0), 0) == 2  # small leaves the least idle cpu
    assert new_node(same, fits(1), 1) == 4  # wide and big leave 25% of cpu idle; wide less memory
    assert new_node(same, np.zeros(inst.n_hosts, dtype=bool), 0) is None
    # vbp plan's provisioning baseline makes the same choice
    two = dataclasses.replace(inst, apps=(App("a", (8.0, 8.0), 2),))
    p = provision(two)
    assert p is not None and p.host_array(two).tolist() == [2, 3]


def test_unbounded_count() -> None:
    assert unbounded_count(one_type()) == 3


def test_bad_delay() -> None:
    for bad in (-1.0, math.nan):
        with pytest.raises(InputError):
            Autoscale(bad)


@st.composite
def growing(draw: st.DrawFn) -> Instance:
    """One host type, apps with non-integer demands, caps and rules, arrivals that never leave."""
    n_res = draw(st.integers(1, 2))
    cap = tuple(draw(st.floats(4.0, 12.0)) for _ in range(n_res))
    n_apps = draw(st.integers(1, 4))
    apps = []
    for i in range(n_apps):
        demand = tuple(draw(st.floats(0.3, 1.0)) * c for c in cap)
        apps.append(App(f"a{i}", demand, draw(st.integers(1, 6)),
                        max_per_host=draw(st.one_of(st.none(), st.integers(1, 3)))))
    rules = ()
    if n_apps > 1 and draw(st.booleans()):
        rules = (Rule("a0", "a1", draw(st.integers(0, 2))),)
    n = sum(a.count for a in apps)
    return Instance("g", tuple(f"r{k}" for k in range(n_res)), (HostType("h", cap, n),), tuple(apps),
                    rules=rules)


@given(growing(), st.integers(0, 3))
def test_first_fit_opens_the_nodes_of_an_unbounded_pool(inst: Instance, seed: int) -> None:
    order = np.random.default_rng(seed).permutation(inst.n_containers)
    fixed = simulate(inst, FirstFit(), order)
    scaled = simulate(inst, FirstFit(), order, autoscale=Autoscale())
    assert scaled.pool is not None
    assert np.array_equal(fixed.host_of, scaled.host_of)
    assert scaled.pool.opened == scaled.pool.nodes == scaled.pool.nodes_peak == fixed.hosts
    assert scaled.pool.removed == 0
    assert not check(inst, scaled.placement)


def departing_sigma() -> Instance:
    """sigma's stream, every request leaving 4 time units after it arrives."""
    inst = builtin_instance("sigma")
    return inst.replace(requests=tuple(dataclasses.replace(q, end=q.time + 4) for q in inst.requests))


def every_policy() -> dict[str, object]:
    from policies.swarm.features import N_FEATURES
    from policies.swarm.policy import SwarmPolicy

    out: dict[str, object] = {name: get_policy(name) for name in POLICIES}
    out["swarm"] = SwarmPolicy(np.linspace(-1.0, 1.0, N_FEATURES))
    if all(importlib.util.find_spec(m) is not None for m in ("torch", "torch_geometric")):
        from policies.registry import _load_agent

        out["gcn-sigma"] = _load_agent(shipped_path("gcn-sigma"))
    return out


@pytest.mark.parametrize("name", sorted(every_policy()))
def test_every_policy_runs_on_the_pool_and_every_placement_passes(name: str) -> None:
    inst = departing_sigma()
    policy: Any = every_policy()[name]
    policy.reset(inst, 3)
    eng = Engine(inst, wait_when_full=waits_when_full(policy), autoscale=Autoscale(1.0))
    eng.reset(arrange=policy if isinstance(policy, Arranging) else None)
    placed = 0
    while not eng.done:
        assert eng.pool is not None
        mask = eng.mask()
        assert mask.any() and not (mask & ~eng.pool.up).any()  # the policy sees nodes of the pool
        h = int(policy.act(eng.observation(), mask))
        eng.step(h)
        placed += h >= 0
        assert not [v for v in check(inst, eng.placement()) if v.kind != "spread"]
    r = simulate(inst, policy, autoscale=Autoscale(1.0), seed=3)
    assert placed and r.pool is not None and r.pool == eng.pool.stats()
    again = simulate(inst, policy, autoscale=Autoscale(1.0), seed=3)
    assert again.pool == r.pool and np.array_equal(again.host_of, r.host_of)  # seeded determinism
    never = simulate(inst, policy, autoscale=NEVER, seed=3)
    assert never.pool is not None and never.pool.removed == 0


def test_scale_down_reduces_node_hours_with_departures() -> None:
    inst = departing_sigma()
    for name in ("ff", "bf", "k8s-most", "k8s-least"):
        down = simulate(inst, get_policy(name), autoscale=Autoscale(0.0))
        kept = simulate(inst, get_policy(name), autoscale=NEVER)
        assert down.pool is not None and kept.pool is not None
        assert down.pool.node_hours < kept.pool.node_hours, name
        assert down.pool.removed > 0 and kept.pool.removed == 0


def test_the_gymnasium_env_steps_the_same_pool() -> None:
    from packing.env.placement_env import PlacementEnv

    inst = departing_sigma()
    env = PlacementEnv(inst, autoscale=Autoscale(1.0))
    env.reset(seed=0)
    policy = get_policy("bf")
    policy.reset(inst, 0)
    done = env.engine.done
    while not done:
        h = policy.act(env.observation(), env.host_mask())
        _, _, done, _, _ = env.step(env.action_of(h))
    r = simulate(inst, get_policy("bf"), autoscale=Autoscale(1.0))
    assert env.engine.pool is not None and env.engine.pool.stats() == r.pool
    assert np.array_equal(env.engine.host_of, r.host_of)


@pytest.mark.parametrize("name", ["fgd", "fgd-pack", "gpu-bestfit", "gpu-packing", "gpu-clustering", "bf"])
def test_gpu_policies_on_an_autoscaled_pool(name: str) -> None:
    from pathlib import Path

    from packing.loaders import load_openb

    inst = load_openb(Path(__file__).resolve().parents[2] / "data" / "openb_small")
    r = simulate(inst, get_policy(name), autoscale=Autoscale(60.0))  # every placement checked
    assert r.pool is not None and r.pool.opened >= r.pool.nodes >= r.hosts
    assert r.pool.opened - r.pool.removed == r.pool.nodes  # no snapshot: the pool starts empty


@given(growing(), st.lists(st.floats(0.0, 6.0), min_size=1, max_size=30),
       st.sampled_from(["ff", "k8s-least"]))
def test_node_hours_without_scale_down_from_the_record(inst: Instance, stays: list[float], name: str) -> None:
    """With no scale-down a node counts from the first container placed on it to the end of the run."""
    apps = inst.container_app  # one request per container, in container order, at times 0, 1, 2, ...
    reqs = tuple(Request(float(t), inst.apps[int(apps[t])].name, 1, t + stays[t % len(stays)])
                 for t in range(inst.n_containers))
    inst = inst.replace(requests=reqs)
    r = simulate(inst, get_policy(name), autoscale=NEVER)
    tr = r.trajectory
    placed = tr.host[tr.host >= 0]
    first = {int(h): float(t) for t, h in zip(tr.time[::-1], tr.host[::-1], strict=True) if h >= 0}
    end = float(tr.time[-1])
    assert r.pool is not None and r.pool.opened == len(first) == len(set(placed.tolist()))
    assert r.pool.node_hours == pytest.approx(sum(end - t for t in first.values()))


def test_a_process_executor_gives_the_serial_pool_numbers() -> None:
    from packing.sim.evaluation import ProcessExecutor, RunOptions, Scenario, SerialExecutor
    from packing.sim.simulator import sample_orders
    from policies.runner import evaluate_policies

    inst = departing_sigma()
    scenario = Scenario(inst, tuple(sample_orders(inst, 2, seed=1)))
    opts = RunOptions(autoscale=Autoscale(1.0))
    got = []
    for ex in (SerialExecutor(), ProcessExecutor(2)):
        with ex:
            recs = evaluate_policies(scenario, ["k8s-least", "random"], seed=3, executor=ex, options=opts)
        got.append([r.numbers() for k in sorted(recs) for r in recs[k]])
    assert got[0] == got[1]
    assert all(r.node_hours is not None and r.node_hours > 0 for rs in recs.values() for r in rs)
