"""EADE-DDPG (policies/agents/eade.py): shapes, dual replay, checkpoints, a short reproducible run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from packing.feasibility.checker import check
from packing.generators.multicluster import generate_multicluster
from packing.sim.simulator import simulate
from policies.agents.eade import Actor, Config, Critic, EadeAgent, seeded
from policies.agents.eade_train import Replay, dual_batch, evaluate, expert_transitions, train

DATA = Path(__file__).resolve().parents[1] / "data" / "multicluster_small"
SMALL = dict(embed=16, heads=2, hidden=(32, 16), batch=64, tau_soft=0.02, noise=0.3, gamma=0.5, lr_actor=3e-4)
"""A small network and the settings the short run learns with (paper: embed 128, batch 256, lr 1e-4)."""


pytestmark = pytest.mark.usefixtures("one_thread")


def stream() -> object:
    return generate_multicluster(DATA, DATA, clusters=3, nodes=2, tasks=30, seed=1)


def test_shapes_paper_size() -> None:
    seeded(0)
    cfg = Config(n_clusters=16, n_features=4)  # 16 * 4 + 4 = 68 inputs, embedding 128
    s = torch.rand(5, 68)
    a = Actor(cfg)(s)
    assert a.shape == (5, 1) and bool((a.abs() <= 1).all())
    assert Critic(cfg)(s, a).shape == (5, 1)
    assert Actor(cfg).tokens.out_features == 17 * 128


def test_dual_batch_shares() -> None:
    hist, live = Replay(100, 4), Replay(100, 4)
    for i in range(50):
        hist.add(np.zeros(4), np.array([-1.0]), 0.0, np.zeros(4), False)
        live.add(np.ones(4), np.array([1.0]), float(i), np.ones(4), False)
    s, a, r, s2, done = dual_batch(hist, live, 40, 0.1, np.random.default_rng(0))
    assert s.shape == (40, 4) and a.shape == r.shape == done.shape == (40, 1)
    assert int((a[:, 0] < 0).sum()) == 4  # 10% history
    s, a, *_ = dual_batch(hist, Replay(10, 4), 40, 0.1, np.random.default_rng(0))
    assert bool((a < 0).all())  # no live data yet: all history


def test_expert_prefill() -> None:
    hist = Replay(1000, 16)
    ret = expert_transitions(stream(), hist)  # type: ignore[arg-type]
    assert len(hist) > 0 and ret > -100.0  # the expert never fails: its reward is 0 or a small minus


def test_checkpoint_round_trip(tmp_path: Path) -> None:
    seeded(3)
    agent = EadeAgent(Config(n_clusters=3, n_features=4, **SMALL))  # type: ignore[arg-type]
    agent.save(tmp_path / "a.pt")
    back = EadeAgent.load(tmp_path / "a.pt")
    s = np.random.default_rng(0).random(16).astype(np.float32)
    assert back.action(s) == pytest.approx(agent.action(s))
    assert back.cfg == agent.cfg


def test_short_training_reproducible_and_improves() -> None:
    inst = stream()
    seeded(0)
    untrained = evaluate(EadeAgent(Config(n_clusters=3, n_features=4, **SMALL)), inst)  # type: ignore[arg-type]
    a1, r1 = train([inst], episodes=3, seed=0, **SMALL)  # type: ignore[list-item]
    a2, r2 = train([inst], episodes=3, seed=0, **SMALL)  # type: ignore[list-item]
    assert [r["return"] for r in r1] == [r["return"] for r in r2]
    for p, q in zip(a1.actor.parameters(), a2.actor.parameters(), strict=True):
        assert torch.equal(p, q)
    agent, _ = train([inst], episodes=60, seed=0, **SMALL)  # type: ignore[list-item]
    trained = evaluate(agent, inst)
    assert trained[0] > untrained[0] + 500 and trained[1] > untrained[1]
    # the agent is a vbp policy too
    res = simulate(inst, agent)  # type: ignore[arg-type]
    assert not check(inst, res.placement)  # type: ignore[arg-type]
