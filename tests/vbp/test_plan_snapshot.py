"""``vbp plan --current SNAPSHOT``: growth and N+1 on a cluster read from Kubernetes; ``--k8s-out``
reads back as the same cluster."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

import vbp
from packing.errors import InputError
from packing.loaders.snapshot import read_snapshot
from vbp.cli import main

DATA = Path(__file__).resolve().parents[1] / "data" / "k8s-snapshots"
HOSTS = ["m5.large=2c8g:price=0.096", "m5.xlarge=4c16g:price=0.192", "g4dn.xlarge=4c16g1gpu:price=0.526"]


def layout(path: Path) -> Counter[tuple[str, str, tuple[str, ...]]]:
    """Per node: its name, type and the (controller) keys of the pods on it, DaemonSets aside."""
    snap = read_snapshot(path)
    on: dict[str, list[str]] = {n.name: [] for n in snap.nodes}
    for p in snap.pods:
        if p.node is not None and not p.daemon:
            on[p.node].append(p.controller or p.key)
    return Counter((n.name, n.type, tuple(sorted(on[n.name]))) for n in snap.nodes)


def test_growth_on_the_running_cluster() -> None:
    r = vbp.plan([], HOSTS, current=str(DATA / "cluster.yaml"), growth=(1, 1.5), time_limit=20)
    one, half = r.scenarios
    assert one.status == "optimal" and one.cost == pytest.approx(1.198)  # six nodes, paid
    c = one.current
    assert c is not None and (c["existing_hosts"], c["added_hosts"], c["new_containers"]) == (6, 0, 1)
    # x1.5: infer needs a second GPU card, so a second g4dn.xlarge; the rest fits on the nodes
    assert half.current["added_hosts"] == 1 and half.cost == pytest.approx(1.198 + 0.526)
    assert half.current["used"] == 0
    # the batch node's labels and taint came with its type: worker and infer only go there
    g4 = next(t for t in half.per_type if t.type == "g4dn.xlarge")
    assert g4.labels.get("workload") == "batch"


def test_k8s_out_reads_back_as_the_same_cluster(tmp_path: Path) -> None:
    out = tmp_path / "nodes.yaml"
    r = vbp.plan([], HOSTS, current=str(DATA / "cluster.yaml"), time_limit=20)
    from packing.plan.k8s_out import write_objects

    write_objects(out, r.scenarios[0].to_kubernetes())
    first = layout(out)
    assert len(first) == 6  # every node, the one running only DaemonSets too
    assert Counter(t for _, t, _ in first) == Counter({"m5.large": 3, "m5.xlarge": 2, "g4dn.xlarge": 1})
    pods = sum(len(p) for _, _, p in first)
    assert pods == 14  # the 13 running pods (DaemonSets aside) and the Pending one, placed
    again = vbp.plan([], HOSTS, current=str(out), time_limit=20).scenarios[0]
    assert again.current["added_hosts"] == 0 and again.current["used"] == 0
    assert again.current["new_containers"] == 0 and again.cost == pytest.approx(1.198)
    out2 = tmp_path / "again.yaml"
    write_objects(out2, again.to_kubernetes())
    assert layout(out2) == first  # the same nodes, and the same pods on each


def test_n_plus_one_and_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    import json

    jsonschema = pytest.importorskip("jsonschema")
    with pytest.raises(SystemExit) as e:
        main(["plan", "--current", str(DATA / "cluster.yaml"), *(f"--hosts={h}" for h in HOSTS),
              "--n-plus-one", "--json", "--time-limit", "20"])
    doc = json.loads(capsys.readouterr().out)
    schema = json.loads((Path(__file__).resolve().parents[2] / "docs/schemas/vbp-plan-3.json").read_text())
    jsonschema.validate(doc, schema)
    (s,) = doc["scenarios"]
    assert e.value.code in (0, None) and s["n_plus_one"]["checked_hosts"] >= 1


def test_a_node_type_that_is_no_host_type() -> None:
    with pytest.raises(InputError, match="Node/ip-10-0-3-31.ec2.internal.*g4dn.xlarge"):
        vbp.plan([], HOSTS[:2], current=str(DATA / "cluster.yaml"), time_limit=5)


def test_demand_or_current_is_needed(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["plan", "--hosts", HOSTS[0]])
    assert e.value.code == 2 and "--current SNAPSHOT" in capsys.readouterr().err


def test_a_type_the_cluster_runs_has_its_nodes_allocatable() -> None:
    """The hosts list says 2c8g with 110 pods; the m5.large nodes allow 1930m, 6.76 GiB, 29 pods
    and ~71 GiB of ephemeral storage: the plan counts on no more (less the DaemonSets' load)."""
    r = vbp.plan([], HOSTS, current=str(DATA / "cluster.yaml"), time_limit=20)
    inst = r.scenarios[0].instance
    assert inst is not None
    cap = dict(zip(inst.resources, next(h for h in inst.host_types if h.name == "m5.large").capacity,
                   strict=True))
    assert cap["cpu"] <= 1.93 and cap["memory"] <= 7259418624 / 2**30 and cap["pods"] <= 29 - 2
    assert 0 < cap["ephemeral-storage"] <= 76224326324 / 2**30
