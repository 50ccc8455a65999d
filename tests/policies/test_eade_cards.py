"""Card-level features, the node-mix card rule and mc-cardmix (EADE-M items 6-7), hand-computed.

The 3-cluster example: ``tests/data/multicluster_small`` (3 clusters x 2 T4 nodes x 2 cards of
16384 MiB / 1000 milli; hosts 0-1 are c00, 2-3 c01, 4-5 c02). Before the decision: an 810-milli task
(``s004``: 13271 MiB, 810) on host 0 card 0, a 460-milli task (``s008``: 7537 MiB, 460) on host 2
card 1, whole-card tasks (``s000``) on host 4 card 0 and host 5 card 0. The task to place is another
``s008``. A card's free share is the mean over (GPU memory, GPU core) of free / capacity.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from packing.env.layout import EnvLayout  # noqa: E402
from packing.feasibility.checker import check  # noqa: E402
from packing.feasibility.predicates import ClusterState  # noqa: E402
from packing.generators.multicluster import generate_multicluster  # noqa: E402
from packing.model.instance import Instance  # noqa: E402
from packing.sim.policy import Observation  # noqa: E402
from packing.sim.simulator import simulate  # noqa: E402
from policies.agents import eade_masked as em  # noqa: E402
from policies.agents import eade_masked_train as emt  # noqa: E402
from policies.agents.files import load_agent  # noqa: E402
from policies.cluster_heuristics import ClusterCardMix, NodeCardMix, card_fit, free_card_share  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data" / "multicluster_small"
TINY = dict(embed=16, heads=2, hidden=(32, 16), batch=32, pretrain=50, update_every=4, card_features=True,
            mix_inner=True, card_expert=True)


pytestmark = pytest.mark.usefixtures("one_thread")


def stream() -> Instance:
    return generate_multicluster(DATA, DATA, clusters=3, nodes=2, tasks=30, seed=1)


def example() -> tuple[Instance, Observation]:
    inst = stream()
    idx = {a.name: i for i, a in enumerate(inst.apps)}
    assert inst.apps[idx["s004"]].gpu_per_card == (13271.0, 810.0)
    assert inst.apps[idx["s008"]].gpu_per_card == (7537.0, 460.0)
    st = ClusterState(inst)
    st.place(idx["s004"], 0, (0,))
    st.place(idx["s008"], 2, (1,))
    st.place(idx["s000"], 4, (0,))
    st.place(idx["s000"], 5, (0,))
    return inst, Observation(st, idx["s008"], 0.0, 0, np.zeros(inst.n_apps, dtype=np.int64))


FULL = 1.0
PAIR_LEFT = ((16384 - 2 * 7537) / 16384 + (1000 - 920) / 1000) / 2  # 460 on the card holding a 460
FRESH_LEFT = ((16384 - 7537) / 16384 + (1000 - 460) / 1000) / 2  # 460 on an empty card
FREE_810 = ((16384 - 13271) / 16384 + 190 / 1000) / 2


def test_card_fit_by_hand() -> None:
    _, obs = example()
    fit, free, left = card_fit(obs.state, obs.app)
    assert fit.tolist() == [[False, True], [True, True], [True, True], [True, True], [False, True],
                            [False, True]]
    assert free[0, 0] == pytest.approx(FREE_810) and free[2, 1] == pytest.approx(FRESH_LEFT)
    assert free[4, 0] == pytest.approx(0.0) and free[1, 1] == pytest.approx(1.0)
    assert left[2, 1] == pytest.approx(PAIR_LEFT) and left[3, 0] == pytest.approx(FRESH_LEFT)
    assert free_card_share(obs.state) == pytest.approx(8 / 12)


def test_card_tokens_by_hand() -> None:
    inst, obs = example()
    lay = EnvLayout.of(inst)
    assert [h.tolist() for h in lay.cluster_hosts] == [[0, 1], [2, 3], [4, 5]]
    mask = np.ones(inst.n_hosts, dtype=bool)
    tok = em.card_tokens(lay, obs, mask)
    expect = [[FULL, 1 - FRESH_LEFT, 3 / 4, 3 / 4],   # c00: the 810 card cannot take 460
              [FULL, 1 - PAIR_LEFT, 3 / 4, 4 / 4],    # c01: pairing with the 460 is the best fit
              [FULL, 1 - FRESH_LEFT, 2 / 4, 2 / 4],   # c02: two cards full
              [8 / 12, 9 / 12, 0.0, 0.0]]             # task: free-card share, fit share, not whole
    assert tok.shape == (4, em.CARD_FEATURES)
    np.testing.assert_allclose(tok, np.array(expect), rtol=1e-6)
    mask[3] = False  # host 3 (c01) out, e.g. no CPU left: its two cards do not count as fitting
    tok = em.card_tokens(lay, obs, mask)
    assert tok[1, 3] == pytest.approx(2 / 4) and tok[3, 1] == pytest.approx(7 / 12)
    assert tok[1, 1] == pytest.approx(1 - PAIR_LEFT)


def test_node_mix_and_cardmix_by_hand() -> None:
    inst, obs = example()
    mask = np.ones(inst.n_hosts, dtype=bool)
    # 8/12 of the cards are free > 0.15: worst fit, the emptiest fitting card, lowest (host, card)
    assert NodeCardMix().pick_card(obs, mask) == (0, 1)
    # threshold above 8/12: best fit, the card holding the other 460
    rule = NodeCardMix(theta=0.9)
    assert rule.pick_card(obs, mask) == (2, 1)
    assert rule.act(obs, mask) == 2 and rule.choose_cards(obs, 2) == (1,)
    pol = ClusterCardMix(theta=0.9)
    pol.reset(inst, 0)
    assert pol.act(obs, mask) == 2 and pol.choose_cards(obs, 2) == (1,)
    lay = EnvLayout.of(inst)
    assert em.expert_cluster(pol, obs, mask, lay) == 1
    assert em.expert_cluster(ClusterCardMix(), obs, mask, lay) == 0


def test_cardmix_placements_pass_the_checker() -> None:
    inst = stream()
    res = simulate(inst, ClusterCardMix(), seed=0)
    assert not check(inst, res.placement)


def test_card_feature_agent_seeded_reproducible_and_round_trip(tmp_path: Path) -> None:
    inst = stream()
    a1, c1 = emt.train([inst], episodes=2, seed=3, **TINY)  # type: ignore[arg-type]
    a2, c2 = emt.train([inst], episodes=2, seed=3, **TINY)  # type: ignore[arg-type]
    assert a1.cfg.n_features == 4 + em.CARD_FEATURES
    assert [r["return"] for r in c1] == [r["return"] for r in c2]
    for p, q in zip(a1.q.parameters(), a2.q.parameters(), strict=True):
        assert torch.equal(p, q)
    res = simulate(inst, a1)
    assert not check(inst, res.placement)
    assert res.placement.n_placed == emt.evaluate(a1, inst)[1]
    a1.save(tmp_path / "m.pt", {"episodes": 2})
    back = load_agent(tmp_path / "m.pt")
    assert isinstance(back.inner, NodeCardMix)
    assert simulate(inst, back).placement.host_array(inst).tolist() == res.placement.host_array(inst).tolist()


def test_defaults_keep_the_paper_inner_rule_and_expert() -> None:
    cfg = em.MConfig(n_clusters=3, n_features=4)
    assert type(em.make_inner(cfg)).__name__ == "NodeBestFit"
    assert type(em.make_expert(cfg)).__name__ == "ClusterExpert"
    mixed = em.MConfig(n_clusters=3, n_features=8, mix_inner=True, card_expert=True, mix_theta=0.3)
    assert isinstance(em.make_inner(mixed), NodeCardMix) and em.make_inner(mixed).theta == 0.3
    assert isinstance(em.make_expert(mixed), ClusterCardMix)


def test_mode_action_shapes_and_mode_setting() -> None:
    cfg = em.MConfig(n_clusters=3, n_features=8, embed=16, heads=2, card_features=True, mix_inner=True,
                     mode_action=True)
    agent = em.EadeMAgent(cfg)
    assert agent.q(torch.rand(5, 4 * 8)).shape == (5, 6)
    inner = em.make_inner(cfg)
    assert isinstance(inner, NodeCardMix)
    assert agent.set_mode(inner, 4) == 1 and inner.mode == "fit"
    assert agent.set_mode(inner, 2) == 2 and inner.mode == "fresh"
    v = agent.values(np.zeros(32, dtype=np.float32))
    feasible = np.array([False, True, False])
    assert agent.choose(np.zeros(32, dtype=np.float32), feasible) in (1, 4)
    assert agent.choose(np.zeros(32, dtype=np.float32), feasible) == (1 if v[1] >= v[4] else 4)
    # an explicit mode overrides the threshold: "fit" on the example picks the best fit
    _, obs = example()
    inner.mode = "fit"
    assert inner.pick_card(obs, np.ones(6, dtype=bool)) == (2, 1)


def test_mode_action_run_reproducible_and_valid() -> None:
    inst = stream()
    kw = {**TINY, "mode_action": True}
    a1, c1 = emt.train([inst], episodes=1, seed=5, **kw)  # type: ignore[arg-type]
    a2, c2 = emt.train([inst], episodes=1, seed=5, **kw)  # type: ignore[arg-type]
    assert [r["return"] for r in c1] == [r["return"] for r in c2]
    for p, q in zip(a1.q.parameters(), a2.q.parameters(), strict=True):
        assert torch.equal(p, q)
    res = simulate(inst, a1)
    assert not check(inst, res.placement)
    assert res.placement.n_placed == emt.evaluate(a1, inst)[1]


SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"
SHIPPED = Path(__file__).resolve().parents[2] / "policies" / "data" / "eade-multicluster.pt"


@pytest.mark.skipif(not (SHARED / "alibaba-gpu-v2023").is_dir(), reason="needs ../shared/data (alibaba-gpu)")
def test_shipped_model_uses_the_card_options_and_replays() -> None:
    agent = load_agent(SHIPPED)
    assert agent.cfg.card_features and agent.cfg.mix_inner and agent.cfg.distil  # item 12: distilled rollouts
    assert agent.cfg.n_features == 8 and isinstance(agent.inner, NodeCardMix)
    inst = generate_multicluster(SHARED, SHARED, seed=0)  # a training stream, 16 x 4 T4, 220 tasks
    res = simulate(inst, agent, seed=0)
    assert not check(inst, res.placement)
    assert res.placement.n_placed == 161  # recorded when the model was shipped (mc-cardmix 161 here)
