"""Stage 1g of ``auto``: column generation's bound first where few containers share a host.

On such instances the cheap bounds are weak (two containers of more than half a host in one
resource never share it, whatever the other resource says) and the Gilmore-Gomory bound is
strong, so column generation runs before the exact cover and the tabu search; where many small
containers share a host it does not.
"""

from __future__ import annotations

import numpy as np
import pytest

import solvers.exact.colgen as colgen
import solvers.exact.cover as cover
from packing.feasibility.checker import check
from packing.model.instance import App, HostType, Instance
from solvers import AutoSettings, SolveOptions, solve
from tests.solvers.warm import warm_search


def _instance(n: int, low: int, high: int, seed: int) -> Instance:
    rng = np.random.default_rng(seed)
    sizes = rng.integers(low, high + 1, size=(n, 2))
    return Instance(f"two-d-{seed}", ("a", "b"), (HostType("h", (100.0, 100.0), n),),
                    tuple(App(f"i{k}", (float(x), float(y)), 1) for k, (x, y) in enumerate(sizes)))


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    order: list[str] = []
    real_cg, real_cover = colgen.solve_colgen, cover.solve_cover

    def cg(instance: Instance, options: SolveOptions) -> object:
        order.append("colgen")
        return real_cg(instance, options)

    def cov(*a: object, **k: object) -> object:
        order.append("cover")
        return real_cover(*a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(colgen, "solve_colgen", cg)
    monkeypatch.setattr(cover, "solve_cover", cov)
    return order


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_large_containers_get_the_lp_bound_first(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    warm_search()
    inst = _instance(24, 30, 70, seed)  # about two per host: the volume bound is far too low
    order = _spy(monkeypatch)
    res = solve(inst, time_limit=60, workers=1)
    assert res.placement is not None and not check(inst, res.placement, require_all=True)
    assert order and order[0] == "colgen"
    assert res.status == "optimal"
    # an independent bound: containers above half a host in one resource never share a host
    big = max(sum(1 for a in inst.apps if a.demand[r] > 50) for r in range(2))
    assert res.objective is not None and res.objective >= big
    off = solve(inst, time_limit=60, workers=1, settings=AutoSettings(colgen_early_items=0.0))
    assert off.objective == res.objective  # the same optimum either way


def test_small_containers_keep_the_cover_first(monkeypatch: pytest.MonkeyPatch) -> None:
    warm_search()
    inst = _instance(40, 5, 35, 4)  # about five per host
    order = _spy(monkeypatch)
    res = solve(inst, time_limit=60, workers=1)
    assert res.placement is not None and not check(inst, res.placement, require_all=True)
    assert "colgen" not in order[:1]
