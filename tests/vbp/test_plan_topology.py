"""``vbp plan`` on manifests with zone rules and a host list with a zone column.

Source: tests/data/k8s/rules/spread-zones.yaml (rules in its comments) and
tests/data/k8s/rules/zones.csv (three types of 8 cores / 16 GiB, zones eu-1a, eu-1b, eu-1c; the
third without ``disk: ssd``).

Hand-computed optimum: 4 hosts. ``quorum`` (3 x 3 cores) takes one host in each zone (zone cap 1);
``web`` (5 x 2 cores, ``disk: ssd``, zone spread 1 over eu-1a and eu-1b) splits 3/2 over the two
ssd zones; a host running a quorum pod has room for 2 web pods (3 + 4 <= 8), so with one host per
zone web has room for 4 of its 5 pods: 3 hosts are not enough, and 4 suffice (23 cores in all).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from packing.feasibility.checker import check
from packing.io import load_placement
from packing.model.topology import ZONE, domains
from vbp import plan
from vbp.cli import main

RULES = Path(__file__).resolve().parents[1] / "data" / "k8s" / "rules"


def test_plan_with_zone_rules_is_proven_optimal() -> None:
    res = plan(RULES / "spread-zones.yaml", [str(RULES / "zones.csv")], time_limit=30)
    (s,) = res.scenarios
    assert s.status == "optimal" and s.hosts == 4 and s.bound == 4
    inst = s.instance
    assert inst is not None and inst.has_topology
    labels = {t.name: dict(t.labels) for t in inst.host_types}
    assert {k: labels["ssd-a"][k] for k in (ZONE, "disk")} == {ZONE: "eu-1a", "disk": "ssd"}


def test_plan_zone_counts_by_hand(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "p.json"
    with pytest.raises(SystemExit) as e:
        main(["plan", str(RULES / "spread-zones.yaml"), "--hosts", str(RULES / "zones.csv"),
              "--time-limit", "30", "--out", str(out)])
    assert e.value.code in (0, None)
    assert "optimal" in capsys.readouterr().out
    res = plan(RULES / "spread-zones.yaml", [str(RULES / "zones.csv")], time_limit=30)
    inst = res.scenarios[0].instance
    p = load_placement(out, inst)  # one scenario: its placement is written to --out
    assert check(inst, p, require_all=True) == []
    zone = domains(inst, ZONE)
    per_zone = {a: np.bincount(zone.of_host[list(p.hosts[a])], minlength=3).tolist()
                for a in ("web", "quorum")}
    assert per_zone["quorum"] == [1, 1, 1]
    assert sorted(per_zone["web"][:2]) == [2, 3] and per_zone["web"][2] == 0


def test_every_rule_at_once_is_proven_optimal(tmp_path: Path) -> None:
    """rules/combined.yaml: spread-zones.yaml plus an init container on web and a DaemonSet.

    Hand-computed optimum: 5 hosts. Each host keeps 7 cores (8 less the DaemonSet). quorum takes one
    host per zone (3 cores each); web now asks 3 cores (its init container), ssd zones only, split
    3/2 over eu-1a and eu-1b. A quorum host has room for one web pod (3 + 3 <= 7), any other host for
    two; with 4 hosts (the three quorum hosts and one more) web gets at most 1 + 1 + 2 = 4 of its 5
    pods, so 4 hosts are not enough (though 4 x 7 = 28 cores = the demand); with a fifth host
    (eu-1a: 1 + 2 web, eu-1b: 1 + 1) everything fits, api spread over the zones.
    """
    res = plan(RULES / "combined.yaml", [str(RULES / "zones.csv")], time_limit=30)
    (s,) = res.scenarios
    assert s.status == "optimal" and s.hosts == 5 and s.bound == 5
    inst = s.instance
    assert inst is not None and s.placement is not None
    assert check(inst, s.placement, require_all=True) == []
    assert {t.name: t.capacity[0] for t in inst.host_types} == {"ssd-a": 7.0, "ssd-b": 7.0, "hdd-c": 7.0}
    web = next(a for a in inst.apps if a.name == "web")
    assert web.demand[0] == 3.0  # the init container's 3 cores, not the container's 2
