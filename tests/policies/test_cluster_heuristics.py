"""Cluster-level heuristics and the expert (policies/cluster_heuristics.py) on hand-made states."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from packing.env.eade import make_env
from packing.feasibility.checker import check
from packing.feasibility.predicates import ClusterState
from packing.generators.multicluster import generate_multicluster
from packing.model.instance import App, HostType, Instance, Placement
from packing.sim.policy import Observation
from packing.sim.simulator import simulate
from policies.cluster_heuristics import NodeBestFit
from policies.registry import get_policy

DATA = Path(__file__).resolve().parents[1] / "data" / "multicluster_small"


def state(loads: list[tuple[float, float]], demand: tuple[float, float]) -> Observation:
    """Three clusters of one (10, 10) host each, preloaded with ``loads``; the task asks ``demand``."""
    hosts = tuple(HostType(f"h{i}", (10.0, 10.0), 1, cluster=f"c{i}") for i in range(3))
    apps = (App("pre", (1.0, 1.0), 30), App("task", demand, 1))
    st = ClusterState(Instance("hand", ("cpu", "mem"), hosts, apps))
    st.used[:] = np.array(loads)
    return Observation(st, 1, 0.0, 0, np.zeros(2, dtype=np.int64))


def pick(name: str, obs: Observation, seed: int = 0) -> int:
    p = get_policy(name)
    p.reset(obs.instance, seed)
    return int(p.act(obs, obs.state.mask(obs.app)))


def test_greedy_bf_expert() -> None:
    obs = state([(2, 2), (6, 6), (0, 0)], (2.0, 2.0))
    assert pick("mc-greedy", obs) == 0
    # free left: c0 0.6 + 0.6, c1 0.2 + 0.2, c2 0.8 + 0.8 -> c1
    assert pick("mc-bf", obs) == 1
    # Score after: c0 -> U = [.4, .6, 0] (0.67), c1 -> [.2, .8, 0] (1), c2 -> [.2, .6, .2] (0) -> c1
    assert pick("mc-expert", obs) == 1


def test_utilization_matches_ratios() -> None:
    loads = [(6, 0), (3, 3), (0, 6)]  # free ratios (.4, 1), (.7, .7), (1, .4)
    assert pick("mc-util", state(loads, (1.0, 1.0))) == 1
    assert pick("mc-util", state(loads, (2.0, 1.0))) == 2
    assert pick("mc-util", state(loads, (1.0, 2.0))) == 0


def test_infeasible_clusters_skipped_and_random_seeded() -> None:
    obs = state([(9, 9), (0, 0), (5, 5)], (2.0, 2.0))  # c0 cannot take it
    assert pick("mc-greedy", obs) == 1
    assert pick("mc-bf", obs) == 2
    draws = [pick("mc-random", obs, seed=s) for s in range(20)]
    assert set(draws) == {1, 2}
    assert draws == [pick("mc-random", obs, seed=s) for s in range(20)]


def test_node_best_fit_cards() -> None:
    ht = HostType("g", (100.0, 100.0), 2, cluster="c0", gpus=2, gpu_capacity=(1000.0,))
    apps = (App("s", (1.0, 1.0), 1, gpu_cards=1, gpu_per_card=(300.0,)),)
    st = ClusterState(Instance("cards", ("cpu", "mem"), (ht,), apps, gpu_resources=("core",)))
    st.card_used[0, :, 0] = [500.0, 600.0]  # host 0: both cards busy
    st.card_used[1, :, 0] = [0.0, 650.0]
    obs = Observation(st, 0, 0.0, 0, np.zeros(1, dtype=np.int64))
    p = NodeBestFit()
    assert p.act(obs, st.mask(0)) == 0  # least free capacity left
    assert p.choose_cards(obs, 0) == (1,)  # the fuller card that fits
    assert p.choose_cards(obs, 1) == (1,)


@pytest.mark.parametrize("name", ["mc-bf", "mc-greedy", "mc-random", "mc-util", "mc-expert", "node-bf"])
def test_simulate_and_env_agree(name: str) -> None:
    inst = generate_multicluster(DATA, DATA, clusters=3, nodes=2, tasks=30, seed=1)
    res = simulate(inst, get_policy(name), seed=0)
    assert not check(inst, res.placement)
    # the same policy as the env's inner rule, handed the whole mask through step_engine
    env = make_env(inst, NodeBestFit())
    env.reset(seed=0)
    pol = get_policy(name)
    pol.reset(inst, 0)
    done = False
    while not done:
        obs = env.observation()
        h = pol.act(obs, env.host_mask())
        cards = pol.choose_cards(obs, h) if h >= 0 else None  # type: ignore[attr-defined]
        *_, done, _, _ = env.step_engine(h, cards)
    assert env.placement() == res.placement


def test_no_policy_beats_the_proven_optimum() -> None:
    from policies.multicluster_rows import policy_row
    from solvers.exact.max_deployed import card_bound, optimum

    inst = generate_multicluster(DATA, DATA, clusters=3, nodes=2, tasks=30, seed=1)
    opt = optimum(inst, time_limit=20)
    assert opt.proven and opt.deployed == opt.bound
    assert not check(inst, opt.placement)
    bound = card_bound(inst)
    assert bound is not None and bound[0] == opt.bound
    for name in ("mc-bf", "mc-greedy", "mc-util", "mc-expert", "bf", "gpu-bestfit"):
        assert policy_row(inst, name)["deployed"] <= opt.deployed


def test_optimum_falls_back_to_the_solver_when_cpu_binds() -> None:
    from solvers.exact.max_deployed import card_bound, optimum

    ht = HostType("h", (10.0, 10.0), 1, cluster="c0", gpus=2, gpu_capacity=(1000.0,))
    inst = Instance("cpu-binds", ("cpu", "mem"), (ht,),
                    (App("t", (6.0, 1.0), 3, gpu_cards=1, gpu_per_card=(300.0,)),), gpu_resources=("core",))
    relax = card_bound(inst)
    assert relax is not None and relax[0] == 3  # the cards alone would take all three
    opt = optimum(inst, time_limit=10)
    assert (opt.deployed, opt.bound, opt.proven, opt.method) == (1, 1, True, "solver")


def test_optimum_refuses_an_infeasible_hint() -> None:
    from solvers.exact.max_deployed import optimum

    ht = HostType("h", (10.0, 10.0), 1, cluster="c0", gpus=2, gpu_capacity=(1000.0,))
    inst = Instance("cpu-binds", ("cpu", "mem"), (ht,),
                    (App("t", (6.0, 1.0), 3, gpu_cards=1, gpu_per_card=(300.0,)),), gpu_resources=("core",))
    bad = Placement.from_arrays(inst, np.zeros(3, dtype=np.int64), [(0,), (0,), (1,)])  # 18 CPU on 10
    with pytest.raises(ValueError, match="hint"):
        optimum(inst, time_limit=5, hint=bad)
