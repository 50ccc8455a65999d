"""policies.dag on vbp.jobfusion: bounds below every policy, carving checked, seeded determinism."""

from __future__ import annotations

import numpy as np
import pytest

from packing.dag.carving import host_costs, parse_hosts
from packing.dag.engine import Overheads
from packing.dag.generator import generate_dag_workload
from packing.dag.partition import partition
from packing.feasibility.checker import check
from policies.dag import DEFAULT_DAG_POLICIES, make_dag_policy
from solvers.dag.carving import carve_cluster, carve_sweep
from vbp.jobfusion import compare_dag

HOSTS = parse_hosts("32c64g:2,92c288g:1")


def test_bounds_below_every_policy_and_seeded() -> None:
    w = generate_dag_workload(25, seed=7, mean_interarrival=5.0)
    runs = [compare_dag(w, [make_dag_policy(n, 1) for n in DEFAULT_DAG_POLICIES], q=3, hosts=HOSTS, seed=1)
            for _ in range(2)]
    for r in runs:  # wall time is the one thing that may differ
        for p in r["policies"]:
            p.pop("decision_ms")
    assert runs[0] == runs[1]
    b = runs[0]["bounds"]
    from vbp.jobfusion import dag_bounds

    per_job = dag_bounds(w, np.array([1e9, 1e9]), Overheads())["jct"]
    for p in runs[0]["policies"]:
        assert p["mean_jct"] >= b["critical_path_mean_jct"] - 1e-9
        assert p["makespan"] >= b["makespan"] - 1e-9
        assert np.all(np.array(p["jct"]) >= per_job - 1e-9)
        assert 0 <= p["mean_utilisation"] <= 1 and 0 <= p["idle_share"] <= 1
    assert {p["partition"] for p in runs[0]["policies"]} == {"constrained", "single"}


def test_carving_passes_the_checker_with_online() -> None:
    w = generate_dag_workload(20, seed=2)
    online = np.array([[4.0, 8.0], [8.0, 16.0], [4.0, 16.0]])
    for method, q in (("constrained", 4), ("single", 1), ("plain", 3)):
        c = carve_cluster(partition(w, q, method), HOSTS, online=online, online_share=0.3, surges=3, seed=0)
        assert not check(c.instance, c.placement, require_all=True)
        assert 0.25 <= c.online_share <= 0.45
        assert len(c.cluster.surges) == 3 and len(c.cluster.slot_type) > 0


def test_sweep_bound_below_idle_share() -> None:
    w = generate_dag_workload(20, seed=4)
    rows = carve_sweep(w, [1, 2, 3], ["constrained", "single"], containers=60, time_limit=2.0)
    assert len(rows) == 4
    for r in rows:
        assert r.idle_share is not None and r.idle_bound <= r.idle_share + 1e-9
        assert r.cost is not None and r.cost_bound <= r.cost + 1e-9


def test_host_costs_are_exact_whole_numbers() -> None:
    # 32c64g in 92c288g units: (32/92 + 64/288) / 2 = (8/23 + 2/9) / 2 = 59/207
    costs, scale = host_costs([(32.0, 64.0), (92.0, 288.0)])
    assert (costs, scale) == ([59, 207], 207)
    costs, scale = host_costs([(46.0, 144.0)])
    assert (costs, scale) == ([1], 2)


def test_carving_with_exact_costs_is_proven_optimal_by_hand() -> None:
    # 3 containers of 30c60g: a 32c64g host holds one (cost 59/207), a 92c288g host three (cost 1):
    # 3 small hosts cost 177/207 = 0.855 < 1 large host; 2 small + ... any mix with the large one >= 1.
    from packing.model.instance import App, HostType, Instance
    from solvers import solve

    costs, scale = host_costs([(32.0, 64.0), (92.0, 288.0)])
    inst = Instance("carve", ("cpu", "mem"), (HostType("small", (32.0, 64.0), 5, cost=float(costs[0])),
                                              HostType("large", (92.0, 288.0), 2, cost=float(costs[1]))),
                    (App("t", (30.0, 60.0), 3),))
    r = solve(inst, time_limit=20.0, objective="cost", workers=1)
    assert r.status == "optimal"
    assert abs(r.objective / scale - 3 * 59 / 207) < 1e-12 and r.bound == r.objective


def test_unknown_policy() -> None:
    with pytest.raises(ValueError, match="unknown DAG policy"):
        make_dag_policy("nope")
