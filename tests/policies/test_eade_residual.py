"""EADE-M residual on mc-cardmix and admission (items 9-10 of :mod:`policies.agents.eade_masked`).

The key property: with the zero-initialised last layers every value is 0, the expert's cluster gets
``residual_margin`` more, so the untrained agent makes exactly mc-cardmix's decisions (same hosts and
cards) on a whole stream; and a trained run stays valid and reproducible.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from packing.feasibility.checker import check  # noqa: E402
from packing.generators.multicluster import generate_multicluster  # noqa: E402
from packing.model.instance import Instance  # noqa: E402
from packing.sim.simulator import simulate  # noqa: E402
from policies.agents import eade_masked as em  # noqa: E402
from policies.agents import eade_masked_train as emt  # noqa: E402
from policies.agents.files import load_agent  # noqa: E402
from policies.cluster_heuristics import ClusterCardMix  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data" / "multicluster_small"
RESID = dict(embed=16, heads=2, hidden=(32, 16), batch=32, pretrain=30, update_every=4, card_features=True,
             mix_inner=True, card_expert=True, residual=True)


pytestmark = pytest.mark.usefixtures("one_thread")


def stream(seed: int = 1, tasks: int = 40) -> Instance:
    return generate_multicluster(DATA, DATA, clusters=3, nodes=2, tasks=tasks, seed=seed)


def cfg_for(inst: Instance, **kw: object) -> em.MConfig:
    n = len({h.cluster for h in inst.host_types})
    return em.MConfig(n_clusters=n, n_features=4 + em.CARD_FEATURES, **{**RESID, **kw})  # type: ignore[arg-type]


@pytest.mark.parametrize("admission", [False, True])
def test_untrained_residual_is_cardmix(admission: bool) -> None:
    for seed in (1, 2):
        inst = stream(seed)
        agent = em.EadeMAgent(cfg_for(inst, admission=admission))
        mine = simulate(inst, agent, seed=0).placement
        ref = simulate(inst, ClusterCardMix(), seed=0).placement
        assert mine.host_array(inst).tolist() == ref.host_array(inst).tolist()
        assert dict(mine.gpus) == dict(ref.gpus)
        assert 0 < mine.n_placed < inst.n_apps  # the stream is tight: decisions matter
        # the env episode places the same count
        assert emt.evaluate(agent, inst)[1] == ref.n_placed


def test_untrained_values_are_zero_and_margin_breaks_ties() -> None:
    inst = stream()
    agent = em.EadeMAgent(cfg_for(inst, admission=True))
    s = np.random.default_rng(0).random((agent.cfg.n_clusters + 1) * agent.cfg.n_features).astype(np.float32)
    assert np.all(agent.values(s) == 0.0) and agent.values(s).shape == (agent.cfg.n_clusters + 1,)
    feasible = np.array([True, False, True])
    assert agent.choose(s, feasible, expert=2) == 2
    assert agent.choose(s, feasible, expert=-1) == 0  # no expert: lowest feasible index
    with torch.no_grad():
        agent.q.wait[-1].bias.fill_(0.06)  # WAIT above the expert's margin 0.05
    assert agent.is_wait(agent.choose(s, feasible, expert=2))


def test_residual_options_are_validated() -> None:
    inst = stream()
    with pytest.raises(ValueError):
        em.EadeMAgent(cfg_for(inst, card_expert=False))
    with pytest.raises(ValueError):
        em.EadeMAgent(cfg_for(inst, residual=False, admission=True))


def test_residual_training_reproducible_valid_and_round_trip(tmp_path: Path) -> None:
    streams = [stream(s, 30) for s in (1, 2)]
    a1, c1 = emt.train(streams, episodes=3, seed=4, **RESID, admission=True)  # type: ignore[arg-type]
    _, c2 = emt.train(streams, episodes=3, seed=4, **RESID, admission=True)  # type: ignore[arg-type]
    assert [r["deployed"] for r in c1] == [r["deployed"] for r in c2]
    assert [r["return"] for r in c1] == pytest.approx([r["return"] for r in c2])
    inst = stream(3)
    res = simulate(inst, a1, seed=0)
    assert check(inst, res.placement) == []
    a1.save(tmp_path / "m.pt")
    back = load_agent(tmp_path / "m.pt")
    again = simulate(inst, back, seed=0).placement
    assert again.host_array(inst).tolist() == res.placement.host_array(inst).tolist()


def test_selection_never_ends_below_cardmix_on_the_training_streams() -> None:
    streams = [stream(s, 40) for s in (1, 2)]
    ref = sum(simulate(i, ClusterCardMix(), seed=0).placement.n_placed for i in streams)
    agent, curve = emt.train(streams, episodes=4, seed=0, **RESID, select_every=2,  # type: ignore[arg-type]
                            eps_start=0.5)
    got = sum(emt.evaluate(agent, i)[1] for i in streams)
    # the best is kept
    assert got >= max([ref] + [r["train_deployed"] for r in curve if "train_deployed" in r])
    assert [r["episode"] for r in curve if "train_deployed" in r] == [1, 3]
