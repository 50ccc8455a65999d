"""The EADE-DDPG scenario generator and MDP (packing/generators/multicluster.py, packing/env/eade.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from packing.env.eade import ClusterFreeEncoder, eade_reward, make_env, score, scores_after
from packing.feasibility.checker import check
from packing.generators.multicluster import CARD_MEMORY_MIB, generate_multicluster
from packing.model.instance import App, HostType, Instance, Request
from packing.sim.policy import WAIT, Observation

DATA = Path(__file__).resolve().parents[2] / "data" / "multicluster_small"


class FirstHost:
    """Inner rule for tests: the lowest-index host of the mask."""

    name = "first"

    def reset(self, instance: Instance, seed: int | None = None) -> None:
        """Nothing to reset."""

    def act(self, obs: Observation, mask: np.ndarray) -> int:
        """Lowest index, WAIT when empty."""
        ok = np.flatnonzero(mask)
        return int(ok[0]) if len(ok) else WAIT


def small(seed: int = 1, **kw: object) -> Instance:
    return generate_multicluster(DATA, DATA, clusters=3, nodes=2, tasks=30, seed=seed, **kw)  # type: ignore[arg-type]


def test_generator_shape_and_units() -> None:
    inst = small()
    assert inst.n_hosts == 6 and inst.n_containers == 30 and len(inst.requests) == 30
    assert {t.cluster for t in inst.host_types} == {"c00", "c01", "c02"}
    assert inst.resources == ("cpu_milli", "memory_mib") and inst.gpu_resources == ("gpu_mem", "gpu_core")
    t4 = inst.host_types[0]
    assert t4.capacity == (96000.0, 512 * 1024.0) and t4.gpus == 2
    assert t4.gpu_capacity == (float(CARD_MEMORY_MIB["T4"]), 1000.0)
    for app in inst.apps:
        assert app.gpu_cards == 1  # default: one-card tasks only
        if not app.gpu_whole:
            mem, core = app.gpu_per_card
            assert mem == round(core / 1000 * 16384)  # memory share = compute share (documented)
    # FIFO stream: one request per task, times 0..K-1
    assert [r.time for r in inst.requests] == list(map(float, range(30)))


def test_generator_seeded() -> None:
    assert small(1) == small(1)
    assert small(1).requests != small(2).requests
    p100 = small(1, gpu_types=("P100",))
    assert all(t.gpu_model == "P100" and t.capacity[0] == 64000.0 for t in p100.host_types)


def test_generator_errors() -> None:
    with pytest.raises(ValueError, match="card memory"):
        small(gpu_types=("P4",))
    with pytest.raises(FileNotFoundError):
        generate_multicluster(DATA / "nowhere", DATA)


def three_clusters() -> Instance:
    """c00, c01: one (10, 10) host each; c02: one (20, 20) host. Stream A, B, C, D, E."""
    hosts = (HostType("h0", (10.0, 10.0), 1, cluster="c00"), HostType("h1", (10.0, 10.0), 1, cluster="c01"),
             HostType("h2", (20.0, 20.0), 1, cluster="c02"))
    apps = (App("A", (5.0, 5.0), 1), App("B", (2.0, 2.0), 1), App("C", (6.0, 6.0), 1),
            App("D", (1.0, 1.0), 1), App("E", (1.0, 1.0), 1))
    reqs = tuple(Request(float(i), n) for i, n in enumerate("ABCDE"))
    return Instance("three", ("cpu", "mem"), hosts, apps, requests=reqs)


def test_reward_by_hand() -> None:
    env = make_env(three_clusters(), FirstHost())
    env.reset(seed=0)
    centre = [env.actions.action_of_bin(env.layout, k) for k in range(4)]  # type: ignore[attr-defined]
    assert [round(float(c[0]), 2) for c in centre] == [-0.75, -0.25, 0.25, 0.75]
    # A (5,5) -> c00: U = [0.5, 0, 0], Score 1 -> reward 0
    _, r, *_ = env.step(centre[0])
    assert r == 0.0
    # B (2,2) -> c02: U = [0.5, 0, 0.1], Score = 0.1 / 0.5 = 0.2 -> (0.2 - 1) * 10 = -8
    _, r, *_ = env.step(centre[2])
    assert r == pytest.approx(-8.0)
    # C (6,6) -> c00 has 5 left: failure, -50, C rejected
    _, r, _, _, info = env.step(centre[0])
    assert r == -50.0 and info["invalid_action"] and info["rejected"] == 1
    # D (1,1) -> c01: U = [0.5, 0.1, 0.1], Score = (0.1 - 0.1) / (0.5 - 0.1) = 0 -> -10
    _, r, *_ = env.step(centre[1])
    assert r == pytest.approx(-10.0)
    # E: WAIT while every cluster could take it -> -50; the stream ends
    _, r, done, _, _ = env.step(centre[3])
    assert r == -50.0 and done
    assert not check(env.instance, env.placement())


def test_score_and_reward_functions() -> None:
    u = np.array([0.5, 0.1, 0.15])
    assert score(u, 0) == 1.0 and score(u, 1) == 0.0 and score(u, 2) == pytest.approx(0.125)
    assert score(np.zeros(3), 1) == 1.0
    assert eade_reward(u, 2) == pytest.approx(-8.75) and eade_reward(u, None) == -50.0


def test_scores_after_by_hand() -> None:
    inst = three_clusters()
    env = make_env(inst, FirstHost())
    env.reset(seed=0)
    env.step(env.actions.action_of_bin(env.layout, 0))  # type: ignore[attr-defined]  # A in c00
    # B (2,2): in c00 -> U = [0.7, 0, 0] (Score 1); in c01 -> [0.5, 0.2, 0] (0.4);
    # in c02 -> [0.5, 0, 0.1] (0.2)
    s = scores_after(env.layout, env.engine.state, inst.app_index["B"])
    np.testing.assert_allclose(s, [1.0, 0.4, 0.2])


def test_state_layout() -> None:
    inst = small()
    env = make_env(inst, FirstHost())
    obs, _ = env.reset(seed=0)
    assert obs.shape == (3 * 4 + 4,) and env.observation_space.contains(obs)
    np.testing.assert_array_equal(obs[:12], 1.0)  # every cluster empty
    app = env.engine.decision.app  # type: ignore[union-attr]
    np.testing.assert_allclose(obs[12:14], inst.demand[app] / np.array([96000.0, 512 * 1024.0]), rtol=1e-6)
    enc = ClusterFreeEncoder()
    assert enc.space(env.layout).shape == (16,)


def test_paper_size_state_is_68() -> None:
    inst = generate_multicluster(DATA, DATA, clusters=16, nodes=4, tasks=40, seed=0)
    env = make_env(inst, FirstHost())
    assert env.observation_space.shape == (68,)


def test_check_env_and_random_episode() -> None:
    env = make_env(small(), FirstHost())
    check_env(env, skip_render_check=True)
    env.reset(seed=3)
    env.action_space.seed(3)
    done = False
    while not done:
        _, r, done, _, _ = env.step(env.action_space.sample())
        assert r <= 0.0
    assert not check(env.instance, env.placement())


def test_cli_generate(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from packing.io import load_instance
    from vbp.cli import cli

    out = tmp_path / "mc.json"
    args = ["generate", "multicluster", "--data", str(DATA), "--clusters", "3", "--nodes", "2",
            "--tasks", "30", "--seed", "1", "--out", str(out)]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    assert load_instance(out) == small(1)
    bad = CliRunner().invoke(cli, [*args[:-2], "--gpu-type", "P4", "--out", str(out), "--force"])
    assert bad.exit_code == 2 and "card memory" in bad.output
