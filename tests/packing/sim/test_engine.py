"""The stepwise engine: decisions, actions, retries, records, the fast path and its rewind."""

from __future__ import annotations

import numpy as np
import pytest

from packing.errors import PolicyError
from packing.feasibility import kernels
from packing.feasibility.checker import check
from packing.feasibility.metrics import compute_metrics
from packing.feasibility.predicates import ClusterState
from packing.model.instance import App, HostType, Instance, Request, Rule
from packing.sim.engine import DELAYED, PLACED, REJECT, REJECTED, Engine
from packing.sim.policy import WAIT
from packing.sim.simulator import sample_orders, simulate
from policies.heuristics import BestFit, FirstFit


def one_host(*requests: Request, count: int = 3) -> Instance:
    return Instance("q", ("cpu",), (HostType("h", (10.0,), 1),), (App("x", (10.0,), count),),
                    requests=tuple(requests))


def test_step_by_step_by_hand() -> None:
    inst = Instance("s", ("cpu", "mem"), (HostType("h", (10.0, 8.0), 3),),
                    (App("a", (6.0, 2.0), 2), App("b", (4.0, 6.0), 1)))
    eng = Engine(inst)
    d = eng.reset()
    assert d is not None and (d.arrival, d.app, d.step, d.retry) == (0, 0, 0, False)
    assert eng.mask().tolist() == [True, True, True]
    assert eng.pending.tolist() == [1, 1]  # still to arrive after this one
    d = eng.step(1)
    assert d is not None and d.app == 0 and eng.mask().tolist() == [True, False, True]
    d = eng.step(REJECT)
    assert d is not None and d.app == 1 and eng.mask().tolist() == [True, True, True]
    assert eng.step(1) is None and eng.done
    assert eng.rejected == [1] and eng.hosts_used == 1
    # after placing a (6, 2) and b (4, 6) on host 1 it is full: allocation 100% of both resources
    assert np.allclose(eng.allocation(), [1.0, 1.0])
    tr = eng.trajectory()
    assert tr.outcome.tolist() == [PLACED, REJECTED, PLACED]
    assert tr.host.tolist() == [1, -1, 1] and tr.hosts_used.tolist() == [1, 1, 1]
    assert np.allclose(tr.allocation[0], [0.6, 0.25])
    pl = eng.placement()
    assert check(inst, pl) == []
    m = compute_metrics(inst, pl)
    assert np.allclose(list(m.allocation_by_resource.values()), eng.allocation())


def test_forbidden_host_and_unknown_action_are_policy_errors() -> None:
    inst = Instance("p", ("cpu",), (HostType("h", (10.0,), 2),), (App("x", (10.0,), 3),))
    eng = Engine(inst)
    eng.reset()
    eng.step(0)
    with pytest.raises(PolicyError, match="forbids"):
        eng.apply(0)  # host 0 is full
    with pytest.raises(PolicyError):
        eng.apply(-7)
    assert eng.apply(REJECT) == REJECTED
    assert eng.apply(1) == PLACED and eng.done
    with pytest.raises(RuntimeError):
        eng.apply(0)


def test_empty_masks_are_resolved_by_the_engine_and_retried_after_departures() -> None:
    inst = one_host(Request(0, "x", end=5), Request(1, "x"), Request(2, "x"))
    eng = Engine(inst)
    assert eng.reset() is not None
    assert eng.step(0) is None  # both later arrivals fit nowhere: rejected without a decision
    assert eng.rejected == [1, 2] and eng.trajectory().outcome.tolist() == [PLACED, REJECTED, REJECTED]
    eng = Engine(inst, wait_when_full=True)
    eng.reset()
    d = eng.step(0)  # both wait; at t=5 x#0 leaves and the queue is retried in FIFO order
    assert d is not None and d.retry and d.arrival == 1 and d.time == 5.0
    assert eng.step(0) is None  # x#2 is retried, fits nowhere, waits again; nothing else departs
    assert eng.waiting == [2] and eng.delayed == [1, 2] and eng.rejected == []
    assert eng.trajectory().outcome.tolist() == [PLACED, DELAYED, DELAYED, PLACED, DELAYED]


def test_wait_action_then_reject_on_retry_is_not_left_waiting() -> None:
    inst = Instance("w", ("cpu",), (HostType("h", (10.0,), 2),), (App("x", (6.0,), 3),),
                    requests=(Request(0, "x", end=4), Request(1, "x"), Request(2, "x")))
    eng = Engine(inst)
    eng.reset()
    assert eng.apply(0) == PLACED          # x#0 on host 0 until t=4
    assert eng.apply(WAIT) == DELAYED      # x#1 waits (voluntarily)
    assert eng.apply(1) == PLACED          # x#2 on host 1
    d = eng.decision                        # t=4: x#0 left, x#1 is retried
    assert d is not None and d.retry and d.arrival == 1
    assert eng.apply(REJECT) == REJECTED
    assert eng.done and eng.waiting == [] and eng.rejected == [1] and eng.delayed == [1]


def test_cards_given_by_the_caller_are_checked() -> None:
    gpu = HostType("g", (32.0,), 1, gpus=2, gpu_capacity=(100.0,))
    inst = Instance("g", ("cpu",), (gpu,), (App("t", (1.0,), 3, gpu_cards=1, gpu_per_card=(60.0,)),),
                    gpu_resources=("gpu_milli",))
    eng = Engine(inst)
    eng.reset()
    with pytest.raises(PolicyError):
        eng.apply(0, cards=(5,))
    with pytest.raises(PolicyError):
        eng.apply(0, cards=(0, 1))
    eng.apply(0, cards=(1,))
    assert eng.state.card_used[0, :, 0].tolist() == [0.0, 60.0]
    eng.apply(0, cards=(0,))
    assert eng.done and eng.rejected == [2]  # no card has 60 left: the third is refused by the mask
    assert check(inst, eng.placement()) == []


def test_fast_path_rewinds_auto_rejections_and_equals_the_step_path() -> None:
    # the first arrival's app can run nowhere (a self-rule with k = 0): it is auto-rejected at reset,
    # then the compiled path rewinds and replays the whole episode
    inst = Instance("f", ("cpu",), (HostType("h", (10.0,), 4),),
                    (App("never", (1.0,), 1), App("a", (3.0,), 6), App("b", (5.0,), 4)),
                    rules=(Rule("never", "never", 0), Rule("a", "b", 1)))
    assert kernels.supports(ClusterState(inst))
    for order in sample_orders(inst, 4, seed=3):
        for pol in (FirstFit(), BestFit()):
            fast = simulate(inst, pol, order)
            slow = simulate(inst, pol, order, compiled=False)
            assert fast.compiled and not slow.compiled
            assert fast.placement == slow.placement
            assert fast.rejected.tolist() == slow.rejected.tolist()
            assert np.array_equal(fast.trajectory.host, slow.trajectory.host)
            np.testing.assert_allclose(fast.trajectory.allocation, slow.trajectory.allocation)


def test_order_is_validated_and_not_modified() -> None:
    inst = one_host(count=3)
    eng = Engine(inst)
    with pytest.raises(ValueError):
        eng.reset([0, 0, 1])
    order = np.array([2, 0, 1])
    simulate(inst, BestFit(), order)
    assert order.flags.writeable
