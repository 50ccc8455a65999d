"""``vbp plan`` outputs: utilisation of the full and of the planned capacity, the bound names of
``vbp-plan/3``, and a node selection no host type matches is bad input (exit 2).

Source: the demands and host types are written here; every expected number is worked out by hand
in the comments.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from packing.errors import InputError
from packing.model.instance import App
from packing.plan.model import Demand, HostOffer
from tests.vbp.cli_run import run
from vbp import plan

GI = 2**30
RULES = Path(__file__).resolve().parents[1] / "data" / "k8s" / "rules"
SCHEMA = Path(__file__).resolve().parents[2] / "docs" / "schemas" / "vbp-plan-3.json"


def test_utilisation_of_full_and_planned_capacity(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    # 4 x (1 core, 1Gi) on 4c8g hosts with 50% headroom: planned 2 cores, 4Gi per host, so two
    # containers per host, 2 hosts. CPU: 4 / (2 x 4) = 50% of the hosts, 4 / (2 x 2) = 100% of
    # the planned capacity; memory: 4 / 16 = 25% of the hosts, 4 / 8 = 50% of the planned.
    d = tmp_path / "d.csv"
    d.write_text("name,replicas,cpu,memory\nweb,4,1,1Gi\n")
    (s,) = plan(d, ["std=4c8g"], headroom="50%", time_limit=10).scenarios
    (t,) = s.per_type
    assert (s.status, s.hosts, t.hosts) == ("optimal", 2, 2)
    # pods: 4 pods on 2 hosts of 110 slots (the headroom is CPU and memory only)
    assert t.utilisation == {"cpu": 0.5, "memory": 0.25, "pods": 4 / 220}
    assert t.utilisation_of_planned == {"cpu": 1.0, "memory": 0.5, "pods": 4 / 220}
    assert t.capacity == {"cpu": 2.0, "memory": 4.0, "pods": 110}
    assert t.host_capacity == {"cpu": 4.0, "memory": 8.0, "pods": 110}
    assert t.bottleneck == "cpu"
    code, out, _ = run(["plan", str(d), "--hosts", "std=4c8g", "--headroom", "50%",
                        "--time-limit", "10"], capsys)
    assert code == 0
    head = next(ln for ln in out.splitlines() if ln.startswith("type"))
    row = next(ln for ln in out.splitlines() if ln.startswith("std"))
    cells = dict(zip([h.replace(" ", "_") for h in _columns(head)], row.split(), strict=False))
    assert (cells["use_cpu"], cells["use_memory"]) == ("50.0%", "25.0%")
    assert (cells["of_planned_cpu"], cells["of_planned_memory"]) == ("100.0%", "50.0%")


def test_full_host_capacity_is_the_real_capacity(tmp_path: Path) -> None:
    # 7 x (1 core, 1Gi) on hosts of 3.5 cores and 4Gi: three per host by CPU, so 3 hosts. The
    # demands' CPU step is 1 core, so the solvers see 3 cores per host (no packing lost), but the
    # plan is measured against the hosts' 3.5 cores: CPU 7 / 10.5 of the full capacity and of the
    # planned one alike; memory 7 / 12. Stranded: a host with 3 replicas keeps 0.5 core and 1Gi
    # that no replica can use; the third host can still take one (nothing stranded there).
    d = tmp_path / "d.csv"
    d.write_text("name,replicas,cpu,memory\nweb,7,1,1Gi\n")
    res = plan(d, ["h=3.5c4g"], time_limit=10)
    (s,) = res.scenarios
    (t,) = s.per_type
    assert res.planned_against == "full host capacity"
    assert (s.status, s.hosts) == ("optimal", 3)
    assert t.capacity == t.host_capacity == {"cpu": 3.5, "memory": 4.0, "pods": 110}
    assert t.utilisation == t.utilisation_of_planned == pytest.approx(
        {"cpu": 7 / 10.5, "memory": 7 / 12, "pods": 7 / 330})
    placed = sorted(s.placement.host_array(s.instance).tolist()) if s.placement is not None else []
    per_host = sorted(placed.count(h) for h in set(placed))
    stranded_cpu = sum(3.5 - k for k in per_host if 3.5 - k < 1 or 4 - k < 1)
    stranded_mem = sum(4 - k for k in per_host if 3.5 - k < 1 or 4 - k < 1)
    stranded_pods = sum(110 - k for k in per_host if 3.5 - k < 1 or 4 - k < 1)
    assert t.stranded == pytest.approx({"cpu": stranded_cpu, "memory": stranded_mem,
                                        "pods": stranded_pods})
    assert per_host in ([1, 3, 3], [2, 2, 3])  # either way some capacity is stranded
    assert t.stranded["cpu"] > 0
    # with 10% headroom: 3.15 cores planned (the solvers see 3), 7 / 9.45 of it
    (h,) = plan(d, ["h=3.5c4g"], headroom="10%", time_limit=10).scenarios
    assert h.per_type[0].capacity == pytest.approx({"cpu": 3.15, "memory": 3.6, "pods": 110})
    assert h.per_type[0].utilisation_of_planned["cpu"] == pytest.approx(7 / 9.45)


def _columns(head: str) -> list[str]:
    """Column names of the per-type table (names of two words: ``use cpu``, ``of planned cpu``)."""
    words, out = head.split(), []
    i = 0
    while i < len(words):
        w = words[i]
        if w in ("use", "stranded"):
            out.append(f"{w} {words[i + 1]}")
            i += 2
        elif w == "of":
            out.append(f"of planned {words[i + 2]}")
            i += 3
        else:
            out.append(w)
            i += 1
    return out


def test_json_bound_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    # 5 x 1 core on 2-core hosts: 3 hosts, proven
    d = tmp_path / "d.csv"
    d.write_text("name,replicas,cpu,memory\nweb,5,1,1Gi\n")
    code, out, _ = run(["plan", str(d), "--hosts", "2c4g", "--json", "--time-limit", "10"], capsys)
    doc = json.loads(out)
    jsonschema.validate(doc, json.loads(SCHEMA.read_text()))
    (s,) = doc["scenarios"]
    assert code == 0 and doc["format"] == "vbp-plan/3"
    assert (s["hosts"], s["bound"], s["bound_kind"]) == (3, 3, "lower") and "lower_bound" not in s
    assert s["per_type"][0]["type"] == "2c4g"  # an unnamed inline type is named by its shape
    res = plan(d, ["2c4g"], time_limit=10).scenarios[0]
    assert res.bound == res.lower_bound == 3 and res.bound_kind == "lower"


def test_a_node_selection_no_host_type_matches_is_bad_input(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # rules/selectors.yaml: ssd-app needs disk=ssd; new-gen needs gen>3 and zone in [a, b], or a
    # pool label. Host types in zone a (the zone column: topology.kubernetes.io/zone) admit neither.
    hosts = tmp_path / "hosts.csv"
    hosts.write_text("name,cpu,memory,zone\nstd,16,64Gi,a\n")
    code, out, err = run(["plan", str(RULES / "selectors.yaml"), "--hosts", str(hosts),
                          "--time-limit", "5"], capsys)
    assert code == 2 and out == ""
    lines = err.splitlines()
    assert len(lines) == 2
    assert "ssd-app: its node selection matches no host type (std: node selector disk=ssd not " \
           "matched); host type labels: std {topology.kubernetes.io/zone=a}" in lines[0]
    assert "new-gen" in lines[1] and "no required node affinity term matches" in lines[1]
    # the same in Python, and an app that no host type is large enough for stays infeasible (3)
    ssd = App("ssd", (1.0, 1.0, 0.0), 1, node_selector=(("disk", "ssd"),))
    with pytest.raises(InputError, match="ssd: its node selection matches no host type"):
        plan(Demand((ssd,)), [HostOffer("std", 4000, 8 * GI, labels=(("disk", "hdd"),))])
    ok = plan(Demand((ssd,)), [HostOffer("std", 4000, 8 * GI, labels=(("disk", "ssd"),))],
              time_limit=10).scenarios[0]
    assert (ok.status, ok.hosts) == ("optimal", 1)
