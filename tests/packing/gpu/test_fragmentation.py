"""The FGD paper's fragmentation measure on hand-computed node states (packing.gpu.fragmentation)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from packing.feasibility.predicates import ClusterState
from packing.gpu.fragmentation import (
    ShapeDistribution,
    cluster_fragmentation,
    fragmentation,
    fragmentation_rate,
    idle_gpu,
    node_fragmentation,
    shape_distribution,
    shape_fragmentation,
)
from packing.model.instance import App, HostType, Instance

INF = np.inf
OPENB_SMALL = Path(__file__).resolve().parents[2] / "data" / "openb_small"


def dist(shapes: list[tuple[float, int, float, bool]], weight: list[float] | None = None,
         n_types: int = 2) -> ShapeDistribution:
    """Shapes as (cpu, cards, share, model accepted on type 0); type 1 is always accepted."""
    n = len(shapes)
    w = np.full(n, 1.0 / n) if weight is None else np.array(weight, dtype=float)
    type_ok = np.ones((n, n_types), dtype=bool)
    type_ok[:, 0] = [s[3] for s in shapes]
    return ShapeDistribution(np.array([0]), np.array([[s[0]] for s in shapes], dtype=float),
                             np.array([s[1] for s in shapes], dtype=np.int64),
                             np.array([s[2] for s in shapes], dtype=float), type_ok, w,
                             tuple((i,) for i in range(n)))


# one node: 10 CPU free, four 1000-milli cards with 1000, 500, 200 and 0 free (idle 1700), type 0
FREE = np.array([[10.0]])
CARDS = np.array([[1000.0, 500.0, 200.0, 0.0]])
CAP = np.array([1000.0])
TYPE = np.array([0])


@pytest.mark.parametrize(("shape", "expected", "why"), [
    ((2, 0, 0.0, True), 1700, "a CPU-only task can use no idle GPU"),
    ((2, 1, 300.0, True), 200, "fits on 1000 or 500: only the 200 card is too small"),
    ((2, 1, 600.0, True), 700, "fits only on the empty card: 500 + 200 are fragments"),
    ((2, 1, INF, True), 700, "one whole card: the partial cards are fragments"),
    ((2, 2, INF, True), 1700, "two whole cards: only one empty card, nothing fits"),
    ((20, 1, 300.0, True), 1700, "not enough CPU (Q4): all idle GPU"),
    ((2, 1, 300.0, False), 1700, "card model not accepted: all idle GPU"),
    ((2, 1, 1000.0, True), 700, "a share equal to the card needs the empty card"),
    ((10, 1, 200.0, True), 0, "CPU exactly enough; 200 fits on the 200 card: no fragment"),
])
def test_one_shape(shape: tuple[float, int, float, bool], expected: float, why: str) -> None:
    f = shape_fragmentation(FREE, CARDS, CAP, TYPE, dist([shape]))
    assert f.shape == (1, 1)
    assert f[0, 0] == pytest.approx(expected), why


def test_expected_fragmentation_is_popularity_weighted() -> None:
    d = dist([(2, 0, 0.0, True), (2, 1, 300.0, True), (2, 1, INF, True)], [0.5, 0.25, 0.25])
    # 0.5 * 1700 + 0.25 * 200 + 0.25 * 700
    assert fragmentation(FREE, CARDS, CAP, TYPE, d)[0] == pytest.approx(1075.0)


def test_many_states_at_once_and_missing_cards() -> None:
    d = dist([(1, 1, 500.0, True)])
    free = np.array([[4.0], [4.0], [4.0]])
    cards = np.array([[1000.0, 0.0], [400.0, 300.0], [0.0, 0.0]])  # third: no card / all used
    out = fragmentation(free, cards, np.array([1000.0, 1000.0, 1000.0]), np.array([1, 1, 1]), d)
    assert out.tolist() == [0.0, 700.0, 0.0]


def _two_card_instance() -> Instance:
    return Instance(
        "t", ("cpu", "mem"),
        (HostType("g2", (8.0, 64.0), 2, gpus=2, gpu_capacity=(1000.0,), gpu_model="T4",
                  host_names=("n-b", "n-a")),),
        (App("cpu", (2.0, 30.0), 2),
         App("share", (1.0, 1.0), 6, gpu_cards=1, gpu_per_card=(300.0,)),
         App("whole", (1.0, 1.0), 2, gpu_cards=1, gpu_whole=True),
         App("v100", (1.0, 1.0), 0, gpu_cards=1, gpu_per_card=(300.0,), gpu_models=("V100",))),
        gpu_resources=("gpu_milli",))


def test_shape_distribution_groups_counts_and_cuts() -> None:
    inst = _two_card_instance()
    d = shape_distribution(inst, fit_resources=("cpu",))
    # share 6, cpu 2, whole 2 (the v100 app has no task): ranked by count, then the larger shape
    # first (CPU 2 before CPU 1)
    assert d.weight.tolist() == pytest.approx([0.6, 0.2, 0.2])
    assert d.gpu_cards.tolist() == [1, 0, 1]
    assert d.gpu_share[0] == 300.0 and d.gpu_share[1] == 0.0 and np.isinf(d.gpu_share[2])
    assert d.demand[:, 0].tolist() == [1.0, 2.0, 1.0]
    cut = shape_distribution(inst, threshold=0.6)
    assert cut.n_shapes == 1 and cut.weight.tolist() == [1.0]
    counts = np.array([0, 0, 0, 3])
    v = shape_distribution(inst, counts)
    assert v.n_shapes == 1 and v.type_ok.tolist() == [[False]]
    with pytest.raises(ValueError):
        shape_distribution(inst, threshold=0.0)
    with pytest.raises(ValueError):
        shape_distribution(inst, fit_resources=("disk",))


def test_shapes_differing_only_in_memory_merge_when_fit_on_cpu() -> None:
    inst = Instance("m", ("cpu", "mem"), (HostType("h", (8.0, 8.0), 1, gpus=1, gpu_capacity=(1000.0,)),),
                    (App("a", (1.0, 1.0), 1, gpu_cards=1, gpu_per_card=(500.0,)),
                     App("b", (1.0, 2.0), 3, gpu_cards=1, gpu_per_card=(500.0,))),
                    gpu_resources=("gpu_milli",))
    assert shape_distribution(inst, fit_resources=("cpu",)).n_shapes == 1
    assert shape_distribution(inst).n_shapes == 2


def test_from_cluster_state() -> None:
    inst = _two_card_instance()
    d = shape_distribution(inst, fit_resources=("cpu",))
    st = ClusterState(inst)
    # empty: share fits (0), whole fits (0), cpu-only sees all 2000 idle -> 0.2 * 2000 = 400 per host
    assert node_fragmentation(st, d).tolist() == pytest.approx([400.0, 400.0])
    st.place(1, 0, (0,))   # host 0 card 0: 700 free
    st.place(1, 0, (0,))   # 400 free
    st.place(1, 0, (0,))   # 100 free
    # host 0 cards 100 + 1000: share: 100 is a fragment; whole: 100; cpu-only: 1100
    assert node_fragmentation(st, d, np.array([0]))[0] == pytest.approx(0.6 * 100 + 0.2 * 100 + 0.2 * 1100)
    assert idle_gpu(st).tolist() == [1100.0, 2000.0]
    total = cluster_fragmentation(st, d)
    assert total == pytest.approx(300.0 + 400.0)
    assert fragmentation_rate(st, d) == pytest.approx(total / 3100.0)


def test_openb_small_empty_cluster() -> None:
    from packing.loaders.openb import load_openb

    inst = load_openb(OPENB_SMALL, nodes="gpu")
    d = shape_distribution(inst, fit_resources=("cpu_milli",))
    assert d.weight.sum() == pytest.approx(1.0)
    st = ClusterState(inst)
    f = node_fragmentation(st, d)
    idle = idle_gpu(st)
    assert np.all(f >= 0) and np.all(f <= idle + 1e-9)
    # every node: at least the CPU-only share of its idle GPU is fragmented
    cpu_only = d.weight[d.gpu_cards == 0].sum()
    assert np.all(f >= cpu_only * idle - 1e-6)


def test_a_workload_without_tasks_has_no_shape() -> None:
    """No task: an empty distribution, fragmentation 0 on every node (FGD then has nothing to place)."""
    inst = Instance("e", ("cpu",), (HostType("h", (4.0,), 2),), (App("a0", (1.0,), 0),))
    d = shape_distribution(inst)
    assert d.n_shapes == 0 and d.demand.shape == (0, 1)
    with pytest.raises(ValueError, match="threshold"):
        shape_distribution(inst, threshold=0.0)
