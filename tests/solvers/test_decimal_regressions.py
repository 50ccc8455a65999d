"""Two instances that trap unverified claims, a priced infeasible instance, ``vbp solve --json``.

``pulp_false_proof``: CBC claims five hosts optimal where four suffice.
``cpsat_false_infeasible``: exactly scaled coefficients near ``1e10`` make CP-SAT's presolve
declare this feasible instance infeasible (OR-Tools 9.15), so CP-SAT must get smaller (relaxed)
integers. The command line runs them (one as a separate process) and a few random decimal
instances (:mod:`test_decimal_soundness`) against the brute force.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings

from packing.io import save_instance
from packing.model.instance import App, HostType, Instance
from solvers import solve
from tests.packing.brute import brute_force  # noqa: E402
from tests.solvers.test_decimal_soundness import (
    HEALTH,
    METHODS,
    _assert_sound,
    _closed_at_once,
    _optimum,
    decimal_instances,
)

ROOT = Path(__file__).resolve().parents[2]


def pulp_false_proof() -> Instance:
    """CBC claims 5 hosts optimal; 4 suffice (a0+a0 | a0+a1+a2 | a1+a1+a2 | a3+a4)."""
    return Instance("pulp5", ("cpu", "mem"), (HostType("h", (1.0, 1.0), 10),),
                    (App("a0", (0.5, 0.2499999), 3), App("a1", (0.2500002, 0.2500001), 3),
                     App("a2", (0.2499998, 0.2500001), 2, max_per_host=1),
                     App("a3", (0.2500002, 0.2500002), 1),
                     App("a4", (0.3333334333, 0.5000002), 1)))


def cpsat_false_infeasible() -> Instance:
    """Feasible (six small hosts, cost 6); exact coefficients near 1e10 break CP-SAT's presolve."""
    return Instance("cpsat6", ("cpu", "mem"),
                    (HostType("big", (1.0, 1.0), 1, cost=3.0),
                     HostType("small", (0.5, 0.5), 6, cost=1.0)),
                    (App("a0", (0.3333333333, 0.3333331333), 1),
                     App("a1", (0.3333331333, 0.25), 1),
                     App("a2", (0.3333334333, 0.3333331333), 3),
                     App("a3", (0.2500002, 0.3333331333), 1)),
                    exclusions=(("a0", "a1"),))


def test_regression_instances_brute_force() -> None:
    assert brute_force(pulp_false_proof())[0] == 4
    assert brute_force(cpsat_false_infeasible())[1] == 6.0


def test_pulp_does_not_prove_five_hosts() -> None:
    inst = pulp_false_proof()
    res = solve(inst, "pulp", time_limit=10, workers=1)
    assert res.bound <= 4
    assert res.objective == 4 or res.status == "feasible", res
    if res.status == "optimal":
        assert res.objective == 4
    _assert_sound(inst, "pulp", 4.0, res)


@pytest.mark.parametrize("method", METHODS)
def test_feasible_instance_is_never_infeasible(method: str) -> None:
    inst = cpsat_false_infeasible()
    res = solve(inst, method, time_limit=30, workers=1)
    assert res.status == "optimal" and res.objective == 6.0, res
    _assert_sound(inst, method, 6.0, res)


def test_pulp_priced_infeasible_is_a_clean_result() -> None:
    inst = Instance("inf", ("cpu",), (HostType("a", (1.0,), 1, cost=2.0),
                                      HostType("b", (1.0,), 1, cost=3.0)),
                    (App("y", (0.6,), 3),))
    res = solve(inst, "pulp", time_limit=5, workers=1)
    assert res.status == "infeasible" and res.placement is None and res.reason


def _cli(tmp: Path, inst: Instance, method: str, *, subprocess_run: bool = False,
         limit: float = 2.0) -> tuple[int, dict[str, Any]]:
    """``vbp solve FILE --json`` on ``inst``: exit status and the JSON document.

    In-process through click's runner, or (``subprocess_run``) as a separate Python process.
    """
    path = tmp / f"{inst.name}.json"
    save_instance(inst, path)
    args = ["solve", str(path), "--method", method, "--time-limit", str(limit), "--workers", "1",
            "--json", "-q"]
    if subprocess_run:
        out = subprocess.run([sys.executable, "-m", "vbp.cli", *args], capture_output=True,
                             text=True, cwd=ROOT, timeout=120, check=False)
        return out.returncode, json.loads(out.stdout)
    from click.testing import CliRunner

    from vbp.cli import cli

    r = CliRunner().invoke(cli, args)
    return r.exit_code, json.loads(r.stdout)


def test_cli_regression_instances(tmp_path: Path) -> None:
    code, doc = _cli(tmp_path, cpsat_false_infeasible(), "auto", subprocess_run=True,
                     limit=30)
    assert code == 0, doc
    assert doc["status"] == "optimal" and doc["objective"] == 6.0
    code, doc = _cli(tmp_path, pulp_false_proof(), "pulp", limit=30)
    assert code == 0, doc
    assert doc["bound"] <= 4 and (doc["objective"] == 4 or doc["status"] == "feasible")
    inst = Instance("inf", ("cpu",), (HostType("a", (1.0,), 1, cost=2.0),
                                      HostType("b", (1.0,), 1, cost=3.0)),
                    (App("y", (0.6,), 3),))
    code, doc = _cli(tmp_path, inst, "pulp")
    assert code == 3 and doc["status"] == "infeasible"  # exit 3: proven infeasible


@settings(max_examples=10, deadline=None, derandomize=True,
          suppress_health_check=[*HEALTH, HealthCheck.function_scoped_fixture])
@given(decimal_instances(gpus=False))
def test_cli_sound_on_decimal_data(tmp_path: Path, inst: Instance) -> None:
    assume(not _closed_at_once(inst))
    opt = _optimum(inst)
    for method in ("auto", "pulp"):
        code, doc = _cli(tmp_path, inst, method)
        if opt == float("inf"):
            assert (code, doc["status"]) in ((3, "infeasible"), (4, "unknown")), doc
            continue
        assert code == 0 and doc["status"] != "infeasible", doc
        assert doc["bound"] <= opt + 1e-9, (method, doc, opt)
        assert doc["objective"] >= opt - 1e-9, (method, doc, opt)
        if doc["status"] == "optimal":
            assert doc["objective"] == pytest.approx(opt), (method, doc, opt)


def test_cpsat_relaxed_rows_place_only_what_the_checker_accepts() -> None:
    # 0.5000000014 + 0.5 = 1.0000000014 exceeds 1 + 1e-9; CP-SAT's rows for ten decimals are
    # divided by 5 (coefficients at most 2**31) and rounded the relaxed way, where the pair fits:
    # the relaxed model's single host fails the checker, the strict rows place them on two
    import solvers.exact.cpsat as cs
    from packing.feasibility.checker import check

    inst = Instance("relaxed", ("cpu",), (HostType("h", (1.0,), 3),),
                    (App("a", (0.5000000014,), 1), App("b", (0.5,), 1)))
    sc = cs.scale_instance(inst)
    assert not sc.exact and sc.sound
    assert sc.rows.demand[:, 0].sum() <= sc.rows.capacity[0, 0]  # the relaxation takes the pair
    res = solve(inst, "cpsat", time_limit=30, workers=1)
    assert res.placement is not None and check(inst, res.placement, require_all=True) == []
    assert res.objective == 2 and res.bound <= 2
    assert res.status == "feasible" or res.bound == 2


def load_on_the_limit() -> Instance:
    """0.499999951 * 2 + 0.1000001 + 0.8999998 is 1.999999802, the float limit of the big host
    (1.9999998 + 1e-9 * 1.9999998), summed in container order; in another order it lands an ulp
    below. The checker's order decides: three hosts hold everything only without that host."""
    return Instance("limit", ("cpu", "mem"),
                    (HostType("t0", (0.9999999, 0.9999999), 4),
                     HostType("t1", (1.9999998, 1.9999998), 1)),
                    (App("a0", (0.499999951, 0.5), 2), App("a1", (0.19999998, 0.5), 1),
                     App("a2", (0.299999969, 0.5), 1), App("a3", (0.1000001, 0.5), 1),
                     App("a4", (0.8999998, 0.3333333), 1)))


def test_first_fit_placement_passes_the_checker_on_the_limit() -> None:
    from packing.feasibility.checker import check
    from solvers.search.greedy import ffd

    inst = load_on_the_limit()
    g = ffd(inst, "hosts")
    assert g.complete
    assert check(inst, g.placement(inst), require_all=True) == []


@pytest.mark.parametrize("method", METHODS)
def test_load_on_the_limit_every_method(method: str) -> None:
    inst = load_on_the_limit()
    assert brute_force(inst)[0] == 3
    res = solve(inst, method, time_limit=30, workers=1)
    _assert_sound(inst, method, 3.0, res)
    assert res.objective == 3.0 or res.status == "feasible"
