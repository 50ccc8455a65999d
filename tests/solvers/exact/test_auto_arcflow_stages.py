"""auto's arc-flow stages: the LP bound first, the graph and its LP built once; the new hard-1-D kinds."""

from __future__ import annotations

import csv
import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest

import solvers.exact.arcflow as af
from packing.feasibility.checker import check
from packing.generators.hard1d import KINDS, LARGE_CAPACITY, generate_hard1d
from packing.model.instance import Instance
from solvers import AutoSettings, solve
from solvers.base import SolveOptions, cheap_lower_bound


def test_lp_bound_comes_before_the_search() -> None:
    # volume bound 17, arc-flow LP bound 17.5 -> 18 = first fit: the LP alone proves it, before
    # the cover and the tabu search spend their shares aiming at 17
    inst = generate_hard1d(0, kind="uniform", n_items=40)
    assert cheap_lower_bound(inst, "hosts")[0] == 17
    res = solve(inst, "auto", time_limit=30)
    assert res.status == "optimal" and res.objective == 18
    assert res.proofs["bound"] == "arcflow"
    methods = [p.method for p in res.history]
    assert "arcflow" in methods
    assert not {"tabu", "cover"} & set(methods[: methods.index("arcflow")])
    assert check(inst, res.placement, require_all=True) == []  # type: ignore[arg-type]


def test_late_arc_flow_settings_keep_the_old_order() -> None:
    inst = generate_hard1d(0, kind="uniform", n_items=40)
    late = AutoSettings(arcflow_lp_min_left=math.inf, arcflow_early_min_left=math.inf)
    res = solve(inst, "auto", time_limit=30, settings=late)
    assert res.status == "optimal" and res.objective == 18


def test_graph_and_lp_are_built_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = {"graph": 0, "lp": 0}
    real_graph, real_lp = af.build_graph, af.lp_solution

    def graph(inst: Instance) -> af.ArcGraph:
        calls["graph"] += 1
        return real_graph(inst)

    def lp(g: af.ArcGraph, time_limit: float = 60.0) -> tuple[float, np.ndarray] | None:
        calls["lp"] += 1
        return real_lp(g, time_limit)

    monkeypatch.setattr(af, "build_graph", graph)
    monkeypatch.setattr(af, "lp_solution", lp)
    af.forget_graph()
    inst = generate_hard1d(1, kind="uniform", n_items=40)
    first = af.solve_arcflow(inst, SolveOptions(time_limit=30), mip=False)
    second = af.solve_arcflow(inst, SolveOptions(time_limit=30), lower_bound=first.bound)
    assert calls == {"graph": 1, "lp": 1}
    assert second.bound >= first.bound
    other = generate_hard1d(2, kind="uniform", n_items=40)  # other data: a new graph
    af.solve_arcflow(other, SolveOptions(time_limit=30), mip=False)
    assert calls == {"graph": 2, "lp": 2}


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_is_seeded(kind: str) -> None:
    a = generate_hard1d(4, kind=kind)  # type: ignore[arg-type]
    assert a.apps == generate_hard1d(4, kind=kind).apps  # type: ignore[arg-type]
    assert 160 <= a.n_containers <= 204


def test_triplets_fill_every_bin_exactly() -> None:
    inst = generate_hard1d(3, kind="triplets", n_items=31)
    bins = inst.meta["planted"]
    assert len(bins) == 11 == inst.meta["planted_optimum"]  # 31 items -> 11 triplets
    assert all(len(b) == 3 and sum(b) == 1000 and all(250 <= s < 500 for s in b) for b in bins)
    sizes = sorted(s for b in bins for s in b)
    assert sizes == sorted(s for a in inst.apps for s in [int(a.demand[0])] * a.count)


@pytest.mark.parametrize("kind, cap, lo, hi", [("schwerin", 1000, 150, 200),
                                               ("large", LARGE_CAPACITY, 2000, 5000)])
def test_random_kinds_miss_first_fit(kind: str, cap: int, lo: int, hi: int) -> None:
    from solvers.search.greedy import ffd

    inst = generate_hard1d(6, kind=kind)  # type: ignore[arg-type]
    assert inst.host_types[0].capacity == (float(cap),)
    sizes = np.array([a.demand[0] for a in inst.apps])
    assert sizes.min() >= lo and sizes.max() <= hi
    total = sum(a.demand[0] * a.count for a in inst.apps)
    assert ffd(inst, "hosts").objective > math.ceil(total / cap)
    assert inst.meta["planted_optimum"] is None


SMALL = Path(__file__).resolve().parents[2] / "data" / "hard1d_small"


@pytest.mark.parametrize("row", list(csv.DictReader((SMALL / "optimal_values.csv").open())),
                         ids=lambda r: r["instance"])
def test_small_hard_instances_are_proven(row: dict[str, str]) -> None:
    from packing.loaders.vpsolver import load_vbp

    inst = load_vbp(SMALL / row["instance"])
    assert inst.n_containers == int(row["n_items"])
    opt = int(row["opt_bins"])
    assert cheap_lower_bound(inst, "hosts")[0] >= int(row["ceil_volume_lb"])
    assert af.lp_bound(af.build_graph(inst)) == pytest.approx(float(row["lp_bound_arcflow"]), abs=1e-4)
    res = solve(inst, "auto", time_limit=30)
    assert res.status == "optimal" and res.objective == opt and res.bound == opt
    assert check(inst, res.placement, require_all=True) == []  # type: ignore[arg-type]
    gen = generate_hard1d(int(row["seed"]), kind=row["kind"], n_items=int(row["n_items"]))  # type: ignore[arg-type]
    assert sorted((a.demand, a.count) for a in gen.apps) == sorted((a.demand, a.count) for a in inst.apps)


def test_arc_flow_mip_runs_beside_and_is_collected(monkeypatch: pytest.MonkeyPatch) -> None:
    # a perfect packing (LP bound = volume bound, first fit above): without the tabu search and
    # the cover the MIP starts in its own thread (stage 1e); nothing is left running afterwards
    import threading

    calls: list[tuple[str, bool]] = []
    real = af.solve_arcflow

    def spy(instance: Instance, options: SolveOptions, **kw: object) -> object:
        calls.append((threading.current_thread().name, bool(kw.get("mip", True))))
        return real(instance, options, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(af, "solve_arcflow", spy)
    inst = generate_hard1d(0, kind="perfect", n_items=40)
    no_search = AutoSettings(tabu_first=0.0, tabu_share=0.0, cover_share=0.0)  # they may settle it
    res = solve(inst, "auto", time_limit=30, settings=no_search)
    assert res.status == "optimal" and res.objective == inst.meta["planted_optimum"]
    assert ("vbp-auto-arcflow", True) in calls
    assert not [t for t in threading.enumerate() if t.name == "vbp-auto-arcflow"]
    assert check(inst, res.placement, require_all=True) == []  # type: ignore[arg-type]
    calls.clear()
    res = solve(inst, "auto", time_limit=30, settings=dataclasses.replace(no_search, arcflow_beside=False))
    assert res.status == "optimal" and all(name == "MainThread" for name, _ in calls)


def test_stop_ends_the_mip_beside() -> None:
    import threading
    import time

    from solvers import StopFlag

    inst = generate_hard1d(1018, kind="uniform")  # LP bound = volume bound 78, first fit 79
    flag = StopFlag()
    timer = threading.Timer(4.0, flag.set)
    timer.start()
    t0 = time.perf_counter()
    try:
        # (without stage 1f, which may settle it before the stop)
        res = solve(inst, "auto", time_limit=300, stop=flag, settings=AutoSettings(patterns=False))
    finally:
        timer.cancel()
    assert res.interrupted and time.perf_counter() - t0 < 100  # not the 300 s budget
    assert not [t for t in threading.enumerate() if t.name == "vbp-auto-arcflow"]
    assert res.placement is not None and check(inst, res.placement, require_all=True) == []
    assert res.bound <= 78 <= res.objective  # type: ignore[operator]
