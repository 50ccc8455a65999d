"""A DaemonSet is taken off the capacity of exactly the host types it runs on (labels and taints).

Fixture: tests/data/k8s/rules/taints.yaml (its header names the DaemonSets: gpu-plugin 50m/20Mi on
accelerator=nvidia hosts, tolerating the dedicated taint; logger 100m/100Mi, no toleration).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

import vbp

RULES = Path(__file__).resolve().parents[1] / "data" / "k8s" / "rules"


@pytest.fixture
def hosts(tmp_path: Path) -> str:
    f = tmp_path / "hosts.yaml"
    f.write_text(yaml.safe_dump([
        {"name": "gpu", "cpu": "4", "memory": "16Gi", "gpu": 1, "labels": {"accelerator": "nvidia"},
         "taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]},
        {"name": "plain", "cpu": "2", "memory": "4Gi"}]))
    return str(f)


def test_each_host_type_loses_the_daemons_it_runs(hosts: str) -> None:
    from packing.loaders.deployments import load_demand
    from packing.loaders.host_types import load_hosts
    from packing.plan.model import Adjustment

    dem = load_demand(str(RULES / "taints.yaml"))
    offers = {o.name: o for o in load_hosts([hosts])}
    mib = 2**20
    assert dem.daemon_load(offers["gpu"]) == (50, 20 * mib, 0)  # gpu-plugin only
    assert dem.daemon_load(offers["plain"]) == (100, 100 * mib, 0)  # logger only
    planned = Adjustment(reserve=(100, 0, 0)).planned(offers["gpu"], (1, 1, 1),
                                                     dem.daemon_load(offers["gpu"]))
    assert planned[:2] == (3850, 16 * 1024 * mib - 20 * mib)
    plan = vbp.plan(str(RULES / "taints.yaml"), hosts, reserve="100m", time_limit=20)
    s = plan.scenarios[0]
    cap = {t.name: t.capacity for t in s.instance.host_types}
    assert cap["gpu"][0] <= 3.85 and cap["plain"][0] <= 1.8  # rounded down to the demands' step
    assert "DaemonSets each host type runs" in plan.planned_against
