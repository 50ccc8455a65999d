"""The offline GPU bound of the FGD protocol (solvers.bounds.gpu_bound.GpuBound) vs brute force, policies."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from packing.gpu.fgd_paper import DEFAULT_POLICIES
from packing.gpu.fgd_protocol import build_workload, run_policy
from packing.loaders.openb import load_openb
from packing.model.instance import App, HostType, Instance
from policies.fgd_eval import evaluate
from policies.registry import gpu_policy as make_policy
from solvers.bounds.gpu_bound import GpuBound, evaluate_bound

OPENB_SMALL = Path(__file__).resolve().parents[1] / "data" / "openb_small"


def _random_instance(rng: np.random.Generator) -> Instance:
    """Two host types (1-3 cards of 1000, models A/B), 3-4 apps, at most 5 pods and 3 hosts."""
    types = []
    for t in range(2):
        types.append(HostType(f"t{t}", (float(rng.integers(3, 9)), float(rng.integers(4, 17))),
                              int(rng.integers(1, 3)) if t == 0 else 1, gpus=int(rng.integers(1, 4)),
                              gpu_capacity=(1000.0,), gpu_model="AB"[t]))
    apps = []
    n_pods = 0
    for a in range(int(rng.integers(3, 5))):
        kind = rng.integers(4)
        cnt = int(rng.integers(1, 3)) if n_pods < 5 else 0
        cnt = min(cnt, 5 - n_pods)
        n_pods += cnt
        dem = (float(rng.integers(1, 5)), float(rng.integers(1, 9)))
        models = ("A",) if rng.random() < 0.25 else ()
        if kind == 0:
            apps.append(App(f"c{a}", dem, cnt))
        elif kind == 1:
            apps.append(App(f"w{a}", dem, cnt, gpu_cards=int(rng.integers(1, 3)), gpu_whole=True,
                            gpu_models=models))
        else:
            apps.append(App(f"s{a}", dem, cnt, gpu_cards=1,
                            gpu_per_card=(float(rng.choice([200, 300, 450, 500, 600, 700, 900])),),
                            gpu_models=models))
    return Instance("tiny", ("cpu", "mem"), tuple(types), tuple(apps), gpu_resources=("gpu_milli",))


def _host_ok(inst: Instance, t: int, pods: list[int]) -> bool:
    """Whether these pods (app indices) fit one host of type ``t``, cards included (brute force)."""
    ht = inst.host_types[t]
    if (inst.demand[pods].sum(axis=0) > np.array(ht.capacity) + 1e-9).any() if pods else False:
        return False
    if any(inst.apps[a].gpu_models and ht.gpu_model not in inst.apps[a].gpu_models for a in pods):
        return False
    whole = sum(inst.apps[a].gpu_cards for a in pods if inst.apps[a].gpu_whole)
    left = ht.gpus - whole
    if left < 0:
        return False
    shares = [inst.apps[a].gpu_per_card[0] for a in pods
              if inst.apps[a].gpu_cards and not inst.apps[a].gpu_whole]
    if not shares:
        return True
    for cards in itertools.product(range(left), repeat=len(shares)) if left else []:
        load = np.zeros(left)
        for c, s in zip(cards, shares, strict=True):
            load[c] += s
        if (load <= 1000.0 + 1e-9).all():
            return True
    return False


def _exact(inst: Instance) -> float:
    """The most GPU any placement of the instance's pods allocates (every assignment tried)."""
    pods = [a for a, app in enumerate(inst.apps) for _ in range(app.count)]
    hosts = [t for t, ht in enumerate(inst.host_types) for _ in range(ht.count)]
    gpu = [inst.apps[a].gpu_cards * (1000.0 if inst.apps[a].gpu_whole else
                                     (inst.apps[a].gpu_per_card[0] if inst.apps[a].gpu_cards else 0.0))
           for a in range(inst.n_apps)]
    best = 0.0
    for assign in itertools.product(range(len(hosts) + 1), repeat=len(pods)):
        on: list[list[int]] = [[] for _ in hosts]
        for p, h in zip(pods, assign, strict=True):
            if h < len(hosts):
                on[h].append(p)
        val = sum(gpu[p] for p, h in zip(pods, assign, strict=True) if h < len(hosts))
        if val > best and all(_host_ok(inst, hosts[h], on[h]) for h in range(len(hosts))):
            best = val
    return best


@pytest.mark.parametrize("seed", range(25))
def test_bound_is_at_least_the_exact_optimum_on_tiny_instances(seed: int) -> None:
    inst = _random_instance(np.random.default_rng(seed))
    exact = _exact(inst)
    b = GpuBound(inst).solve(inst.counts)
    assert b >= exact - 1e-9
    arrived = float(sum(a.count * a.gpu_cards * (1000.0 if a.gpu_whole else (a.gpu_per_card or (0.0,))[0])
                        for a in inst.apps))
    assert b <= min(arrived, 1000.0 * float(inst.host_gpus.sum())) * (1 + 1e-6) + 1e-5


def test_bound_is_tight_when_everything_fits_and_uses_the_card_cuts() -> None:
    one = (HostType("h", (8.0, 8.0), 1, gpus=1, gpu_capacity=(1000.0,)),)
    # three 600-milli pods on one card: the GPU total alone allows 1000, the card cut allows one pod
    inst = Instance("c", ("cpu", "mem"), one, (App("s", (1.0, 1.0), 3, gpu_cards=1, gpu_per_card=(600.0,)),),
                    gpu_resources=("gpu_milli",))
    assert GpuBound(inst).solve(inst.counts) == pytest.approx(600.0, abs=1e-3)
    # a whole-card pod and a share pod on one card: one of them (1000) at most
    inst2 = Instance("w", ("cpu", "mem"), one, (App("w", (1.0, 1.0), 1, gpu_cards=1, gpu_whole=True),
                                                App("s", (1.0, 1.0), 1, gpu_cards=1, gpu_per_card=(300.0,))),
                     gpu_resources=("gpu_milli",))
    assert GpuBound(inst2).solve(inst2.counts) == pytest.approx(1000.0, abs=1e-3)
    # CPU binds: two pods of 5 CPU on one 8-CPU host
    inst3 = Instance("p", ("cpu", "mem"), one, (App("s", (5.0, 1.0), 2, gpu_cards=1, gpu_per_card=(300.0,)),),
                     gpu_resources=("gpu_milli",))
    assert GpuBound(inst3).solve(inst3.counts) == pytest.approx(480.0, abs=1e-3)  # 8/5 pods, relaxed
    # a model the cluster lacks: nothing
    inst4 = Instance("m", ("cpu", "mem"), one, (App("s", (1.0, 1.0), 2, gpu_cards=1, gpu_per_card=(300.0,),
                                                    gpu_models=("V100",)),), gpu_resources=("gpu_milli",))
    assert GpuBound(inst4).solve(inst4.counts) == pytest.approx(0.0, abs=1e-3)


@pytest.fixture(scope="module")
def small() -> Instance:
    return load_openb(OPENB_SMALL, nodes="gpu")


def test_bound_below_every_policy_at_every_level(small: Instance) -> None:
    for seed in (0, 1):
        wl = build_workload(small, seed, 1.3)
        lb = GpuBound(wl.instance).levels(wl, 130)
        assert np.isfinite(lb).sum() > 60
        for name in (*DEFAULT_POLICIES, "fgd-plus"):
            run = run_policy(wl, make_policy(name, wl.dist))
            un = run.levels("unallocated", 130)
            ok = np.isfinite(un)
            assert np.array_equal(ok, np.isfinite(lb))  # the same records, so the same levels
            assert (lb[ok] <= un[ok] + 1e-9).all(), name
            # and the per-record bound: the LP at each prefix is above the allocation there
        bound = GpuBound(wl.instance)
        seq = np.asarray([wl.instance.app_index[r.app] for r in wl.instance.requests])
        run = run_policy(wl, make_policy("fgd", wl.dist))
        for p in (10, 30, len(seq)):
            b = bound.solve(np.bincount(seq[:p], minlength=wl.instance.n_apps))
            assert b >= run.allocated[p] - 1e-9


def test_evaluate_bound_matches_the_median_of_seeds(small: Instance) -> None:
    res = evaluate(small, ["fgd", "gpu-bestfit"], [3, 4, 5], 1.3)
    br = evaluate_bound(small, [3, 4, 5], 1.3, method="aggregate")  # the configuration LP: below
    assert br.curves.shape == (3, 131) and len(br.seconds) == 3
    med = br.at([90, 95, 100, 130])
    for r in res:
        pol = r.at([90, 95, 100, 130], 130)
        for k, v in med.items():
            assert (v is None) == (pol[k] is None)
            assert v is None or pol[k] is None or v <= pol[k] + 1e-9
    assert br.at([200])["200"] is None


def test_grid_search_for_fgd_plus_keeps_fgd_as_a_candidate(small: Instance) -> None:
    from policies.swarm.gpu_train import grid_fgd_plus

    w, cost, table = grid_fgd_plus(small, [0, 1], [[0, 0, 0, 0, -0.5], [0, 0, 0, 0, 3.0]], until=1.3)
    assert len(table) == 3 and table[0]["weights"] == [0.0] * 5
    assert cost == min(t["cost"] for t in table) or np.isnan(cost)
    assert w.shape == (5,)
    with pytest.raises(ValueError):
        grid_fgd_plus(small, [0], [[1.0]], until=1.3)
    with pytest.raises(ValueError):
        grid_fgd_plus(small, [0], [], until=1.0)


@pytest.mark.parametrize("seed", range(12))
def test_configuration_bound_between_the_optimum_and_the_aggregated_lp(seed: int) -> None:
    inst = _random_instance(np.random.default_rng(seed))
    exact = _exact(inst)
    gb = GpuBound(inst)
    agg = gb.solve(inst.counts)
    cfg = gb.solve_config(inst.counts)
    assert cfg.bound >= exact - 1e-9
    # the configuration LP implies every aggregated row; its certificate is within the stopping gap
    assert cfg.converged
    assert cfg.bound <= agg + 1e-5 * 1000.0 * float(inst.host_gpus.sum()) + 1e-3


def test_configuration_bound_is_strictly_tighter_when_cpu_binds_per_host() -> None:
    # two hosts of 8 CPU and 2 cards, four whole-card pods of 5 CPU each: the aggregate fits 16/5
    # pods' CPU (3200 milli-GPU), one host really holds one pod (2000)
    two = (HostType("h", (8.0, 8.0), 2, gpus=2, gpu_capacity=(1000.0,)),)
    inst = Instance("c", ("cpu", "mem"), two, (App("w", (5.0, 1.0), 4, gpu_cards=1, gpu_whole=True),),
                    gpu_resources=("gpu_milli",))
    gb = GpuBound(inst)
    assert gb.solve(inst.counts) == pytest.approx(3200.0, abs=1e-3)
    assert gb.solve_config(inst.counts).bound == pytest.approx(2000.0, abs=1e-3)


def test_unknown_bound_method_is_refused() -> None:
    one = (HostType("h", (8.0, 8.0), 1, gpus=1, gpu_capacity=(1000.0,)),)
    inst = Instance("c", ("cpu", "mem"), one, (App("s", (1.0, 1.0), 1, gpu_cards=1, gpu_per_card=(600.0,)),),
                    gpu_resources=("gpu_milli",))
    with pytest.raises(ValueError):
        GpuBound(inst, method="nope")


def test_both_pso_trainers_share_one_loop_and_are_seeded(small: Instance) -> None:
    from policies.swarm.gpu_train import train_fgd_pack, train_fgd_plus

    kw = {"until": 1.3, "level": 90, "particles": 2, "iters": 1, "pso_seed": 3}
    w1, c1, h1 = train_fgd_pack(small, [0], **kw)  # type: ignore[arg-type]
    w2, c2, h2 = train_fgd_pack(small, [0], **kw)  # type: ignore[arg-type]
    assert np.array_equal(w1, w2) and c1 == c2 and h1 == h2 and w1.shape == (2,)
    assert 0.0 <= w1[0] <= 1.0 and 0.8 <= w1[1] <= 1.0
    assert c1 == pytest.approx(min(h["best_cost"] for h in h1), abs=1e-4)
    wp, cp, _ = train_fgd_plus(small, [0], **kw)  # type: ignore[arg-type]
    fgd = run_policy(build_workload(small, 0, 1.3), make_policy("fgd", build_workload(small, 0, 1.3).dist))
    assert cp <= float(fgd.levels("unallocated", 91)[90]) + 1e-9  # particle 0 is FGD
    with pytest.raises(ValueError):
        train_fgd_pack(small, [0], until=1.0, level=100)


def test_configuration_bound_above_every_policy_with_all_pods(small: Instance) -> None:
    wl = build_workload(small, 2, 1.3)
    gb = GpuBound(wl.instance, time_limit=30)
    counts = wl.instance.counts
    cfg = gb.solve_config(counts)
    agg = gb.solve(counts)
    assert cfg.bound <= agg + 1e-5 * cfg.trivial + 1e-3  # never above the aggregated LP
    assert cfg.converged and cfg.bound < agg - 500.0  # and here strictly tighter (57810 vs 58954 milli)
    for name in (*DEFAULT_POLICIES, "fgd-pack"):
        run = run_policy(wl, make_policy(name, wl.dist, wl))
        assert run.allocated[-1] <= cfg.bound + 1e-9, name
