"""The FGD paper's GPU policies (policies.gpu): node and card choice on hand-made cluster states."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from packing.feasibility.checker import check
from packing.feasibility.predicates import ClusterState
from packing.gpu.fragmentation import node_fragmentation, shape_distribution
from packing.model.instance import App, HostType, Instance
from packing.sim.policy import ChoosingCards, Observation
from packing.sim.simulator import simulate
from policies.gpu import (
    FGD,
    PLUS_FEATURES,
    FGDPack,
    FGDPlus,
    GpuBestFit,
    GpuClustering,
    GpuDotProduct,
    GpuPacking,
    GpuRandom,
    pick,
)
from policies.registry import POLICIES, get_policy

OPENB_SMALL = Path(__file__).resolve().parents[1] / "data" / "openb_small"
GPU_NAMES = ("gpu-random", "gpu-dotprod", "gpu-clustering", "gpu-packing", "gpu-bestfit", "fgd", "fgd-plus",
             "fgd-pack")


def cluster(hosts: list[tuple[str, float, int]], apps: list[App]) -> Instance:
    """Hosts as (name, cpu, cards of 1000 gpu_milli); memory is never binding (1000 per host)."""
    types = tuple(HostType(f"t{i}", (cpu, 1000.0), 1, gpus=g, gpu_capacity=(1000.0,), gpu_model="T4",
                           host_names=(name,))
                  for i, (name, cpu, g) in enumerate(hosts))
    return Instance("hand", ("cpu", "mem"), types, tuple(apps), gpu_resources=("gpu_milli",))


def share(name: str, cpu: float, milli: float, count: int = 1) -> App:
    return App(name, (cpu, 1.0), count, gpu_cards=1, gpu_per_card=(milli,))


def whole(name: str, cpu: float, k: int, count: int = 1) -> App:
    return App(name, (cpu, 1.0), count, gpu_cards=k, gpu_whole=True)


def cpu_only(name: str, cpu: float, count: int = 1) -> App:
    return App(name, (cpu, 1.0), count)


def obs_for(st: ClusterState, app: int) -> Observation:
    return Observation(st, app, 0.0, 0, np.zeros(st.instance.n_apps, dtype=np.int64))


def decide(policy: object, st: ClusterState, app: int, seed: int = 0, reset: bool = True
           ) -> tuple[int, tuple[int, ...]]:
    if reset:
        policy.reset(st.instance, seed)  # type: ignore[attr-defined]
    o = obs_for(st, app)
    h = policy.act(o, st.mask(app))  # type: ignore[attr-defined]
    return h, policy.choose_cards(o, h)  # type: ignore[attr-defined]


def test_registered_and_choosing_cards() -> None:
    for n in GPU_NAMES:
        assert n in POLICIES
        assert isinstance(get_policy(n), ChoosingCards)
    with pytest.raises(ValueError):
        GpuBestFit(tie="alphabet")


def test_pick_ties_to_lowest_rank() -> None:
    scores = np.array([5, 7, 7, 7])
    mask = np.array([True, True, False, True])
    assert pick(scores, mask, np.array([0, 3, 0, 1])) == 3
    assert pick(scores, np.zeros(4, dtype=bool), np.arange(4)) == -1


def test_tie_break_by_name_and_seeded_permutation() -> None:
    inst = cluster([("b", 8, 2), ("a", 8, 2), ("c", 8, 2)], [cpu_only("x", 1)])
    st = ClusterState(inst)
    # a CPU-only task scores 0 everywhere for GpuPacking: the tie decides
    assert decide(GpuPacking(tie="name"), st, 0)[0] == 1
    assert decide(GpuPacking(tie="index"), st, 0)[0] == 0
    hosts = {decide(GpuPacking(), st, 0, seed=s)[0] for s in range(12)}
    assert len(hosts) > 1  # "perm": a seeded random node priority
    assert decide(GpuPacking(), st, 0, seed=3) == decide(GpuPacking(), st, 0, seed=3)


def test_bestfit_node_and_card() -> None:
    inst = cluster([("n0", 32, 2), ("n1", 32, 2)], [share("s", 4, 300), share("t", 1, 500)])
    st = ClusterState(inst)
    st.place(1, 1, (1,))  # n1 card 1 at 500 used
    # n0: 0.5 (28/32) + 0.5 (1700/2000) ... the simulator normalises by MAX_CPU = 32, MAX_GPU = 2000
    pol = GpuBestFit(tie="index")
    pol.reset(inst)
    s = pol.scores(obs_for(st, 0), st.mask(0))
    exp0 = int((1 - ((32 - 4) / 32 * 0.5 + (2000 - 300) / 2000 * 0.5)) * 100)
    exp1 = int((1 - ((31 - 4) / 32 * 0.5 + (1500 - 300) / 2000 * 0.5)) * 100)
    assert s.tolist() == [exp0, exp1]
    h, cards = decide(pol, st, 0)
    assert h == 1 and cards == (1,)  # the fuller node, the fitting card with least free share


def test_dotprod_prefers_least_aligned_node() -> None:
    inst = cluster([("n0", 32, 2), ("n1", 32, 2)], [share("s", 8, 500), cpu_only("c", 24)])
    st = ClusterState(inst)
    st.place(1, 0)  # n0: 8 CPU free, 2000 GPU free; n1: 32 CPU free
    pol = GpuDotProduct(tie="index")
    pol.reset(inst)
    s = pol.scores(obs_for(st, 0), st.mask(0))
    dot0 = (8 / 32) * (8 / 32) + (2000 / 2000) * (500 / 2000)
    dot1 = (32 / 32) * (8 / 32) + (2000 / 2000) * (500 / 2000)
    assert s.tolist() == [int(100 * (1 - dot0 / 2)), int(100 * (1 - dot1 / 2))]
    assert decide(pol, st, 0)[0] == 0


def test_packing_tiers_and_cards() -> None:
    inst = cluster([("idle8", 64, 8), ("idle2", 64, 2), ("used", 64, 4), ("shared", 64, 2)],
                   [share("s", 1, 300), whole("w", 1, 1), cpu_only("c", 1)])
    st = ClusterState(inst)
    st.place(1, 2, (0,))             # "used": card 0 taken whole, 3 empty cards
    st.place(0, 3, (1,))             # "shared": card 1 at 700 free
    pol = GpuPacking(tie="index")
    pol.reset(inst)
    s = pol.scores(obs_for(st, 0), st.mask(0)).tolist()
    # idle nodes: max(33 - free, free); used node needs 1 empty card: 49; shared card: 100 - 70 // 10
    assert s == [25, 31, 49, 93]
    assert decide(pol, st, 0) == (3, (1,))
    sw = pol.scores(obs_for(st, 1), st.mask(1)).tolist()
    assert sw[:3] == [25, 31, 49]
    assert decide(pol, st, 1) == (2, (1,))  # first empty card on the used node
    assert pol.scores(obs_for(st, 2), st.mask(2)).tolist() == [0, 0, 0, 0]


def test_clustering_follows_labels_of_its_own_placements() -> None:
    inst = cluster([("a", 64, 4), ("b", 64, 4), ("c", 64, 4)],
                   [share("s", 1, 300, 3), whole("w", 1, 1, 3)])
    pol = GpuClustering(tie="index")
    res = simulate(inst, pol, seed=0)
    assert not check(inst, res.placement)
    hosts = res.host_of
    # the three share tasks go together, the whole-card tasks to another node
    assert len(set(hosts[:3].tolist())) == 1
    assert len(set(hosts[3:].tolist())) == 1 and hosts[3] != hosts[0]
    st = ClusterState(inst)
    st.place(0, 0, (0,))
    pol.reset(inst)
    pol._aff[0, 0] = 1  # host a runs a share task
    s = pol.scores(obs_for(st, 0), st.mask(0)).tolist()
    # 25 (8000... here MAX_GPU 4000) * (4000 - free) // 4000 + 75 / 25 / 25
    assert s == [75 + (25 * 300) // 4000, 25, 25]


def test_random_is_seeded_and_feasible() -> None:
    inst = cluster([("a", 8, 2), ("b", 8, 2), ("c", 8, 2)], [share("s", 1, 300)])
    st = ClusterState(inst)
    st.place(0, 0, (0,))
    runs = [decide(GpuRandom(), st, 0, seed=7) for _ in range(2)]
    assert runs[0] == runs[1]
    many = {decide(GpuRandom(), st, 0, seed=s) for s in range(30)}
    assert {h for h, _ in many} == {0, 1, 2}
    assert all(len(c) == 1 for _, c in many)


def test_fgd_card_keeps_a_usable_remainder() -> None:
    # tasks of 500: putting one on the 600 card leaves 100 that no task can use; the empty card not
    inst = cluster([("n", 32, 2)], [share("t", 1, 500, 4), share("x", 1, 400)])
    st = ClusterState(inst)
    st.place(1, 0, (1,))  # card 1: 600 free
    d = shape_distribution(inst, np.array([1, 0]))
    pol = FGD(shapes=d)
    h, cards = decide(pol, st, 0)
    assert (h, cards) == (0, (0,))
    assert decide(GpuBestFit(), st, 0)[1] == (1,)  # best fit takes the tighter card


def test_fgd_node_minimises_fragmentation_increase() -> None:
    # shapes: 1 whole card (weight 1). Node "a" has one empty and one half card; node "b" two empty.
    # A 500 task on "a"'s half card fills it (-500 fragments); on "b" it breaks an empty card (+500).
    inst = cluster([("b", 32, 2), ("a", 32, 2)], [whole("w", 1, 1, 3), share("s", 1, 500)])
    st = ClusterState(inst)
    st.place(1, 1, (0,))
    d = shape_distribution(inst, np.array([1, 0]))
    pol = FGD(shapes=d, tie="index")
    pol.reset(inst)
    before = node_fragmentation(st, d)
    assert before.tolist() == [0.0, 500.0]
    assert decide(pol, st, 1, reset=False) == (1, (0,))
    # scores int(100 sigmoid(-increase / 1000)): "b" 37; "a" card 0 62 (-500), card 1 37 (+500)
    h, c, score = pol.candidates(obs_for(st, 1), np.array([0, 1]))
    assert list(zip(h.tolist(), c.tolist(), score.tolist(), strict=True)) == [(0, 0, 37), (1, 0, 62),
                                                                              (1, 1, 37)]


def test_fgd_whole_and_cpu_only_tasks() -> None:
    inst = cluster([("a", 4, 2), ("b", 32, 2)], [share("s", 2, 300, 5), cpu_only("c", 3, 5)])
    st = ClusterState(inst)
    d = shape_distribution(inst, np.array([1, 0]), fit_resources=("cpu",))
    pol = FGD(shapes=d, tie="index")
    # a CPU task on "a" leaves 1 CPU: no share task fits there any more (+2000 fragments); on "b" not
    assert decide(pol, st, 1) == (1, ())
    _, _, score = pol.candidates(obs_for(st, 1), np.array([0, 1]))
    assert score.tolist() == [11, 50]


@pytest.mark.parametrize("name", GPU_NAMES)
def test_every_policy_on_openb_small(name: str) -> None:
    from packing.loaders.openb import load_openb

    inst = load_openb(OPENB_SMALL, nodes="gpu")
    res = simulate(inst, get_policy(name), seed=1)
    assert not check(inst, res.placement)
    again = simulate(inst, get_policy(name), seed=1)
    assert np.array_equal(res.host_of, again.host_of)


@pytest.mark.parametrize("name", GPU_NAMES)
def test_instances_without_gpus(name: str) -> None:
    inst = Instance("cpu", ("cpu",), (HostType("h", (4.0,), 3),), (App("a", (1.0,), 7),))
    res = simulate(inst, get_policy(name), seed=0)
    assert res.placement.n_placed == 7 and not check(inst, res.placement)


def test_fgd_plus_with_zero_weights_is_fgd() -> None:
    from packing.loaders.openb import load_openb

    inst = load_openb(OPENB_SMALL, nodes="gpu")
    a = simulate(inst, FGD(), seed=3)
    b = simulate(inst, FGDPlus(weights=[0.0] * len(PLUS_FEATURES)), seed=3)
    assert np.array_equal(a.host_of, b.host_of)
    assert a.placement.gpus == b.placement.gpus


def test_fgd_plus_features_and_weights(tmp_path: Path) -> None:
    from policies.gpu import load_plus_weights, save_plus_weights

    inst = cluster([("a", 8.0, 2), ("b", 8.0, 2)], [share("s", 1.0, 300.0), share("t", 1.0, 600.0)])
    st = ClusterState(inst)
    st.place(0, 0, (0,))  # host a has card 0 at 300 used: a 600 task there keeps host b idle
    pol = FGDPlus(weights=[0.0] * len(PLUS_FEATURES))
    pol.reset(inst, 0)
    o = obs_for(st, 1)
    h, c, _, after, _ = pol.moves(o, np.array([0, 1]))
    phi = pol.features(o, h, c, after)
    assert phi.shape == (len(h), len(PLUS_FEATURES))
    row = {(int(x), int(y)): i for i, (x, y) in enumerate(zip(h, c, strict=True))}
    on_a = phi[row[(0, 0)]]
    assert on_a[0] == pytest.approx((100 + 1000) / 2000) and on_a[1] == pytest.approx(6 / 8)
    assert on_a[3] == pytest.approx(0.1) and on_a[4] == 0.0
    assert phi[row[(1, 0)]][4] == 1.0  # host b is idle: the task opens it
    # a large weight on "opens" forbids opening host b; a large positive one prefers it
    assert decide(FGDPlus(weights=[0, 0, 0, 0, -50.0]), st, 1)[0] == 0
    assert decide(FGDPlus(weights=[0, 0, 0, 0, 50.0]), st, 1)[0] == 1
    f = tmp_path / "w.json"
    save_plus_weights(f, [1, 2, 3, 4, 5], {"command": "x"})
    assert load_plus_weights(f).tolist() == [1, 2, 3, 4, 5]
    assert load_plus_weights(tmp_path / "absent.json").tolist() == [0.0] * len(PLUS_FEATURES)
    with pytest.raises(ValueError):
        FGDPlus(weights=[1.0])


def test_packed_fragmentation_by_hand() -> None:
    """One node, 2 empty cards, 4000 CPU free; one shape (500 milli, 2000 CPU).

    F (FGD): the task fits and no card is below 500, so 0. P: 4 shares fit the cards but CPU takes
    only 2 tasks, so 2 x 500 of the 2000 idle are usable: P = 1000. The mix is (1 - lam) F + lam P.
    """
    from packing.gpu.fragmentation import fragmentation_mix

    inst = cluster([("n", 4000.0, 2)], [share("s", 2000.0, 500.0)])
    dist = shape_distribution(inst)
    free = np.array([[4000.0, 999.0]])
    cards = np.array([[1000.0, 1000.0]])
    args = (free, cards, np.array([1000.0]), np.array([0]), dist)
    assert fragmentation_mix(*args, np.array([0.0, 1.0, 0.0])).tolist() == [0.0]
    assert fragmentation_mix(*args, np.array([1.0, 1.0, 0.0])).tolist() == [1000.0]
    assert fragmentation_mix(*args, np.array([0.5, 1.0, 0.0])).tolist() == [500.0]
    # memory binds too: 1 MiB per task and 1 MiB free -> one task -> 1500 stranded
    free_mem = np.array([[4000.0, 1.0]])
    assert fragmentation_mix(free_mem, *args[1:], np.array([1.0, 1.0, 0.0])).tolist() == [1500.0]
    # a card of 300 free: FGD counts it (below 500); P counts 300 + CPU-stranded share
    cards2 = np.array([[300.0, 1000.0]])
    assert fragmentation_mix(free, cards2, *args[2:], np.array([0.0, 1.0, 0.0])).tolist() == [300.0]
    assert fragmentation_mix(free, cards2, *args[2:], np.array([1.0, 1.0, 0.0])).tolist() == [300.0]


def test_fgd_pack_keeps_cpu_beside_free_cards() -> None:
    """A CPU-only task: FGD sees no change on either node (one GPU task still fits), ties to node 0;
    FGD-Pack sees that node 0 would strand a 500 share for lack of CPU and takes node 1."""
    inst = cluster([("a", 4000.0, 2), ("b", 16000.0, 2)], [share("s", 2000.0, 500.0, count=10),
                                                         cpu_only("c", 2000.0)])
    st = ClusterState(inst)
    assert decide(FGD(tie="index"), st, 1) == (0, ())
    assert decide(FGDPack(lam=1.0, tie="index"), st, 1) == (1, ())
    # a GPU-sharing task strands nothing more on either node (node a: P stays 1000, node b: 0), so
    # both tie, as with FGD: node 0, card 0
    assert decide(FGDPack(lam=0.5, tie="index"), st, 0) == (0, (0,))
    st.place(1, 0)  # node a now has CPU for one task: a second share there strands nothing new either,
    # but a CPU-only task on a would strand one more share: FGD-Pack sends it to b
    assert decide(FGDPack(lam=1.0, tie="index"), st, 1) == (1, ())


def test_fgd_pack_parameters() -> None:
    with pytest.raises(ValueError):
        FGDPack(lam=1.5)
    inst = cluster([("a", 4000.0, 2)], [share("s", 2000.0, 500.0)])
    with pytest.raises(ValueError):
        FGDPack(check=("disk",)).reset(inst, 0)
    pol = FGDPack(lam=0.25, check=("cpu", "mem"))
    pol.reset(inst, 0)
    assert pol._params.tolist() == [0.25, 1.0, 1.0]
