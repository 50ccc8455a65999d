"""The pluggable env: every encoder x adapter x reward passes check_env, policies act through it exactly
as in simulate, rewards add up to what they claim, and rollouts are seeded."""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.utils.env_checker import check_env

from packing.env.layout import cluster_utilisation, host_features
from packing.env.placement_env import (
    ClusterHost,
    ContinuousCluster,
    Deployed,
    DictEncoder,
    DiscreteHost,
    FlatEncoder,
    GraphEncoder,
    HostsOpened,
    PlacementEnv,
    Utilisation,
)
from packing.feasibility.checker import check
from packing.feasibility.metrics import compute_metrics
from packing.io.builtin import builtin_instance
from packing.model.instance import App, HostType, Instance, Request, Rule
from packing.sim.engine import REJECT
from packing.sim.policy import WAIT, Arranging, ChoosingCards, Observation, waits_when_full
from packing.sim.simulator import sample_orders, simulate
from policies.base import BasePolicy
from policies.heuristics import BestFit
from policies.registry import POLICIES
from policies.swarm.features import N_FEATURES
from policies.swarm.policy import SwarmPolicy


# ------------------------------------------------------------------------------------------------
# instances
def multi_cluster() -> Instance:
    """Three clusters (one with GPU cards), caps, a rule, an exclusion, departures."""
    types = (
        HostType("a", (16.0, 64.0), 3, cluster="east"),
        HostType("b", (32.0, 128.0), 2, cluster="west", gpus=2, gpu_capacity=(1000.0,), gpu_model="V100"),
        HostType("c", (8.0, 32.0), 4, cluster="edge"),
    )
    apps = (
        App("web", (2.0, 4.0), 6, max_per_host=2),
        App("db", (8.0, 32.0), 3),
        App("ml", (4.0, 8.0), 3, gpu_cards=1, gpu_per_card=(500.0,)),
        App("train", (4.0, 16.0), 2, gpu_cards=2, gpu_whole=True),
        App("cache", (1.0, 2.0), 4),
    )
    reqs = (Request(0, "web", 3, end=5), Request(1, "db", 2), Request(2, "ml", 2, end=4),
            Request(3, "train", 1), Request(4, "cache", 4, end=8), Request(6, "web", 3),
            Request(7, "ml", 1), Request(8, "train", 1, end=10), Request(9, "db", 1))
    return Instance("multi", ("cpu", "mem"), types, apps, rules=(Rule("db", "cache", 1),),
                    exclusions=(("web", "db"),), gpu_resources=("gpu_milli",), requests=reqs)


def tight() -> Instance:
    """Two clusters, too small for everything: some containers are rejected; departures free room."""
    types = (HostType("s", (10.0,), 2, cluster="x"), HostType("t", (6.0,), 1, cluster="y"))
    apps = (App("p", (6.0,), 4), App("q", (4.0,), 5), App("r", (11.0,), 1))
    reqs = (Request(0, "p", 2, end=3), Request(1, "q", 3), Request(1, "r"), Request(2, "p", 2),
            Request(4, "q", 2, end=6), Request(5, "p", 2))
    return Instance("tight", ("cpu",), types, apps, requests=reqs)


def tight_static() -> Instance:
    """No request stream (arrivals in app order), and not everything fits."""
    types = (HostType("s", (10.0, 10.0), 3, cluster="x"), HostType("t", (5.0, 8.0), 2, cluster="y"))
    apps = (App("p", (6.0, 3.0), 4), App("q", (3.0, 5.0), 5, max_per_host=1), App("r", (2.0, 2.0), 3))
    return Instance("tight_static", ("cpu", "mem"), types, apps, exclusions=(("p", "r"),))


@pytest.fixture(scope="module")
def sigma() -> Instance:
    return builtin_instance("sigma")


ENCODERS = {"dict": DictEncoder, "flat": FlatEncoder, "graph": GraphEncoder}
ADAPTERS = {"discrete": lambda: DiscreteHost(), "discrete-wait": lambda: DiscreteHost(wait=True),
            "cluster": lambda: ClusterHost(), "continuous": lambda: ContinuousCluster(BestFit())}
REWARDS = {"hosts": lambda: HostsOpened(2.0), "util-sigma": lambda: Utilisation(scale=10.0),
           "util-cluster": lambda: Utilisation("cluster"), "deployed": lambda: Deployed(0.5)}


def make(inst: Instance, enc: str, act: str, rew: str, **kw: Any) -> PlacementEnv:
    return PlacementEnv(inst, encoder=ENCODERS[enc](), actions=ADAPTERS[act](), reward=REWARDS[rew](), **kw)


# ------------------------------------------------------------------------------------------------
# check_env on every combination
@pytest.mark.parametrize(("enc", "act", "rew"), list(itertools.product(ENCODERS, ADAPTERS, REWARDS)))
def test_check_env_every_combination(enc: str, act: str, rew: str) -> None:
    check_env(make(multi_cluster(), enc, act, rew, shuffle=True), skip_render_check=True)


@pytest.mark.parametrize(("enc", "act"), list(itertools.product(ENCODERS, ADAPTERS)))
def test_check_env_sigma_and_waiting(sigma: Instance, enc: str, act: str) -> None:
    check_env(make(sigma, enc, act, "hosts", shuffle=True), skip_render_check=True)
    check_env(make(tight(), enc, act, "deployed", wait_when_full=True), skip_render_check=True)


# ------------------------------------------------------------------------------------------------
# random valid rollouts: observations in the space, feasible placements, returns add up
def valid_rollout(env: PlacementEnv, seed: int, options: dict | None = None) -> tuple[list[Any], float]:
    obs, info = env.reset(seed=seed, options=options)
    assert env.observation_space.contains(obs)
    actions, total, done = [], 0.0, False
    while not done:
        assert info["action_mask"].any()
        a = env.sample_action()
        obs, r, done, trunc, info = env.step(a)
        assert not trunc and not info["invalid_action"]
        assert env.observation_space.contains(obs)
        actions.append(np.asarray(a).tolist())
        total += r
    assert not info["action_mask"].any()
    return actions, total


@pytest.mark.parametrize("inst_fn", [multi_cluster, tight, tight_static])
@pytest.mark.parametrize(("enc", "act"), list(itertools.product(ENCODERS, ADAPTERS)))
def test_valid_rollouts_are_feasible_and_returns_add_up(inst_fn: Any, enc: str, act: str) -> None:
    inst = inst_fn()
    for rew, wait in itertools.product(REWARDS, (False, True)):
        env = make(inst, enc, act, rew, wait_when_full=wait)
        env.action_space.seed(1)
        _, total = valid_rollout(env, seed=3)
        eng = env.engine
        assert check(inst, env.placement()) == []
        waiting = len(eng.waiting)
        refused = len(eng.rejected) + waiting
        assert eng.alive() + len(eng.departed) + refused == eng.n_arrivals
        r = env.reward
        if rew == "hosts":
            assert total == pytest.approx(-env.hosts_used - r.reject_penalty * refused)
        elif rew == "deployed":
            assert total == pytest.approx(eng.alive() + len(eng.departed) - r.reject_penalty * refused)
        elif rew == "util-sigma":
            u = float(eng.allocation().mean()) if env.hosts_used else 0.0
            assert total == pytest.approx(10.0 * u - r.reject_penalty * refused)
        else:
            m = compute_metrics(inst, env.placement())
            assert total == pytest.approx(np.mean(list(m.cluster_utilisation.values()))
                                          - r.reject_penalty * refused)


# ------------------------------------------------------------------------------------------------
# the contract: a policy through the env makes exactly the decisions it makes in simulate
class WaitingFirstFit(BasePolicy):
    """First fit over open hosts; when none fits, wait on even steps, else open the first feasible host."""

    name = "waiting-ff"
    wait_when_full = True

    def act(self, obs: Observation, mask: np.ndarray) -> int:
        m = mask & obs.is_open
        if m.any():
            return int(np.flatnonzero(m)[0])
        if obs.step % 2 == 0:
            return WAIT
        return int(np.flatnonzero(mask)[0])


def all_policies() -> dict[str, Any]:
    out: dict[str, Any] = {name: cls for name, cls in POLICIES.items()}
    w = np.linspace(-1.0, 1.0, N_FEATURES)
    out["swarm"] = lambda: SwarmPolicy(w)
    return out


def through_env(inst: Instance, policy: Any, order: np.ndarray, seed: int, encoder: Any = None
                ) -> PlacementEnv:
    wait = waits_when_full(policy)
    env = PlacementEnv(inst, encoder=encoder, actions=DiscreteHost(
        wait=wait, cards=policy if isinstance(policy, ChoosingCards) else None), wait_when_full=wait)
    policy.reset(inst, seed)
    arrange = policy if isinstance(policy, Arranging) else None
    _, info = env.reset(seed=seed, options={"order": order, "arrange": arrange})
    done = env.engine.done
    while not done:
        h = policy.act(env.observation(), env.host_mask())
        a = env.action_of(h)
        assert info["action_mask"][a] == 1
        _, _, done, _, info = env.step(a)
        assert not info["invalid_action"]
    return env


CONTRACT_INSTANCES = {"multi": multi_cluster, "tight": tight, "tight_static": tight_static,
                      "sigma": lambda: builtin_instance("sigma")}


@pytest.mark.parametrize("inst_name", list(CONTRACT_INSTANCES))
@pytest.mark.parametrize("pol", list(all_policies()))
def test_every_policy_through_env_equals_simulate(inst_name: str, pol: str) -> None:
    inst = CONTRACT_INSTANCES[inst_name]()
    make_policy = all_policies()[pol]
    for i, order in enumerate(sample_orders(inst, 2, seed=11)):
        seed = 100 + i
        res = simulate(inst, make_policy(), order, seed=seed)
        env = through_env(inst, make_policy(), order, seed)
        eng = env.engine
        assert env.placement() == res.placement
        assert eng.rejected == res.rejected.tolist()
        assert eng.order.tolist() == res.order.tolist()
        assert eng.hosts_used == res.hosts


def test_the_contract_instances_cover_departures_rejections_and_arrange() -> None:
    assert simulate(tight(), BestFit(), seed=0).n_rejected > 0
    assert simulate(tight_static(), BestFit(), seed=0).n_rejected > 0
    assert len(simulate(multi_cluster(), BestFit(), seed=0).departed) > 0
    ffd = POLICIES["ffd"]()
    backwards = np.arange(12)[::-1].copy()
    env = through_env(tight_static(), ffd, backwards, 0)
    assert env.engine.order.tolist() != backwards.tolist()  # arrange reordered the arrivals
    assert env.engine.order.tolist() == simulate(tight_static(), ffd, backwards).order.tolist()


@pytest.mark.parametrize("inst_fn", [multi_cluster, tight])
def test_waiting_policy_through_env_equals_simulate(inst_fn: Any) -> None:
    inst = inst_fn()
    for i, order in enumerate(sample_orders(inst, 3, seed=2)):
        res = simulate(inst, WaitingFirstFit(), order, seed=i)
        env = through_env(inst, WaitingFirstFit(), order, i, encoder=GraphEncoder())
        eng = env.engine
        assert env.placement() == res.placement
        assert eng.rejected == res.rejected.tolist()
        assert sorted(eng.delayed) == res.delayed.tolist()
        assert sorted(eng.waiting) == res.waiting.tolist()
    assert res.n_delayed > 0  # the scenario does exercise WAIT


# ------------------------------------------------------------------------------------------------
# seeded determinism
@pytest.mark.parametrize("act", [*ADAPTERS, "continuous-random"])
def test_same_seed_same_rollout_other_seed_other_order(act: str) -> None:
    inst = multi_cluster()
    if act == "continuous-random":  # the inner policy is reset from the env's seed
        env = PlacementEnv(inst, encoder=FlatEncoder(), actions=ContinuousCluster(POLICIES["random"](),
                                                                                  wait=False),
                           shuffle=True, record=True)
    else:
        env = make(inst, "flat", act, "util-sigma", shuffle=True, record=True)
    env.action_space.seed(5)
    a1, r1 = valid_rollout(env, seed=7)
    o1 = env.engine.order.tolist()
    env.action_space.seed(5)
    t1 = env.engine.trajectory()
    env.action_space.seed(5)
    a2, r2 = valid_rollout(env, seed=7)
    assert a1 == a2 and r1 == r2 and env.engine.order.tolist() == o1
    assert env.engine.trajectory().host.tolist() == t1.host.tolist()
    env.action_space.seed(5)
    valid_rollout(env, seed=8)
    assert env.engine.order.tolist() != o1


def test_reset_without_seed_continues_the_stream_and_options_are_checked(sigma: Instance) -> None:
    env = PlacementEnv(sigma, shuffle=True)
    env.reset(seed=1)
    first = env.engine.order.tolist()
    env.reset()
    assert env.engine.order.tolist() != first
    with pytest.raises(ValueError, match="permutation"):
        env.reset(options={"order": np.zeros(env.engine.n_arrivals, dtype=int)})
    with pytest.raises(ValueError, match="arrange"):
        env.reset(options={"arrange": object()})


# ------------------------------------------------------------------------------------------------
# encoders
def test_flat_layout_matches_the_blocks() -> None:
    inst = multi_cluster()
    enc = FlatEncoder()
    env = PlacementEnv(inst, encoder=enc)
    env.reset(seed=0)
    for _ in range(4):
        env.step(env.sample_action())
    x = env._obs()
    sl = enc.slices(env.layout)
    lay = env.layout
    assert lay.n_host_features == 2 + 1 + 1 + 1  # loads, open, gpu load, free cards
    hosts = x[sl["hosts"]].reshape(inst.n_hosts, lay.n_host_features)
    assert np.array_equal(hosts, host_features(lay, env.engine))
    st = env.engine.state
    assert np.allclose(hosts[:, :2], st.used / st.capacity)
    assert np.array_equal(hosts[:, 2], st.n_on > 0)
    app = env.engine.decision.app
    assert np.allclose(x[sl["demand"]][:2], inst.demand[app] / inst.host_capacity.max(axis=0))
    assert np.allclose(x[sl["pending"]], env.engine.pending / env.engine.n_arrivals)
    assert sl["pending"].stop == len(x) == env.observation_space.shape[0]


def test_graph_nodes_and_edges() -> None:
    inst = multi_cluster()
    env = PlacementEnv(inst, encoder=GraphEncoder())
    g, _ = env.reset(seed=0)
    n_h = inst.n_hosts
    assert isinstance(g, spaces.GraphInstance) and g.nodes.shape[0] == n_h + 1
    mask = env.host_mask()
    n_req = int(mask.sum())
    sizes = [3, 2, 4]
    assert len(g.edge_links) == n_req + sum(s * (s - 1) for s in sizes)
    assert g.edge_links[:n_req].tolist() == [[n_h, h] for h in np.flatnonzero(mask)]
    assert np.all(g.edges[:n_req] == [1, 0]) and np.all(g.edges[n_req:] == [0, 1])
    cl = env.layout.cluster_of
    assert all(cl[a] == cl[b] and a != b for a, b in g.edge_links[n_req:])
    assert g.nodes[n_h, 0] == 1 and not g.nodes[:n_h, 0].any()
    no_cluster = PlacementEnv(inst, encoder=GraphEncoder(cluster_edges=False))
    g2, _ = no_cluster.reset(seed=0)
    assert len(g2.edge_links) == n_req
    while not env.engine.done:
        g, *_ = env.step(env.sample_action())
    assert len(g.edge_links) == sum(s * (s - 1) for s in sizes)  # no request edges at the end
    assert g.nodes[n_h, 0] == 1 and not g.nodes[n_h, 1:].any()


# ------------------------------------------------------------------------------------------------
# adapters
def test_discrete_wait_action_delays_and_invalid_hosts_reject() -> None:
    inst = tight()
    env = PlacementEnv(inst, actions=DiscreteHost(wait=True), reward=Deployed(3.0, wait_penalty=0.25))
    _, info = env.reset(seed=0)
    n = inst.n_hosts
    assert env.action_space == spaces.Discrete(n + 1) and info["action_mask"][n] == 1
    _, r, _, _, info = env.step(n)  # WAIT
    assert r == -0.25 and env.engine.delayed == [0] and not info["invalid_action"]
    _, r, _, _, info = env.step(17)  # no such host
    assert info["invalid_action"] and r <= -3.0 and len(env.engine.rejected) >= 1
    no_wait = PlacementEnv(inst)
    with pytest.raises(ValueError, match="wait"):
        no_wait.action_of(WAIT)


def test_cluster_host_mapping_and_invalid_pairs() -> None:
    inst = multi_cluster()
    ad = ClusterHost()
    env = PlacementEnv(inst, actions=ad, reward=HostsOpened(4.0))
    _, info = env.reset(seed=0)
    lay = env.layout
    assert lay.cluster_names == ("east", "west", "edge")
    assert env.action_space == spaces.MultiDiscrete([3, 4])
    assert info["action_mask"].shape == (3, 4)
    for h in range(inst.n_hosts):
        c, i = ad.action_of(lay, h)
        assert lay.cluster_table[c, i] == h
        assert info["action_mask"][c, i] == env.host_mask()[h]
    assert info["action_mask"][1, 2:].sum() == 0  # west has 2 hosts
    before = len(env.engine.rejected)
    _, r, _, _, info = env.step(np.array([1, 3]))  # past west's size
    assert info["invalid_action"] and len(env.engine.rejected) >= before + 1 and r <= -4.0
    h = int(np.flatnonzero(env.host_mask())[-1])
    env.step(ad.action_of(lay, h))
    assert env.engine.n_arrivals > 0 and env.engine.state.n_on[h] >= 1


def test_continuous_cluster_bins_and_inner_policy() -> None:
    inst = multi_cluster()
    ad = ContinuousCluster(BestFit(), wait=True)
    env = PlacementEnv(inst, actions=ad, record=True)
    _, info = env.reset(seed=0)
    lay = env.layout
    assert ad.n_bins(lay) == 4 and info["action_mask"].shape == (4,)
    assert [ad.bin_of(lay, x) for x in (-1.0, -0.51, -0.5, 0.0, 0.49, 0.5, 1.0, 7.0, -3.0)] == \
        [0, 0, 1, 2, 2, 3, 3, 3, 0]
    for k in range(4):
        assert ad.bin_of(lay, float(ad.action_of_bin(lay, k)[0])) == k
    # each cluster bin: the host is BestFit's choice among the cluster's feasible hosts
    bf = BestFit()
    bf.reset(inst, 0)
    steps = 0
    while not env.engine.done and steps < 12:
        ok = np.flatnonzero(info["action_mask"][:3])
        k = int(ok[steps % len(ok)])
        sub = env.host_mask() & (lay.cluster_of == k)
        want = bf.act(env.observation(), sub)
        row = env.engine.decision.step
        _, _, _, _, info = env.step(ad.action_of_bin(lay, k))
        assert not info["invalid_action"]
        assert env.engine.trajectory().host[row] == want and lay.cluster_of[want] == k
        steps += 1
    # WAIT bin, a bad number, and an empty cluster
    env.reset(seed=0)
    _, _, _, _, info = env.step(np.array([1.0], dtype=np.float32))
    assert env.engine.delayed and not info["invalid_action"]
    _, _, _, _, info = env.step(np.array([math.nan], dtype=np.float32))
    assert info["invalid_action"]
    no_wait = ContinuousCluster(BestFit(), wait=False)
    assert no_wait.n_bins(lay) == 3 and no_wait.bin_of(lay, 1.0) == 2


def test_continuous_cluster_rejects_an_empty_cluster() -> None:
    inst = tight()  # first arrival p (6 cpu): fits the 10-cpu hosts of x and the 6-cpu host of y
    env = PlacementEnv(inst, actions=ContinuousCluster(BestFit(), wait=False), reward=HostsOpened(5.0))
    env.reset(seed=0)
    env.step(np.array([0.9], dtype=np.float32))  # p on y's only host
    assert env.engine.state.n_on[2] == 1
    _, r, _, _, info = env.step(np.array([0.9], dtype=np.float32))  # y is full for the second p
    assert info["invalid_action"] and r == -5.0


def test_step_engine_takes_engine_actions() -> None:
    inst = tight()
    env = PlacementEnv(inst, actions=ContinuousCluster(BestFit()))
    env.reset(seed=0)
    _, r, _, _, info = env.step_engine(REJECT)
    assert env.engine.rejected == [0] and r == -1.0 and not info["invalid_action"]
    _, _, _, _, info = env.step_engine(2)
    assert not info["invalid_action"] and env.engine.state.n_on[2] == 1
    with pytest.raises(TypeError):
        env.action_of(0)


# ------------------------------------------------------------------------------------------------
# rewards
def test_cluster_utilisation_matches_metrics() -> None:
    inst = multi_cluster()
    env = PlacementEnv(inst, reward=Utilisation("cluster", reject_penalty=0.0))
    env.reset(seed=0)
    env.action_space.seed(0)
    while not env.engine.done:
        env.step(env.sample_action())
        m = compute_metrics(inst, env.placement())
        assert np.allclose(cluster_utilisation(env.layout, env.engine),
                           [m.cluster_utilisation[c] for c in env.layout.cluster_names])
    with pytest.raises(ValueError, match="kind"):
        Utilisation("nope")


def test_utilisation_rewards_filling_over_opening() -> None:
    inst = Instance("u", ("cpu",), (HostType("h", (10.0,), 3),), (App("a", (2.0,), 4),))
    env = PlacementEnv(inst, reward=Utilisation(reject_penalty=0.0))
    env.reset(seed=0)
    _, r_open, *_ = env.step(0)
    _, r_fill, *_ = env.step(0)
    _, r_new, *_ = env.step(1)
    assert r_open == pytest.approx(0.2) and r_fill == pytest.approx(0.2) and r_new == pytest.approx(-0.1)


# ------------------------------------------------------------------------------------------------
# GPU cards chosen by the caller
class LastCardsBestFit(BestFit):
    """Best fit, taking the highest-index fitting GPU cards (the engine takes the fullest, lowest)."""

    name = "bf-last-cards"

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def choose_cards(self, obs: Observation, host: int) -> tuple[int, ...]:
        self.calls += 1
        k = int(obs.instance.gpu_cards[obs.app])
        return tuple(int(c) for c in obs.state.cards_fitting(obs.app, host)[-k:])


def test_discrete_host_cards_chooser_equals_simulate_with_choosing_cards() -> None:
    inst = multi_cluster()
    res = simulate(inst, LastCardsBestFit(), seed=0)
    default = simulate(inst, BestFit(), seed=0)
    assert res.placement != default.placement  # the cards differ
    pol = LastCardsBestFit()
    env = PlacementEnv(inst, actions=DiscreteHost(cards=pol))
    pol.reset(inst, 0)
    env.reset(seed=0)
    while not env.engine.done:
        env.step(pol.act(env.observation(), env.host_mask()))
    assert env.placement() == res.placement and pol.calls > 0


def test_continuous_cluster_takes_cards_from_its_inner_policy() -> None:
    inst = multi_cluster()
    placements = []
    for inner in (LastCardsBestFit(), BestFit()):
        env = PlacementEnv(inst, actions=ContinuousCluster(inner, wait=False))
        ad = env.actions
        _, info = env.reset(seed=0)
        while not env.engine.done:
            k = int(np.flatnonzero(info["action_mask"])[-1])
            _, _, _, _, info = env.step(ad.action_of_bin(env.layout, k))
        assert check(inst, env.placement()) == []
        placements.append(env.placement())
    assert placements[0] != placements[1]
