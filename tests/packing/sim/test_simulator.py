"""The simulator: outcomes (placed, rejected, delayed), departures, orders, seeds, samples, properties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from packing.errors import InputError
from packing.feasibility import kernels
from packing.feasibility.checker import check
from packing.feasibility.predicates import ClusterState
from packing.io.builtin import builtin_instance
from packing.model.instance import UNPLACED, App, HostType, Instance, Placement, Request, Rule
from packing.sim.engine import Engine
from packing.sim.simulator import (
    DELAYED,
    PLACED,
    REJECTED,
    arrivals,
    drive,
    evaluate,
    evaluate_batch,
    repair_snapshot,
    sample_orders,
    simulate,
    static_view,
)
from policies.base import WAIT, Observation
from policies.heuristics import BestFit, FirstFit
from policies.registry import POLICIES, get_policy
from policies.swarm.policy import SwarmPolicy, named_weights
from tests.packing.strategies import instances


def one_host(*requests: Request, count: int = 2) -> Instance:
    return Instance("q", ("cpu",), (HostType("h", (10.0,), 1),), (App("x", (10.0,), count),),
                    requests=tuple(requests))


class WaitingBF(BestFit):
    name = "bf-wait"
    wait_when_full = True


# ---------------------------------------------------------------- outcomes
def test_rejected_requests_are_recorded() -> None:
    inst = Instance("r", ("cpu",), (HostType("h", (10.0,), 2),),
                    (App("a", (6.0,), 3), App("b", (20.0,), 1)))
    res = simulate(inst, FirstFit())
    # a, a on two hosts; third a fits nowhere; b is larger than any host
    assert res.rejected.tolist() == [2, 3]
    assert res.rejected_by_app(inst) == {"a": 1, "b": 1}
    assert res.trajectory.outcome.tolist() == [PLACED, PLACED, REJECTED, REJECTED]
    assert res.placement.hosts == {"a": (0, 1, UNPLACED), "b": (UNPLACED,)}
    assert res.summary()["rejected"] == 2


def test_departures_free_capacity() -> None:
    stay = simulate(one_host(Request(0, "x"), Request(6, "x")), BestFit())
    assert stay.n_rejected == 1
    leave = simulate(one_host(Request(0, "x", end=5), Request(6, "x")), BestFit())
    assert leave.n_rejected == 0
    assert leave.departed.tolist() == [0]
    assert leave.placement.hosts == {"x": (0, UNPLACED)}  # the first left; the second reuses slot 0
    assert leave.hosts == 1 and leave.hosts_peak == 1


def test_departure_at_arrival_time_happens_first() -> None:
    res = simulate(one_host(Request(0, "x", end=5), Request(5, "x")), BestFit())
    assert res.n_rejected == 0


def test_wait_is_retried_after_departure() -> None:
    inst = one_host(Request(0, "x", end=5), Request(1, "x"))
    res = simulate(inst, WaitingBF())
    assert res.delayed.tolist() == [1]
    assert len(res.waiting) == 0 and res.n_rejected == 0
    tr = res.trajectory
    assert tr.outcome.tolist() == [PLACED, DELAYED, PLACED]
    assert tr.time.tolist() == [0.0, 1.0, 5.0]
    assert res.placement.n_placed == 1


def test_waiting_without_departure_is_reported() -> None:
    res = simulate(one_host(Request(0, "x"), Request(1, "x")), WaitingBF())
    assert res.waiting.tolist() == [1]
    assert res.delayed.tolist() == [1]
    assert res.n_rejected == 0


def test_policy_may_wait_voluntarily() -> None:
    class Lazy(FirstFit):
        def act(self, obs: Observation, mask: np.ndarray) -> int:
            return WAIT if obs.step == 0 else super().act(obs, mask)

    res = simulate(one_host(Request(0, "x", end=3), Request(1, "x", end=2)), Lazy())
    # first request waits; the second is placed and leaves at 2; the first is then placed
    assert res.delayed.tolist() == [0]
    assert res.trajectory.outcome.tolist() == [DELAYED, PLACED, PLACED]
    assert res.departed.tolist() == [1]


def test_too_many_alive_is_an_input_error() -> None:
    """Such a stream cannot even be built, so the simulator never receives one."""
    with pytest.raises(InputError, match="alive at once"):
        Instance("q", ("cpu",), (HostType("h", (10.0,), 3),), (App("x", (1.0,), 1),),
                 requests=(Request(0, "x", 2),))


def test_initial_snapshot_is_kept() -> None:
    inst = Instance("s", ("cpu",), (HostType("h", (10.0,), 3),), (App("a", (5.0,), 3),),
                    initial=Placement({"a": (2, UNPLACED, UNPLACED)}))
    assert len(arrivals(inst).app) == 2
    res = simulate(inst, FirstFit())
    assert res.placement.hosts["a"] == (2, 0, 0)
    assert res.hosts == 2
    slow = simulate(inst, FirstFit(), compiled=False)
    assert slow.placement == res.placement


def test_rules_are_honoured() -> None:
    inst = Instance("rule", ("cpu",), (HostType("h", (100.0,), 3),),
                    (App("a", (1.0,), 1), App("b", (1.0,), 3)), rules=(Rule("a", "b", 1),))
    res = simulate(inst, BestFit())
    assert res.placement.hosts == {"a": (0,), "b": (0, 1, 1)}


def test_gpu_cards_are_chosen() -> None:
    inst = Instance("g", ("cpu",), (HostType("g", (10.0,), 1, gpus=2, gpu_capacity=(1000.0,)),),
                    (App("p", (1.0,), 3, gpu_cards=1, gpu_per_card=(500.0,)),),
                    gpu_resources=("gpu_milli",))
    res = simulate(inst, BestFit())
    assert not res.compiled
    assert res.placement.gpus["p"] == ((0,), (0,), (1,))
    assert check(inst, res.placement, require_all=True) == []


# ---------------------------------------------------------------- orders and samples
def test_orders_are_seeded() -> None:
    inst = Instance("o", ("cpu",), (HostType("h", (10.0,), 5),), (App("a", (3.0,), 6), App("b", (4.0,), 6)))
    a, b, c = (sample_orders(inst, 4, seed=s) for s in (1, 1, 2))
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert np.array_equal(a[0], np.arange(12)) and np.array_equal(c[0], np.arange(12))
    assert not np.array_equal(a[1], c[1])
    assert all(np.array_equal(np.sort(o), np.arange(12)) for o in a)
    with pytest.raises(ValueError):
        simulate(inst, FirstFit(), order=[0, 0, 1])


def test_evaluate_statistics_and_determinism() -> None:
    inst = Instance("e", ("cpu",), (HostType("h", (10.0,), 8),), (App("a", (3.0,), 6), App("b", (4.0,), 6)))
    orders = sample_orders(inst, 5, seed=0)
    s1 = evaluate(get_policy("random"), inst, orders, seed=4)
    s2 = evaluate(get_policy("random"), inst, orders, seed=4)
    assert np.array_equal(s1.hosts, s2.hosts)
    assert s1.min <= s1.mean <= s1.max and s1.range == s1.max - s1.min
    assert s1.min >= 5  # 42 cpu on 10-cpu hosts
    assert s1.rejected.tolist() == [0] * 5
    bf = evaluate(BestFit(), inst, orders)
    batch = evaluate_batch(lambda w: SwarmPolicy(w), named_weights(best_fit=1.0)[None, :], inst, orders,
                           check_result=True)
    assert batch.shape == (1, 5) and batch[0].tolist() == bf.hosts.tolist()


# ---------------------------------------------------------------- properties on random instances
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(inst=instances(max_apps=4, max_count=4, initial=True, requests=True), name=st.sampled_from(
    sorted(POLICIES)), seed=st.integers(0, 3))
def test_every_policy_feasible_on_random_instances(inst: Instance, name: str, seed: int) -> None:
    try:
        orders = sample_orders(inst, 2, seed=seed)
        results = [simulate(inst, get_policy(name), o, seed=seed) for o in orders]
    except InputError:
        assume(False)  # an infeasible snapshot or more alive containers than an app has
        return
    n = len(arrivals(inst).app)
    for res in results:
        assert check(inst, res.placement) == []
        alive = res.placement.n_placed - (inst.initial.n_placed if inst.initial else 0)
        assert alive + res.n_rejected + len(res.waiting) + len(res.departed) == n


@SETTINGS
@given(inst=instances(max_apps=4, max_count=4, gpus=False, max_per_type=4),
       name=st.sampled_from(["ff", "bf", "bf-bottleneck", "wf", "dot", "l2"]),
       seed=st.integers(0, 5))
def test_compiled_path_equals_numpy_path(inst: Instance, name: str, seed: int) -> None:
    order = sample_orders(inst, 2, seed=seed)[1]
    fast = simulate(inst, get_policy(name), order)
    slow = simulate(inst, get_policy(name), order, compiled=False)
    assert fast.compiled or inst.n_containers == 0 or not kernels.supports(ClusterState(inst))
    assert np.array_equal(fast.trajectory.host, slow.trajectory.host)
    assert fast.placement == slow.placement


@SETTINGS
@given(inst=instances(max_apps=4, max_count=4, gpus=False, max_per_type=4), data=st.data())
def test_fast_mask_equals_cluster_state_mask(inst: Instance, data: st.DataObject) -> None:
    state = ClusterState(inst)
    # load the hosts with a random (not necessarily feasible) set of containers
    for _ in range(data.draw(st.integers(0, 8))):
        if inst.n_hosts and inst.n_apps:
            app = data.draw(st.integers(0, inst.n_apps - 1))
            state.place(app, data.draw(st.integers(0, inst.n_hosts - 1)))
    ok = kernels.host_checker(state)
    for app in range(inst.n_apps):
        mask = state.mask(app)
        assert np.array_equal(kernels.fast_mask(state, app), mask)
        assert [ok(app, h) for h in range(inst.n_hosts)] == mask.tolist()


def test_infeasible_snapshot_is_refused_then_repaired() -> None:
    inst = Instance("s", ("cpu",), (HostType("h", (10.0,), 3),), (App("a", (4.0,), 4),),
                    initial=Placement({"a": (0, 0, 0, 1)}))
    with pytest.raises(InputError, match="snapshot is infeasible"):
        simulate(inst, FirstFit())
    fixed, moved = repair_snapshot(inst)
    assert moved == 1
    assert fixed.initial is not None and fixed.initial.hosts["a"] == (0, 0, UNPLACED, 1)
    assert check(fixed, fixed.initial) == []
    res = simulate(fixed, FirstFit())
    assert res.placement.hosts["a"] == (0, 0, 1, 1)
    assert repair_snapshot(fixed) == (fixed, 0)


def test_static_view_drops_departures() -> None:
    inst = one_host(Request(0, "x", end=5), Request(6, "x"))
    st = static_view(inst)
    assert all(q.end is None for q in st.requests) and st.meta["departures_dropped"]
    assert simulate(st, BestFit()).n_rejected == 1
    assert static_view(st) is st


# ---------------------------------------------------------------- resampled snapshots
def _snapshot_instance(with_requests: bool) -> Instance:
    h = HostType("h", (10.0, 10.0), 8)
    apps = (App("a", (3.0, 1.0), 6, max_per_host=2), App("b", (2.0, 2.0), 6))
    initial = Placement({"a": (0, 0, 1, 1, UNPLACED, UNPLACED), "b": (2, 2, 3, UNPLACED, UNPLACED,
                                                                       UNPLACED)})
    reqs = (Request(5.0, "a", 2), Request(6.0, "b", 3)) if with_requests else ()
    return Instance("snap", ("cpu", "mem"), (h,), apps, initial=initial, requests=reqs)


@pytest.mark.parametrize("with_requests", [False, True])
def test_resampled_snapshot_moves_containers_to_the_front(with_requests: bool) -> None:
    inst = _snapshot_instance(with_requests)
    from packing.sim.simulator import resample_snapshot

    same = resample_snapshot(inst, keep=1.0, seed=3)
    assert same.initial == inst.initial
    none = resample_snapshot(inst, keep=0.0, seed=3)
    assert none.initial is not None and none.initial.n_placed == 0
    r1, r2 = resample_snapshot(inst, 0.5, seed=7), resample_snapshot(inst, 0.5, seed=7)
    assert r1 == r2
    moved = inst.initial.n_placed - r1.initial.n_placed  # type: ignore[union-attr]
    assert moved == r1.meta["snapshot_resampled"]["moved"]
    res = simulate(r1, get_policy("ff"))
    assert not check(r1, res.placement)
    if with_requests:  # the moved containers arrive first, before the stream
        assert sum(q.count for q in r1.requests) == moved + 5
        assert r1.requests[0].time == 5.0
    # every container that was placed or requested is placed again
    expected = inst.initial.n_placed + (5 if with_requests else 6)  # type: ignore[union-attr]
    assert res.placement.n_placed == min(expected, inst.n_containers)


def test_evaluate_snapshots_common_random_numbers() -> None:
    from packing.sim.simulator import evaluate_snapshots

    inst = _snapshot_instance(False)
    a = evaluate_snapshots(get_policy("ff"), inst, 4, keep=0.5, seed=2)
    b = evaluate_snapshots(get_policy("ff"), inst, 4, keep=0.5, seed=2)
    assert np.array_equal(a.hosts, b.hosts) and len(a.hosts) == 4
    bf = evaluate_snapshots(get_policy("bf"), inst, 4, keep=0.5, seed=2)
    starts = [r.placement.n_placed for r in a.results]
    assert starts == [r.placement.n_placed for r in bf.results]
    assert a.min <= a.mean <= a.max


# ---------------------------------------------------------------- the one decision loop
def test_the_hook_sees_every_decision_of_the_policy() -> None:
    inst = one_host(Request(0, "x", end=5), Request(1, "x"))
    steps: list = []
    res = simulate(inst, WaitingBF(), on_step=steps.append)
    # hand-traced: arrival 1 fits nowhere at t=1 (the engine delays it; not the policy's decision),
    # then is placed on its retry at t=5
    assert [(s.decision.arrival, s.decision.time, s.action, s.outcome) for s in steps] == [
        (0, 0.0, 0, PLACED), (1, 5.0, 0, PLACED)]
    assert res.trajectory.outcome.tolist() == [PLACED, DELAYED, PLACED]
    assert all(s.episode == 0 and s.cards == () and s.mask.tolist() == [True] for s in steps)

    class Lazy(WaitingBF):
        def act(self, obs: Observation, mask: np.ndarray) -> int:
            return WAIT if obs.step == 0 else super().act(obs, mask)

    lazy: list = []
    simulate(one_host(Request(0, "x", end=3), Request(1, "x", end=2)), Lazy(), on_step=lazy.append)
    assert [(s.decision.arrival, s.action, s.outcome) for s in lazy] == [
        (0, WAIT, DELAYED), (1, 0, PLACED), (0, 0, PLACED)]


def test_drive_in_lock_step_equals_one_simulation_per_engine() -> None:
    inst = builtin_instance("sigma")
    orders = sample_orders(inst, 3, seed=4)
    want = [simulate(inst, BestFit(), o, compiled=False).host_of for o in orders]
    engines = [Engine(inst) for _ in orders]
    for e, o in zip(engines, orders, strict=True):
        e.reset(o)
    pols = [BestFit() for _ in orders]
    for p in pols:
        p.reset(inst, 0)
    seen: list[int] = []

    def decide(live: list[int], obs: list, masks: list) -> list:
        return [(pols[i].act(o, m), None) for i, o, m in zip(live, obs, masks, strict=True)]

    drive(engines, decide, lambda s: seen.append(s.episode))
    for e, w in zip(engines, want, strict=True):
        assert np.array_equal(e.host_of, w)
    assert seen[:3] == [0, 1, 2] and len(seen) == sum(e.n_arrivals for e in engines)
