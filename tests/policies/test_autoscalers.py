"""The autoscaler baselines: their rules by hand, their answers checked, never below the optimum."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from packing.cluster.problem import build_problem
from packing.loaders.host_types import load_hosts
from packing.loaders.snapshot import read_snapshot
from policies.autoscalers import cluster_autoscaler, karpenter, utilisation
from solvers.consolidate.solve import consolidate, verify
from tests.solvers.consolidate.cluster_cases import offers, small_cluster, snapshot_of

DATA = Path(__file__).resolve().parents[1] / "data" / "k8s-snapshots"
FIXTURE_OFFERS = ["m5.large=2c8g:price=0.096", "m5.xlarge=4c16g:price=0.192",
                  "g4dn.xlarge=4c16g1gpu:price=0.526"]


def test_cluster_autoscaler_threshold_by_hand() -> None:
    P = build_problem(read_snapshot(DATA / "cluster.yaml"), load_hosts(FIXTURE_OFFERS))
    util = dict(zip(P.host_names, utilisation(P, P.orig).tolist(), strict=True))
    # ip-10-0-2-21: (100 + 25 + 500 + 100) m of 1930m = 0.376 (cpu above memory)
    assert util["ip-10-0-2-21.ec2.internal"] == pytest.approx(725 / 1930)
    at_half = cluster_autoscaler(P)  # 0.5: the two small nodes and the empty one go
    assert (at_half.cost_after, at_half.moves) == (pytest.approx(0.91), 3)
    below = cluster_autoscaler(P, threshold=0.3)  # ip-10-0-2-21 is above 0.3: it stays
    assert "ip-10-0-2-21.ec2.internal" not in below.removed
    assert (below.cost_after, below.moves) == (pytest.approx(1.006), 1)
    assert cluster_autoscaler(P, max_moves=0).cost_after == pytest.approx(1.102)


@pytest.mark.parametrize("seed", range(5))
def test_never_below_the_optimum(seed: int, tmp_path: Path) -> None:
    for replace in (False, True):
        P = build_problem(snapshot_of(small_cluster(seed, nodes=8, pods=44), tmp_path), offers(),
                          replace=replace)
        for budget in (2, None):
            best = consolidate(P, budget, time_limit=20, seed=seed)
            for o in (cluster_autoscaler(P, budget), karpenter(P, budget)):
                assert not verify(P, o.x, budget), o.name
                assert o.cost_after >= best.bound - 1e-9
                if best.status == "optimal":
                    assert o.cost_after >= best.cost_after - 1e-9
                if not replace:
                    assert not o.added


def test_karpenter_replaces_with_a_cheaper_node(tmp_path: Path) -> None:
    P = build_problem(snapshot_of(small_cluster(3, nodes=4, pods=20), tmp_path), offers(), replace=True)
    k = karpenter(P)
    assert k.added and k.cost_after < P.cost_before
    assert all(P.price[P.host_names.index(n)] < max(P.price[np.array(P.existing)]) for n, _ in k.added)


def test_provision_first_fit_decreasing_onto_the_cheapest_type(tmp_path: Path) -> None:
    import vbp
    from packing.model.instance import App, HostType, Instance
    from policies.autoscalers import provision

    # three 1.5-core pods: each opens a 2-core host (the cheapest that fits), 3.0 in all; the
    # optimum puts two on a 4-core host and one on a 2-core host, 2.5
    inst = Instance("p", ("cpu",), (HostType("small", (2.0,), 3, 1.0), HostType("big", (4.0,), 2, 1.5)),
                    (App("a", (1.5,), 3),))
    p = provision(inst)
    used = {h for h in p.hosts["a"]}
    assert sorted(inst.host_type_of[h] for h in used) == [0, 0, 0]
    demand = tmp_path / "d.csv"
    demand.write_text("name,replicas,cpu,memory\na,3,1500m,1Gi\n")
    s = vbp.plan(str(demand), ["small=2c8g:price=1", "big=4c8g:price=1.5"], time_limit=10).scenarios[0]
    assert s.cost == pytest.approx(2.5) and s.autoscaler == {"hosts": 3, "cost": 3.0}
    assert s.to_dict()["autoscaler"] == {"hosts": 3, "cost": 3.0}
