"""``auto``: stops at first fit when the cheap bound meets it, and names its proofs."""

from __future__ import annotations

from packing.checker import check
from packing.model import App, HostType, Instance
from solvers import solve


def test_ffd_meets_volume_bound() -> None:
    inst = Instance("v", ("cpu",), (HostType("h", (10.0,), 10),), (App("a", (5.0,), 6),))
    res = solve(inst, "auto", time_limit=5)
    assert res.status == "optimal" and res.objective == 3
    assert res.proofs == {"solution": "ffd", "bound": "volume"}
    assert res.method == "auto"


def test_ffd_meets_cap_bound() -> None:
    inst = Instance("c", ("cpu",), (HostType("h", (10.0,), 10),),
                    (App("a", (1.0,), 5, max_per_host=1),))
    res = solve(inst, "auto", time_limit=5)
    assert res.objective == 5 and res.proofs["bound"] == "cap"


def test_needs_search_and_reports_parts() -> None:
    # bin packing where FFD is not optimal: sizes 5 5 4 4 3 3 3 3 (sum 30) in bins of 10:
    # FFD: 5+5 | 4+4 | 3+3+3 | 3 -> 4 bins; optimum 3 (5+5, 4+3+3, 4+3+3)
    sizes = [5.0, 5.0, 4.0, 4.0, 3.0, 3.0, 3.0, 3.0]
    inst = Instance("bp", ("s",), (HostType("b", (10.0,), 8),),
                    tuple(App(f"i{k}", (s,), 1) for k, s in enumerate(sizes)))
    res = solve(inst, "auto", time_limit=10)
    assert check(inst, res.placement, require_all=True) == []  # type: ignore[arg-type]
    assert res.status == "optimal" and res.objective == 3
    assert res.proofs["solution"] != "ffd"
    assert set(res.proofs) == {"solution", "bound"}


def test_deployed_everything_fits() -> None:
    inst = Instance("d", ("cpu",), (HostType("h", (10.0,), 2),), (App("a", (5.0,), 3),))
    res = solve(inst, "auto", objective="deployed", time_limit=5)
    assert res.objective == 3 and res.status == "optimal"
