"""Compiled GPU paths agree with the numpy / checker path, decision by decision, on GPU instances.

* :func:`packing.feasibility.kernels.fast_mask` and :func:`packing.feasibility.kernels.host_checker` equal
  ``ClusterState.mask`` with GPU cards, whole cards and card models;
* every compiled GPU policy kernel (:mod:`policies.gpu_kernels`) makes the same decisions and card
  choices as its policy's ``act`` / ``choose_cards`` through the engine, and its placement passes the
  checker;
* the compiled fragmentation equals the numpy per-shape definition, and the replayed record equals
  recomputing the cluster fragmentation after every arrival.
"""

from __future__ import annotations

import numpy as np
import pytest

from packing.feasibility import kernels
from packing.feasibility.checker import check
from packing.feasibility.predicates import ClusterState
from packing.gpu.fragmentation import (
    cluster_fragmentation,
    fragmentation,
    node_arrays,
    placement_record,
    shape_distribution,
    shape_fragmentation,
)
from packing.model.instance import App, HostType, Instance, Rule
from packing.sim.engine import Engine
from policies.gpu import FGD, FGDPack, GpuBestFit, GpuClustering, GpuDotProduct, GpuPacking, GpuPolicy
from policies.gpu_kernels import fgd_scores


def random_gpu_instance(seed: int, n_types: int = 4, n_apps: int = 7, rules: bool = False) -> Instance:
    """A small random GPU cluster: 0-4 cards of 1000 per host, two card models, shared, multi-share
    and whole-card apps (some restricted to one model), CPU-only apps; integer demands."""
    rng = np.random.default_rng(seed)
    types = []
    for t in range(n_types):
        g = int(rng.integers(0, 5))
        types.append(HostType(f"t{t}", (float(rng.integers(8, 33)) * 1000, float(rng.integers(16, 65))),
                              int(rng.integers(1, 4)), gpus=g, gpu_capacity=(1000.0,) if g else (),
                              gpu_model=("T4" if t % 2 else "V100") if g else None))
    apps = []
    for i in range(n_apps):
        cpu = (float(rng.integers(1, 9)) * 1000, float(rng.integers(1, 9)))
        kind = int(rng.integers(0, 5))
        count = int(rng.integers(1, 6))
        models = ("T4",) if rng.random() < 0.2 else ()
        if kind == 0:
            apps.append(App(f"c{i}", cpu, count))
        elif kind in (1, 2):
            apps.append(App(f"s{i}", cpu, count, gpu_cards=1,
                            gpu_per_card=(float(rng.integers(1, 10)) * 100,), gpu_models=models))
        elif kind == 3:
            apps.append(App(f"m{i}", cpu, count, gpu_cards=2,
                            gpu_per_card=(float(rng.integers(2, 8)) * 100,)))
        else:
            apps.append(App(f"w{i}", cpu, count, gpu_cards=int(rng.integers(1, 3)), gpu_whole=True,
                            gpu_models=models))
    rule = (Rule(apps[0].name, apps[1].name, 0),) if rules else ()
    if rules:
        apps[2] = App(apps[2].name, apps[2].demand, apps[2].count, max_per_host=1,
                      gpu_cards=apps[2].gpu_cards, gpu_per_card=apps[2].gpu_per_card,
                      gpu_whole=apps[2].gpu_whole,
                      gpu_models=apps[2].gpu_models)
    return Instance(f"gpu{seed}", ("cpu_milli", "memory_mib"), tuple(types), tuple(apps),
                    gpu_resources=("gpu_milli",), rules=rule)


def random_state(inst: Instance, seed: int, fill: int) -> ClusterState:
    """A state reached by placing ``fill`` random feasible containers (cards by ``choose_cards``)."""
    rng = np.random.default_rng(seed)
    st = ClusterState(inst)
    for _ in range(fill):
        a = int(rng.integers(inst.n_apps))
        ok = np.flatnonzero(st.mask(a))
        if len(ok):
            h = int(ok[rng.integers(len(ok))])
            st.place(a, h, st.choose_cards(a, h))
    return st


@pytest.mark.parametrize("seed", range(12))
def test_fast_mask_and_host_checker_equal_mask(seed: int) -> None:
    inst = random_gpu_instance(seed, rules=seed % 3 == 0)
    assert not kernels.supports(ClusterState(inst))
    for fill in (0, 5, 15, 40):
        st = random_state(inst, seed, fill)
        ok = kernels.host_checker(st)
        for a in range(inst.n_apps):
            m = st.mask(a)
            assert np.array_equal(kernels.fast_mask(st, a), m)
            assert [ok(a, h) for h in range(inst.n_hosts)] == m.tolist()


def test_feasible_gpu_hand_made_cards() -> None:
    """One host, 2 cards: card 0 holds 700, card 1 is empty; whole and shared tasks by hand."""
    t = HostType("t", (8000.0, 8.0), 1, gpus=2, gpu_capacity=(1000.0,), gpu_model="T4")
    apps = (App("s4", (1.0, 1.0), 3, gpu_cards=1, gpu_per_card=(400.0,)),
            App("s3", (1.0, 1.0), 3, gpu_cards=1, gpu_per_card=(300.0,)),
            App("w1", (1.0, 1.0), 2, gpu_cards=1, gpu_whole=True),
            App("w2", (1.0, 1.0), 1, gpu_cards=2, gpu_whole=True),
            App("v", (1.0, 1.0), 1, gpu_cards=1, gpu_per_card=(100.0,), gpu_models=("V100",)))
    inst = Instance("hand", ("cpu_milli", "memory_mib"), (t,), apps, gpu_resources=("gpu_milli",))
    st = ClusterState(inst)
    st.place(0, 0, (0,))
    st.place(1, 0, (0,))  # card 0: 700 used
    got = [bool(kernels.fast_mask(st, a)[0]) for a in range(inst.n_apps)]
    assert got == [True, True, True, False, False]  # w2 needs two empty cards; v needs a V100
    st.place(2, 0, (1,))  # card 1 whole
    got = [bool(kernels.fast_mask(st, a)[0]) for a in range(inst.n_apps)]
    assert got == [False, True, False, False, False]  # only 300 left, on card 0


POLICIES: list[type[GpuPolicy]] = [GpuDotProduct, GpuBestFit, GpuPacking, GpuClustering, FGD, FGDPack]


def numpy_episode(inst: Instance, policy: GpuPolicy, order: np.ndarray, seed: int
                  ) -> tuple[list[int], list[tuple[int, ...]], Engine]:
    policy.reset(inst, seed)
    eng = Engine(inst)
    d = eng.reset(order)
    hosts: list[int] = []
    cards: list[tuple[int, ...]] = []
    while d is not None:
        obs, mask = eng.observation(), eng.mask()
        h = policy.act(obs, mask)
        c = policy.choose_cards(obs, h)
        eng.apply(h, c)
        hosts.append(h)
        cards.append(tuple(sorted(c)))
        d = eng.decision
    return hosts, cards, eng


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("cls", POLICIES, ids=lambda c: c.name)
def test_compiled_gpu_policies_equal_numpy_path(cls: type[GpuPolicy], seed: int) -> None:
    inst = random_gpu_instance(100 + seed, n_types=5, n_apps=9, rules=seed % 4 == 1)
    order = np.random.default_rng(seed).permutation(inst.n_containers)
    pol = cls(tie="perm") if seed % 2 else cls(tie="index")
    hosts, cards, eng_np = numpy_episode(inst, pol, order, seed)
    pol2 = cls(tie="perm") if seed % 2 else cls(tie="index")
    pol2.reset(inst, seed)
    eng = Engine(inst)
    assert eng.reset(order, compiled=pol2) is None and eng.ran_compiled
    tr, tr_np = eng.trajectory(), eng_np.trajectory()
    placed_np = tr_np.host[tr_np.host >= 0].tolist()
    assert tr.host[tr.host >= 0].tolist() == placed_np == [h for h in hosts if h >= 0]
    assert np.array_equal(tr.host, tr_np.host) and np.array_equal(tr.outcome, tr_np.outcome)
    assert np.allclose(tr.allocation, tr_np.allocation)
    assert np.array_equal(tr.hosts_used, tr_np.hosts_used)
    assert np.array_equal(eng.host_of, eng_np.host_of)
    assert list(eng.cards_of) == list(eng_np.cards_of)
    assert pol2.last_cards is not None
    step_cards = [tuple(int(c) for c in row if c >= 0) for row in pol2.last_cards[tr.host >= 0]]
    assert step_cards == [c for h, c in zip(hosts, cards, strict=True) if h >= 0]
    assert check(inst, eng.placement()) == []
    assert np.array_equal(eng.state.card_used, eng_np.state.card_used)


def test_random_tie_and_no_gpu_take_numpy_path() -> None:
    inst = random_gpu_instance(3)
    st = ClusterState(inst)
    assert not FGD(tie="random").compiled_supports(st)
    assert FGD().compiled_supports(st)
    plain = Instance("cpu", ("cpu",), (HostType("t", (4.0,), 2),), (App("a", (1.0,), 3),))
    assert not GpuBestFit().compiled_supports(ClusterState(plain))


@pytest.mark.parametrize("seed", range(6))
def test_compiled_fragmentation_equals_per_shape_definition(seed: int) -> None:
    inst = random_gpu_instance(seed)
    dist = shape_distribution(inst)
    st = random_state(inst, seed, 20)
    args = node_arrays(st, dist.fit_resources)
    want = shape_fragmentation(*args, dist) @ dist.weight
    assert np.allclose(fragmentation(*args, dist), want, rtol=1e-12, atol=1e-9)


def test_placement_record_equals_recomputed_fragmentation() -> None:
    inst = random_gpu_instance(7, n_types=5, n_apps=9)
    dist = shape_distribution(inst)
    order = np.random.default_rng(7).permutation(inst.n_containers)
    pol = FGD()
    hosts, cards, _ = numpy_episode(inst, pol, order, 7)
    seq = inst.container_app[order]
    st = ClusterState(inst)
    h_arr = np.full(len(seq), -1)
    c_arr = np.full((len(seq), inst.max_gpus), -1)
    want_alloc, want_frag = [], []
    i = 0
    for t, a in enumerate(seq):  # the numpy loop records only decisions that were asked
        if st.mask(int(a)).any():
            h, c = hosts[i], cards[i]
            i += 1
            st.place(int(a), h, c)
            h_arr[t] = h
            c_arr[t, :len(c)] = c
        want_alloc.append(st.card_used[:, :, 0].sum())
        want_frag.append(cluster_fragmentation(st, dist))
    alloc, frag = placement_record(ClusterState(inst), seq, h_arr, c_arr, dist)
    assert np.allclose(alloc, want_alloc) and np.allclose(frag, want_frag)


def test_fgd_scores_by_hand() -> None:
    # delta 0 -> sigmoid 0.5 -> 50; a big decrease saturates at 100 (truncated below 100 until then)
    assert fgd_scores(np.array([0.0, -1e6, 1e6, -1000.0]), 1000.0).tolist() == [50.0, 100.0, 0.0, 73.0]
