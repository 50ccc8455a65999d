"""The card model and the rollout expert of :mod:`policies.card_rollout` (hand-computed cases).

The card model replays ``mc-cardmix`` on free card shares; the labeler compares options by rolling it
out on sampled futures. With a one-size distribution the futures are deterministic, so its values and
its admission threshold can be computed by hand.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from packing.feasibility.checker import check
from packing.generators.multicluster import generate_multicluster
from packing.sim.simulator import simulate
from policies.card_rollout import (
    ClusterRollout,
    RolloutLabeler,
    card_free,
    cardmix_batch,
    options,
    task_milli,
)
from policies.cluster_heuristics import ClusterCardMix

DATA = Path(__file__).resolve().parents[1] / "data" / "multicluster_small"


def test_cardmix_batch_by_hand() -> None:
    # 4 cards, theta 0.3: the emptiest card while at least 2 are empty, then the tightest fit.
    # 470 -> c0 [530,1000,1000,1000]; 470 -> c1; 1000 -> c2 [530,530,0,1000]; 320 -> fit c0 [210,...];
    # 650 -> only c3 fits [210,530,0,350]; 1000 fits nowhere.
    seqs = np.array([[470, 470, 1000, 320, 650, 1000], [1000, 1000, 1000, 1000, 1000, 0]])
    free = np.full((2, 4), 1000)
    assert cardmix_batch(free, seqs, theta=0.3).tolist() == [5, 4]
    assert free.tolist() == [[1000] * 4] * 2  # not modified


def test_options_by_hand() -> None:
    free = np.array([1000, 530, 210])
    assert options(free, 470, theta=0.5) == ([("fresh", 0), ("fit", 1)], "fit")  # 1 empty card of 3 <= 1.5
    assert options(free, 470, theta=0.2) == ([("fresh", 0), ("fit", 1)], "fresh")
    assert options(free, 810, theta=0.2) == ([("fresh", 0), ("drop", -1)], "fresh")  # fit is the same card
    assert options(free, 100, theta=0.2, big=750)[0][-1] == ("fit", 2)
    assert options(np.array([100, 0]), 470) == ([], "fit")


def test_admission_threshold_three_cards_by_hand() -> None:
    """Three empty cards (one per cluster), a whole-card task, then ``r`` tasks of half a card.

    Admit: the card is gone and the other two take 4 halves, value ``1 + min(r, 4)``; drop: three cards
    take 6 halves, value ``min(r, 6)``. So admit for ``r <= 5`` (a tie at 5 keeps mc-cardmix's choice)
    and drop from ``r = 6``.
    """
    lab = RolloutLabeler(sizes=[(500, 1)], k=4, theta=0.15, seed=0)
    free = np.full(3, 1000)
    for r in range(0, 9):
        values, best = lab.evaluate(free, 1000, r)
        if r:
            assert values == {"fresh": 1 + min(r, 4), "drop": min(r, 6)}
        assert best == ("drop" if r >= 6 else "fresh"), r


def test_rollout_policy_valid_and_seeded() -> None:
    inst = generate_multicluster(DATA, DATA, clusters=3, nodes=2, tasks=40, seed=1)
    a = simulate(inst, ClusterRollout(k=8), seed=3)
    b = simulate(inst, ClusterRollout(k=8), seed=3)
    assert check(inst, a.placement) == []
    assert a.placement.host_array(inst).tolist() == b.placement.host_array(inst).tolist()
    st = simulate(inst, ClusterCardMix(), seed=0).engine.state
    free = card_free(st)
    assert free.shape == (int(st.card_exists.sum()),) and free.min() >= 0 and free.max() <= 1000
    assert {task_milli(inst, a) for a in range(inst.n_apps)} <= set(range(0, 1001))
