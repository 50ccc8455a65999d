"""Every heuristic: feasible placements (contract suite), hand-checked decisions, compiled = numpy path."""

from __future__ import annotations

import numpy as np
import pytest

from packing.errors import PolicyError
from packing.feasibility.checker import check
from packing.feasibility.predicates import ClusterState
from packing.io.builtin import builtin_instance
from packing.model.instance import App, HostType, Instance, Request
from packing.sim.simulator import arrivals, sample_orders, simulate
from policies.base import WAIT, Observation, Policy, ScoringPolicy, choose
from policies.heuristics import (
    BestFit,
    FirstFit,
    Greedy,
    K8sBalancedAllocation,
    K8sLeastAllocated,
    K8sMostAllocated,
    K8sRequestedToCapacityRatio,
    RandomFit,
    WorstFit,
)
from policies.registry import POLICIES, get_policy


@pytest.fixture(scope="module")
def sigma() -> Instance:
    return builtin_instance("sigma")


def tiny(exclude_ac: bool = False) -> Instance:
    """3 hosts of 10 cpu; A=5, B=7, C=3, D=5 arrive in that order (hand-worked below)."""
    apps = tuple(App(n, (float(c), 0.0), 1) for n, c in (("A", 5), ("B", 7), ("C", 3), ("D", 5)))
    return Instance("tiny", ("cpu", "mem"), (HostType("h", (10.0, 10.0), 3),), apps,
                    exclusions=(("A", "C"),) if exclude_ac else ())


def hosts_of(res) -> list[int]:  # noqa: ANN001
    return list(res.trajectory.host)


# ---------------------------------------------------------------- contract: every registered policy
@pytest.mark.parametrize("name", sorted(POLICIES))
def test_policy_contract_on_sigma(name: str, sigma: Instance) -> None:
    pol = get_policy(name)
    assert isinstance(pol, Policy)
    for order in sample_orders(sigma, 2, seed=3):
        res = simulate(sigma, pol, order, seed=1)
        assert check(sigma, res.placement) == []
        n = len(arrivals(sigma).app)
        assert res.placement.n_placed + res.n_rejected == n
        # on this instance every heuristic finds room for everything (30 hosts, 15 needed)
        if name not in ("k8s-least", "k8s-balanced"):
            assert res.n_rejected == 0
        assert 15 <= res.hosts <= sigma.n_hosts
        assert res.hosts_peak == res.hosts  # no departures


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_policy_contract_tiny_all_orders(name: str) -> None:
    inst = tiny(exclude_ac=True)
    for order in sample_orders(inst, 6, seed=0):
        res = simulate(inst, get_policy(name), order, seed=0)
        assert check(inst, res.placement, require_all=True) == []


# ---------------------------------------------------------------- hand-checked decisions
def test_first_fit_by_hand() -> None:
    # A->0; B (7) does not fit beside A (5) -> 1; C (3) -> first with room = 0; D (5) -> 2
    assert hosts_of(simulate(tiny(), FirstFit())) == [0, 1, 0, 2]


def test_best_fit_by_hand() -> None:
    # C (3) fits exactly on host 1 (7 used): residual 0 beats host 0's 0.2; D (5) then fits host 0
    res = simulate(tiny(), BestFit())
    assert hosts_of(res) == [0, 1, 1, 0]
    assert res.hosts == 2


def test_worst_fit_by_hand() -> None:
    # WF among open hosts: C goes to the emptier host 0, then D fits nowhere open -> host 2
    assert hosts_of(simulate(tiny(), WorstFit())) == [0, 1, 0, 2]


def test_exclusion_steers_first_fit() -> None:
    # C may not join A on host 0, so FF puts it on host 1, and D then fits beside A
    assert hosts_of(simulate(tiny(exclude_ac=True), FirstFit())) == [0, 1, 1, 0]


def test_decreasing_orders_sort_by_size() -> None:
    res = simulate(tiny(), get_policy("ffd"))
    names = [tiny().apps[a].name for a in res.trajectory.app]
    assert names == ["B", "A", "D", "C"]  # stable: A before D
    assert res.hosts == 2


def test_anti_affinity_cap_respected() -> None:
    inst = Instance("cap", ("cpu",), (HostType("h", (100.0,), 4),), (App("a", (1.0,), 7, max_per_host=2),))
    res = simulate(inst, BestFit())
    assert res.hosts == 4 and res.n_rejected == 0
    assert np.bincount(res.trajectory.host).tolist() == [2, 2, 2, 1]


# ---------------------------------------------------------------- kubernetes scores by hand
def _obs(inst: Instance, used: list[list[float]], app: int = 0) -> Observation:
    st = ClusterState(inst)
    st.used[:] = np.array(used)
    st.n_on[:] = 1
    return Observation(st, app, 0.0, 0, np.zeros(inst.n_apps, dtype=np.int64))


def test_k8s_scores_by_hand() -> None:
    inst = Instance("k", ("cpu", "mem"), (HostType("h", (4000.0, 8000.0), 2),),
                    (App("p", (1000.0, 2000.0), 1),))
    obs = _obs(inst, [[0, 0], [2000, 2000]])
    mask = np.ones(2, dtype=bool)
    most = K8sMostAllocated()
    most.reset(inst)
    # host 0: cpu 1000/4000 -> 25, mem 2000/8000 -> 25 => 25; host 1: 75, 50 => 62 (int division)
    assert most.scores(obs, mask).tolist() == [25, 62]
    least = K8sLeastAllocated()
    least.reset(inst)
    assert least.scores(obs, mask).tolist() == [75, 37]
    bal = K8sBalancedAllocation()
    bal.reset(inst)
    # host 1 fractions 0.75 and 0.5: std 0.125 -> 87
    assert bal.scores(obs, mask).tolist() == [100, 87]
    rtcr = K8sRequestedToCapacityRatio(shape=[(0, 10), (100, 0)], weights={"cpu": 3, "mem": 1})
    rtcr.reset(inst)
    # spreading shape: util 25 -> 7.5 -> 75 (floor 75); host 1: cpu 75 -> 25, mem 50 -> 50
    # weighted: (75*3 + 75) // 4 = 75 ; (25*3 + 50) // 4 = 31
    assert rtcr.scores(obs, mask).tolist() == [75, 31]


def test_rtcr_rejects_bad_shape() -> None:
    inst = tiny()
    with pytest.raises(ValueError):
        K8sRequestedToCapacityRatio(shape=[(50, 1), (10, 2)]).reset(inst)
    with pytest.raises(ValueError):
        K8sMostAllocated(weights={"gpu": 1}).reset(inst)


# ---------------------------------------------------------------- randomised policies
def test_random_is_seeded(sigma: Instance) -> None:
    a = simulate(sigma, RandomFit(), seed=5)
    b = simulate(sigma, RandomFit(), seed=5)
    c = simulate(sigma, RandomFit(), seed=6)
    assert np.array_equal(a.trajectory.host, b.trajectory.host)
    assert not np.array_equal(a.trajectory.host, c.trajectory.host)


def test_greedy_matches_first_fit_on_identical_hosts(sigma: Instance) -> None:
    ff = simulate(sigma, FirstFit())
    for seed in range(3):
        g = simulate(sigma, Greedy(), seed=seed)
        assert g.hosts == ff.hosts
    assert not np.array_equal(simulate(sigma, Greedy(), seed=0).trajectory.host, ff.trajectory.host)


def test_choose_ties_and_open_first() -> None:
    s = np.array([1.0, 3.0, 3.0, 5.0])
    m = np.array([True, True, True, False])
    assert choose(s, m) == 1
    assert choose(s, m, is_open=np.array([True, False, False, False])) == 0
    assert choose(s, np.zeros(4, dtype=bool)) == WAIT
    assert choose(np.array([np.nan, 2.0]), np.array([True, True])) == 1


# ---------------------------------------------------------------- compiled path = numpy path
KERNEL_POLICIES = [n for n, c in POLICIES.items() if issubclass(c, ScoringPolicy) and c.kernel is not None]


@pytest.mark.parametrize("name", KERNEL_POLICIES)
def test_compiled_equals_numpy_on_sigma(name: str, sigma: Instance) -> None:
    for order in sample_orders(sigma, 3, seed=11):
        fast = simulate(sigma, get_policy(name), order)
        slow = simulate(sigma, get_policy(name), order, compiled=False)
        assert fast.compiled and not slow.compiled
        assert np.array_equal(fast.trajectory.host, slow.trajectory.host)
        assert np.array_equal(fast.trajectory.hosts_used, slow.trajectory.hosts_used)
        np.testing.assert_allclose(fast.trajectory.allocation, slow.trajectory.allocation)
        assert fast.placement == slow.placement


def test_policy_choosing_forbidden_host_is_an_error() -> None:
    class Bad(ScoringPolicy):
        name = "bad"

        def act(self, obs: Observation, mask: np.ndarray) -> int:
            return int(np.flatnonzero(~mask)[0]) if (~mask).any() else 99

    inst = Instance("b", ("cpu",), (HostType("h", (4.0,), 2),), (App("a", (3.0,), 2),))
    with pytest.raises(PolicyError, match="forbids"):
        simulate(inst, Bad())


def test_requests_are_grouped_deployments(sigma: Instance) -> None:
    assert all(isinstance(q, Request) for q in sigma.requests)
    assert sum(q.count for q in sigma.requests) == sigma.n_containers
