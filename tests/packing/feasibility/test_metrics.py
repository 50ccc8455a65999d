"""Metrics: the Sigma article's numbers, EADE-DDPG definitions by hand, GPU resources."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from packing.feasibility.metrics import compute_metrics, host_utilisation
from packing.model.instance import UNPLACED, App, HostType, Instance, Placement


def sigma_like(n_hosts_used: int) -> tuple[Instance, Placement]:
    inst = Instance("s", ("cpu", "mem"), (HostType("h", (96.0, 512.0), 20),),
                    (App("a", (4.0, 8.0), 340),))
    per = -(-340 // n_hosts_used)
    return inst, Placement({"a": tuple(min(i // per, n_hosts_used - 1) for i in range(340))})


def test_sigma_article_allocation_rates() -> None:
    m = compute_metrics(*sigma_like(15))
    assert m.hosts == 15 and m.deployed == 340 and m.unplaced == 0
    assert m.allocation_by_resource["cpu"] == pytest.approx(1360 / 1440)  # 94.44%
    assert round(100 * m.allocation, 2) == 94.44
    m20 = compute_metrics(*sigma_like(20))
    assert round(100 * m20.allocation_by_resource["cpu"], 2) == 70.83
    # allocation over all 20 hosts does not depend on how many are used
    fleet = m.fleet_allocation_by_resource["cpu"]
    assert fleet == pytest.approx(m20.fleet_allocation_by_resource["cpu"]) == pytest.approx(1360 / 1920)
    assert m.allocation_resource_mean == pytest.approx((1360 / 1440 + 2720 / 7680) / 2)


def test_eade_ddpg_cluster_metrics_by_hand() -> None:
    inst = Instance("c", ("cpu", "mem"), (
        HostType("x", (10.0, 10.0), 2, cost=2.0, cluster="east"),
        HostType("y", (10.0, 20.0), 1, cluster="west")),
        (App("a", (5.0, 2.0), 3), App("b", (1.0, 10.0), 1)))
    p = Placement({"a": (0, 0, 2), "b": (UNPLACED,)})
    m = compute_metrics(inst, p)
    u_east = ((10 / 20) + (4 / 20)) / 2  # 0.35
    u_west = ((5 / 10) + (2 / 20)) / 2  # 0.3
    assert m.cluster_utilisation == pytest.approx({"east": u_east, "west": u_west})
    f = ((1 - 10 / 20) + (1 - 4 / 20) + (1 - 5 / 10) + (1 - 2 / 20)) / 2
    assert m.fragmentation == pytest.approx(f)
    mean = (u_east + u_west) / 2
    assert m.load_variance == pytest.approx(((u_east - mean) ** 2 + (u_west - mean) ** 2) / 2)
    assert (m.hosts, m.cost, m.deployed, m.unplaced) == (2, 3.0, 3, 1)
    # explicit clusters: one cluster -> no variance
    one = compute_metrics(inst, p, clusters=[0, 0, 0])
    assert one.load_variance == 0.0 and list(one.cluster_utilisation) == ["0"]
    with pytest.raises(ValueError):
        compute_metrics(inst, p, clusters=[0, 0])
    d = m.to_dict()
    assert d["hosts"] == 2 and d["allocation_by_resource"]["mem"] == pytest.approx(6 / 30)
    assert (d["cost"], d["deployed"], d["allocation"]) == (3.0, 3, m.allocation)
    assert json.loads(json.dumps(d)) == d


def test_gpu_resources_are_metrics_resources() -> None:
    inst = Instance("g", ("cpu",), (HostType("g", (10.0,), 2, gpus=2, gpu_capacity=(1000.0,)),),
                    (App("w", (1.0,), 1, gpu_cards=1, gpu_whole=True),
                     App("s", (1.0,), 1, gpu_cards=1, gpu_per_card=(250.0,))),
                    gpu_resources=("gpu_milli",))
    p = Placement({"w": (0,), "s": (0,)}, {"w": ((0,),), "s": ((1,),)})
    m = compute_metrics(inst, p)
    assert m.allocation_by_resource["gpu_milli"] == pytest.approx(1250 / 2000)
    assert m.fleet_allocation_by_resource["gpu_milli"] == pytest.approx(1250 / 4000)


def test_host_utilisation_shape_and_values() -> None:
    inst, p = sigma_like(15)
    u = host_utilisation(inst, p)
    assert u.shape == (20, 2)
    assert u[0, 0] == pytest.approx(23 * 4 / 96) and np.all(u[15:] == 0)


def test_empty_placement() -> None:
    inst, _ = sigma_like(15)
    m = compute_metrics(inst, Placement.empty(inst))
    assert (m.hosts, m.deployed, m.allocation) == (0, 0, 0.0)


def test_old_names_are_deprecated_aliases() -> None:
    m = compute_metrics(*sigma_like(15))
    old_new = {"hosts_used": "hosts", "total_cost": "cost",
               "sigma_allocation": "allocation_by_resource", "sigma_allocation_bottleneck": "allocation",
               "sigma_allocation_mean": "allocation_resource_mean"}
    for old, new in old_new.items():
        with pytest.warns(DeprecationWarning, match=f"Metrics.{old} is deprecated; read Metrics.{new}"):
            assert getattr(m, old) == getattr(m, new)
    assert set(m.to_dict()) == {f.name for f in dataclasses.fields(m)}  # keys are the attribute names


def test_containers_on_unknown_hosts_are_not_deployed() -> None:
    inst, _ = sigma_like(15)
    inst = inst.replace(apps=(App("a", (4.0, 8.0), 3),))
    m = compute_metrics(inst, Placement({"a": (0, 99, UNPLACED)}))
    assert (m.hosts, m.deployed, m.unplaced) == (1, 1, 2)


def test_a_resource_a_cluster_lacks_is_left_out_of_its_sums() -> None:
    # east has a GPU card, west none: west's U and F count the CPU only
    inst = Instance("z", ("cpu",), (
        HostType("g", (10.0,), 1, cluster="east", gpus=1, gpu_capacity=(1000.0,)),
        HostType("c", (10.0,), 1, cluster="west")),
        (App("a", (4.0,), 2),), gpu_resources=("gpu_milli",))
    m = compute_metrics(inst, Placement({"a": (0, 1)}))
    assert m.cluster_utilisation == pytest.approx({"east": (0.4 + 0.0) / 2, "west": 0.4})
    assert m.fragmentation == pytest.approx(((0.6 + 1.0) + 0.6) / 2)
