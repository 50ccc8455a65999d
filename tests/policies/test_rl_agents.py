"""EADE-M (policies/agents/eade_masked.py) and the SB3 wrappers (policies/agents/sb3.py), tiny sizes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from packing.feasibility.checker import check  # noqa: E402
from packing.generators.multicluster import generate_multicluster  # noqa: E402
from packing.sim.simulator import simulate  # noqa: E402
from policies.agents import eade_masked as em  # noqa: E402
from policies.agents import eade_masked_train as emt  # noqa: E402
from policies.agents.files import load_agent  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data" / "multicluster_small"
TINY = dict(embed=8, heads=2, hidden=(16, 8), batch=32, pretrain=40)
"""A tiny EADE-M (paper-size networks are exercised by tests/policies/test_eade.py)."""


pytestmark = pytest.mark.usefixtures("one_thread")


def stream(seed: int = 1) -> object:
    return generate_multicluster(DATA, DATA, clusters=3, nodes=2, tasks=30, seed=seed)


def test_draw_takes_the_configured_share() -> None:
    hist, live = emt.MReplay(100, 4, 2), emt.MReplay(100, 4, 2)
    for i in range(50):
        hist.add(np.zeros(4), 0, -1.0, np.zeros(4), False, np.ones(2, bool))
        live.add(np.ones(4), 1, float(i), np.ones(4), False, np.ones(2, bool))
    for beta, want in ((0.1, 4), (0.25, 10), (0.0, 0)):
        cols, k = emt.draw(hist, live, 40, beta, np.random.default_rng(0))
        assert k == want and cols["s"].shape == (40, 4) and cols["m2"].shape == (40, 2)
        assert int((cols["a"] == 0).sum()) == want  # history rows are the expert's (action 0), first
        assert bool((cols["a"][:want] == 0).all())
    cols, k = emt.draw(hist, emt.MReplay(10, 4, 2), 40, 0.1, np.random.default_rng(0))
    assert k == 40 and bool((cols["a"] == 0).all())  # no live data yet: all history


def test_values_are_per_cluster_and_the_choice_is_masked() -> None:
    torch.manual_seed(0)
    agent = em.EadeMAgent(em.MConfig(n_clusters=3, n_features=4, **TINY))  # type: ignore[arg-type]
    s = np.random.default_rng(0).random(16).astype(np.float32)
    v = agent.values(s)
    assert v.shape == (3,)
    for c in range(3):
        only = np.zeros(3, bool)
        only[c] = True
        assert agent.choose(s, only) == c
    assert agent.choose(s, np.zeros(3, bool)) == -1
    assert agent.choose(s, np.ones(3, bool)) == int(np.argmax(v))


def agreement(agent: em.EadeMAgent, hist: emt.MReplay) -> float:
    """Share of the expert's states where the agent's masked choice is the expert's cluster."""
    picks = [agent.choose(hist.s[i], np.ones(3, bool)) for i in range(hist.n)]
    return float(np.mean(np.array(picks) == hist.a[: hist.n]))


def test_short_run_reproducible_improves_and_places_validly(tmp_path: Path) -> None:
    inst = stream()
    kw = {**TINY, "embed": 16, "hidden": (32, 16), "pretrain": 200}
    hist = emt.MReplay(100, 16, 3)
    emt.expert_history(inst, hist, 50.0)  # type: ignore[arg-type]
    torch.manual_seed(0)
    untrained = em.EadeMAgent(em.MConfig(n_clusters=3, n_features=4, **kw))  # type: ignore[arg-type]
    a1, c1 = emt.train([inst], episodes=2, seed=0, **kw)  # type: ignore[list-item]
    a2, c2 = emt.train([inst], episodes=2, seed=0, **kw)  # type: ignore[list-item]
    assert [r["return"] for r in c1] == [r["return"] for r in c2]
    for p, q in zip(a1.q.parameters(), a2.q.parameters(), strict=True):
        assert torch.equal(p, q)
    # on its expert objective: from chance-like agreement with the expert to (almost) all of it
    assert agreement(untrained, hist) < 0.6 and agreement(a1, hist) >= 0.9
    assert emt.evaluate(a1, inst)[1] >= emt.evaluate(untrained, inst)[1]  # type: ignore[arg-type]
    res = simulate(inst, a1)  # type: ignore[arg-type]
    assert not check(inst, res.placement)  # type: ignore[arg-type]
    assert res.placement.n_placed == emt.evaluate(a1, inst)[1]  # type: ignore[arg-type]
    a1.save(tmp_path / "m.pt", {"episodes": 3})
    back = load_agent(tmp_path / "m.pt")
    assert not check(inst, simulate(inst, back).placement)  # type: ignore[arg-type]
    s = np.random.default_rng(1).random(16).astype(np.float32)
    assert np.allclose(back.values(s), a1.values(s))  # type: ignore[attr-defined]


@pytest.mark.parametrize("algo", ["td3", "sac", "ppo"])
def test_sb3_wrapper_saves_weights_only(algo: str, tmp_path: Path) -> None:
    pytest.importorskip("stable_baselines3")
    from policies.agents import sb3_train

    inst = stream()
    kw = {"policy_kwargs": {"net_arch": [8]}, "batch_size": 16}
    if algo == "ppo":
        kw["n_steps"] = 32
    else:
        kw["learning_starts"] = 10
    policy, curve = sb3_train.train(algo, [inst], episodes=2, seed=0, **kw)  # type: ignore[list-item]
    assert len(curve) >= 1 and policy.name == f"sb3-{algo}"
    path = tmp_path / f"{algo}.pt"
    policy.save(path)
    data = torch.load(path, weights_only=True)  # plain tensors and numbers: no pickle code
    assert data["kind"] == f"sb3-{algo}" and data["net_arch"] == [8]
    back = load_agent(path)
    s = np.random.default_rng(0).random(16).astype(np.float32)
    assert np.allclose(back.action(s), policy.action(s))  # type: ignore[attr-defined]
    res = simulate(inst, back)  # type: ignore[arg-type]
    assert not check(inst, res.placement)  # type: ignore[arg-type]
