"""EADE-M distilled from the rollout expert (item 12 of :mod:`policies.agents.eade_masked`)."""

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
from policies.card_rollout import OPTIONS, card_free, options, task_milli  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data" / "multicluster_small"
DISTIL = dict(embed=16, heads=2, hidden=(32, 16), batch=32, card_features=True, mix_inner=True, distil=True,
              rollout_k=4, distil_updates=5)


pytestmark = pytest.mark.usefixtures("one_thread")


def stream(seed: int = 1, tasks: int = 24) -> Instance:
    return generate_multicluster(DATA, DATA, clusters=3, nodes=2, tasks=tasks, seed=seed)


def test_global_features_match_the_card_model() -> None:
    inst = stream()
    seen = []

    class Probe(em.ClusterCardMix):
        def act(self, obs: em.Observation, mask: np.ndarray) -> int:
            g, avail = em.global_features(obs, 0.15)
            free, s = card_free(obs.state), task_milli(inst, obs.app)
            opts, base = options(free, s, 0.15)
            assert avail.tolist() == [o in dict(opts) for o in OPTIONS]
            assert g[0] == pytest.approx((inst.n_containers - obs.step - 1) / inst.n_containers)
            assert g[1] == pytest.approx(s / 1000) and g[6] == float(bool(opts) and base == "fit")
            assert g[7:].sum() == pytest.approx(((free > 0) & (free < 1000)).sum() / len(free))
            seen.append(obs.step)
            return super().act(obs, mask)

    simulate(inst, Probe(), seed=0)
    assert len(seen) > 10


def test_distil_options_are_validated() -> None:
    with pytest.raises(ValueError):
        em.MConfig(n_clusters=3, n_features=8, card_features=True, distil=True).validate()  # no mix_inner
    with pytest.raises(ValueError):
        em.MConfig(n_clusters=3, n_features=8, card_features=True, mix_inner=True, card_expert=True,
                   residual=True, distil=True).validate()


def test_distil_training_reproducible_valid_and_round_trip(tmp_path: Path) -> None:
    streams = [stream(s) for s in (1, 2)]
    a1, c1 = emt.train(streams, episodes=3, seed=5, **DISTIL)  # type: ignore[arg-type]
    a2, c2 = emt.train(streams, episodes=3, seed=5, **DISTIL)  # type: ignore[arg-type]
    assert [r["deployed"] for r in c1] == [r["deployed"] for r in c2]
    assert [r["labels"] for r in c1] == [r["labels"] for r in c2] and c1[-1]["labels"] > 0
    assert [r["loss"] for r in c1] == pytest.approx([r["loss"] for r in c2])
    assert "train_deployed" in c1[1] and "train_deployed" in c1[2]  # after the pass, and at the end
    inst = stream(3, 40)
    res = simulate(inst, a1, seed=0)
    assert check(inst, res.placement) == []
    hosts = res.placement.host_array(inst).tolist()
    assert simulate(inst, a2, seed=0).placement.host_array(inst).tolist() == hosts
    a1.save(tmp_path / "d.pt")
    back = load_agent(tmp_path / "d.pt")
    assert simulate(inst, back, seed=0).placement.host_array(inst).tolist() == hosts


def test_distil_targets_hard_and_soft() -> None:
    inf = float("inf")
    v = torch.tensor([[3.0, 3.5, -inf], [2.0, 2.0, 1.0]])
    assert emt.distil_targets(v, 0.0).tolist() == [1, 0]  # ties to the lowest index
    soft = emt.distil_targets(v, 0.5)
    assert soft.sum(dim=1).tolist() == pytest.approx([1.0, 1.0])
    assert soft[0, 2] == 0.0 and soft[0, 1] / soft[0, 0] == pytest.approx(np.e)  # exp(0.5 / 0.5)
    assert soft[1, 0] == pytest.approx(soft[1, 1]) and soft[1, 2] == pytest.approx(soft[1, 0] / np.e ** 2)


def test_distil_expert_episodes_zero_lets_the_agent_act_first() -> None:
    streams = [stream(s) for s in (1, 2)]
    cfg = dict(DISTIL, distil_expert_episodes=0, distil_temp=0.3, distil_ties=True)
    _, curve = emt.train(streams, episodes=1, seed=5, **cfg)  # type: ignore[arg-type]
    torch.manual_seed(5)
    lay = em.EnvLayout.of(streams[0])
    fresh = em.EadeMAgent(em.MConfig(n_clusters=lay.n_clusters, n_features=int(lay.cluster_capacity.shape[1])
                                     + em.CARD_FEATURES, **cfg))  # type: ignore[arg-type]
    assert curve[0]["deployed"] == emt.placed_by(fresh, streams[0], seed=0)
    assert curve[0]["labels"] > 0
