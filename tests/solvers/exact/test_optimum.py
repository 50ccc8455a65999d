"""solvers.exact.optimum: the optimum a comparison measures against (by hand; refused when infeasible)."""

from __future__ import annotations

from pathlib import Path

import pytest

from packing.errors import InfeasibleError
from packing.feasibility.checker import check
from packing.model.instance import App, HostType, Instance
from solvers.exact.optimum import comparison_optimum

DATA = Path(__file__).resolve().parents[2] / "data" / "multicluster_small"


def test_hosts_optimum_is_hand_computed() -> None:
    # 3 x 3 + 3 x 1 on hosts of 4: every host takes one 3 and one 1, so 3 hosts
    inst = Instance("t", ("cpu",), (HostType("h", (4.0,), 5),), (App("a", (3.0,), 3), App("b", (1.0,), 3)))
    res = comparison_optimum(inst, 10.0)
    assert res.status == "optimal" and res.objective == 3 and res.objective_kind == "hosts"
    assert res.placement is not None and check(inst, res.placement, require_all=True) == []


def test_infeasible_instance_has_no_optimum_to_compare_with() -> None:
    inst = Instance("inf", ("cpu",), (HostType("std", (4.0,), 3),), (App("a", (2.0,), 4, max_per_host=1),))
    with pytest.raises(InfeasibleError, match="no optimum to compare with") as e:
        comparison_optimum(inst, 5.0, name="file.json")
    assert e.value.source == "file.json" and "max_per_host" in e.value.reason


def test_deployed_optimum_is_the_proven_maximum_of_a_multicluster_scenario() -> None:
    from packing.generators.multicluster import generate_multicluster
    from solvers.exact.max_deployed import optimum

    inst = generate_multicluster(DATA, DATA, clusters=3, nodes=2, tasks=30, seed=1)
    opt = optimum(inst, time_limit=20)
    res = comparison_optimum(inst, 20.0, deployed=True)
    assert res.objective == opt.deployed and res.bound == opt.bound and res.objective_kind == "deployed"
    assert res.bound_kind == "upper" and res.status == ("optimal" if opt.proven else "feasible")
    assert res.placement is not None and check(inst, res.placement) == []
    assert res.hosts == len({int(h) for h in res.placement.host_array(inst) if h >= 0})


def test_deployed_optimum_without_gpu_apps() -> None:
    # 5 containers of 2 cores on 2 hosts of 4 cores: at most 4 deployed, and 4 are deployable
    from solvers.exact.max_deployed import optimum

    inst = Instance("cpu-only", ("cpu",), (HostType("h", (4.0,), 2),), (App("a", (2.0,), 5),))
    opt = optimum(inst, time_limit=10)
    assert opt.deployed == 4 and opt.bound == 4 and opt.proven


def test_a_multicluster_scenario_is_compared_on_tasks_deployed_by_default() -> None:
    # compare and sweep --optimum both call comparison_optimum without `deployed`: the scenario
    # decides, so both measure against the same maximum
    from packing.generators.multicluster import generate_multicluster, is_multicluster

    inst = generate_multicluster(DATA, DATA, clusters=3, nodes=2, tasks=30, seed=1)
    assert is_multicluster(inst)
    res = comparison_optimum(inst, 20.0)
    assert res.objective_kind == "deployed" and res.bound_kind == "upper"
    assert res.objective == comparison_optimum(inst, 20.0, deployed=True).objective
    plain = Instance("t", ("cpu",), (HostType("h", (4.0,), 5),), (App("a", (3.0,), 3),))
    assert not is_multicluster(plain) and comparison_optimum(plain, 10.0).objective_kind == "hosts"
