"""The Gymnasium environment: API contract, determinism, feasibility, agreement with the simulator."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from packing.env.placement_env import PlacementEnv
from packing.feasibility.checker import check
from packing.feasibility.metrics import compute_metrics
from packing.io.builtin import builtin_instance
from packing.model.instance import App, HostType, Instance, Placement, Request
from packing.sim.simulator import sample_orders, simulate
from policies.heuristics import FirstFit


@pytest.fixture(scope="module")
def sigma() -> Instance:
    return builtin_instance("sigma")


def rollout(env: PlacementEnv, seed: int, options: dict | None = None) -> tuple[list[int], float]:
    obs, info = env.reset(seed=seed, options=options)
    actions, total, done = [], 0.0, False
    while not done:
        a = int(env.action_space.sample(mask=info["action_mask"])) if info["action_mask"].any() else 0
        obs, r, done, trunc, info = env.step(a)
        assert env.observation_space.contains(obs)
        actions.append(a)
        total += r
    return actions, total


def test_check_env(sigma: Instance) -> None:
    check_env(PlacementEnv(sigma, shuffle=True), skip_render_check=True)


def test_same_seed_same_rollout(sigma: Instance) -> None:
    env = PlacementEnv(sigma, shuffle=True)
    env.action_space.seed(3)
    a1, r1 = rollout(env, seed=7)
    env.action_space.seed(3)
    a2, r2 = rollout(env, seed=7)
    assert a1 == a2 and r1 == r2
    env.action_space.seed(3)
    a3, _ = rollout(env, seed=8)
    assert a3 != a1


def test_masked_random_rollout_is_feasible_and_return_counts_hosts(sigma: Instance) -> None:
    env = PlacementEnv(sigma)
    env.action_space.seed(0)
    _, total = rollout(env, seed=0)
    pl = env.placement()
    assert check(sigma, pl) == []
    assert total == -(env.hosts_used + env.reject_penalty * env.rejected_)
    assert pl.n_placed + env.rejected_ == sigma.n_containers


def test_first_fit_through_env_equals_simulator(sigma: Instance) -> None:
    order = sample_orders(sigma, 2, seed=5)[1]
    env = PlacementEnv(sigma)
    _, info = env.reset(seed=0, options={"order": order})
    done = False
    while not done:
        _, _, done, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert env.placement() == simulate(sigma, FirstFit(), order).placement


def test_invalid_action_and_auto_reject_and_departures() -> None:
    inst = Instance("q", ("cpu",), (HostType("h", (10.0,), 2),), (App("x", (10.0,), 3), App("y", (11.0,), 1)),
                    requests=(Request(0, "x", end=1), Request(0, "y"), Request(0, "x"), Request(2, "x")))
    env = PlacementEnv(inst, reject_penalty=5.0)
    _, info = env.reset(seed=0)
    assert info["action_mask"].tolist() == [1, 1]
    _, r, done, _, info = env.step(0)  # x on host 0; then y fits nowhere: auto-rejected
    assert r == -1 - 5 and info["auto_rejected"] == 1 and not done
    _, r, done, _, info = env.step(0)  # host 0 is full: invalid, rejected; then at t=2 it empties
    assert info["invalid_action"] and r == -5 + 1
    assert info["action_mask"].tolist() == [1, 1]
    _, r, done, _, info = env.step(1)
    assert done and r == -1 and env.hosts_used == 1
    assert check(inst, env.placement()) == []
    with pytest.raises(RuntimeError):
        env.step(0)


def test_info_deployed_is_on_hosts_now_and_placed_counts_departed_ones() -> None:
    # a snapshot container s on host 0; two x arrive at 0 and leave at 1, a third x arrives at 2:
    # at the end s and the third x are on hosts (deployed 2), three x were placed, two departed
    inst = Instance("d", ("cpu",), (HostType("h", (10.0,), 2),), (App("s", (5.0,), 1), App("x", (5.0,), 3)),
                    initial=Placement({"s": (0,)}),
                    requests=(Request(0, "x", end=1), Request(0, "x", end=1), Request(2, "x")))
    env = PlacementEnv(inst)
    _, info = env.reset(seed=0)
    assert (info["deployed"], info["placed"], info["departed"]) == (1, 0, 0)  # the snapshot is deployed
    policy = FirstFit()
    policy.reset(inst, 0)
    done = False
    seen = []
    while not done:
        _, _, done, _, info = env.step_engine(policy.act(env.observation(), env.host_mask()))
        seen.append((info["deployed"], info["placed"], info["departed"]))
    # (deployed, placed, departed) after each step; the engine then moves on to the next decision,
    # so the second step ends after the two departures at t=1
    assert seen == [(2, 1, 0), (1, 2, 2), (2, 3, 2)]
    res = simulate(inst, FirstFit())
    assert info["deployed"] == res.summary()["deployed"] == compute_metrics(inst, env.placement()).deployed
    assert info["departed"] == res.summary()["departed"] and info["rejected"] == info["waiting"] == 0
