"""The snapshot reader: every form kubectl prints gives the same cluster, with the facts read by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from packing.errors import InputError
from packing.loaders import detect
from packing.loaders.snapshot import looks_like_snapshot, read_snapshot
from packing.model.selection import Taint

DATA = Path(__file__).resolve().parents[2] / "data" / "k8s-snapshots"
FORMS = ["cluster.yaml", "cluster.json", "multi.yaml", "folder"]
N1, N4, N5 = "ip-10-0-1-11.ec2.internal", "ip-10-0-2-22.ec2.internal", "ip-10-0-3-31.ec2.internal"


def strip(snap):  # the content, without the files it came from
    nodes = [(n.name, n.type, dict(n.allocatable), n.labels, n.taints, n.unschedulable, n.ready)
             for n in snap.nodes]
    pods = sorted((p.key, p.node, p.phase, p.controller, p.daemon, dict(p.request), p.pinned)
                  for p in snap.pods)
    return nodes, pods, [(b.key, b.selector, b.min_available, b.max_unavailable) for b in snap.budgets]


@pytest.mark.parametrize("form", FORMS)
def test_every_form_reads_the_same_cluster(form: str) -> None:
    assert strip(read_snapshot(DATA / form)) == strip(read_snapshot(DATA / "cluster.yaml"))


def test_nodes() -> None:
    s = read_snapshot(DATA / "cluster.yaml")
    assert len(s.nodes) == 6
    n1 = s.nodes[0]
    assert (n1.name, n1.type) == (N1, "m5.xlarge")
    assert dict(n1.allocatable) == {"cpu": 3920, "memory": 15155088 * 1024, "pods": 58,
                                    "ephemeral-storage": 76224326324, "hugepages-1Gi": 0,
                                    "hugepages-2Mi": 0}
    by = {n.name: n for n in s.nodes}
    assert by[N4].unschedulable and not by[N1].unschedulable
    assert Taint("dedicated", "batch", "NoSchedule") in by[N5].taints
    assert by[N5].allocatable["gpu"] == 1 and by[N5].type == "g4dn.xlarge"
    assert dict(by[N5].labels)["workload"] == "batch"


def test_pods() -> None:
    s = read_snapshot(DATA / "cluster.yaml")
    assert (len(s.pods), s.finished) == (26, 1)  # 27 pods, one Succeeded
    assert s.resources == ("cpu", "memory", "pods", "ephemeral-storage", "gpu")
    by = {p.name: p for p in s.pods}
    assert sum(p.daemon for p in s.pods) == 12
    web = by["web-7d9f8b6c5-x2k4p"]
    assert web.controller == "Deployment/shop/web"  # ReplicaSet web-7d9f8b6c5 via pod-template-hash
    assert dict(web.request) == {"pods": 1, "cpu": 500, "memory": 512 * 2**20,
                                 "ephemeral-storage": 2**30}  # the limit, as the API server copies it
    assert dict(by["infer-7a6b5c4d3-g0g0g"].request)["gpu"] == 1
    assert by["search-6f5e4d3c2-p0p0p"].node is None and by["search-6f5e4d3c2-p0p0p"].phase == "Pending"
    assert by["redis-0"].controller == "StatefulSet/shop/redis"
    assert by["redis-0"].pinned == "local storage (volume data)"
    assert by["debug"].pinned.startswith("no controller")
    assert by["ml-train-0"].pinned == 'karpenter.sh/do-not-disrupt: "true"'
    assert sum(p.pinned is not None for p in s.pods) == 3
    ds = next(p for p in s.pods if p.daemon)
    assert ds.controller == "DaemonSet/kube-system/kube-proxy" and ds.node_affinity is None
    api = by["api-5c6d7e8f9-a1b2c"]
    assert [t[2] for t in api.anti] == ["kubernetes.io/hostname"]
    assert not s.ignored


def test_budgets() -> None:
    s = read_snapshot(DATA / "cluster.yaml")
    got = {b.key: (b.min_available, b.max_unavailable) for b in s.budgets}
    assert got == {"shop/web": (None, 1), "shop/api": (1, None), "kube-system/coredns": (None, "50%")}


def test_detected_as_a_snapshot() -> None:
    for form in FORMS:
        assert looks_like_snapshot(DATA / form)
        assert detect(DATA / form)[0] == "snapshot"
    assert not looks_like_snapshot(Path(__file__).resolve().parents[2] / "data" / "k8s" / "rules")


@pytest.mark.parametrize(("name", "where", "reason"), [
    ("unknown-node.yaml", "Pod/shop/lost-0: spec.nodeName", "is not in the snapshot"),
    ("no-allocatable.yaml", "Node/ip-10-0-2-21.ec2.internal: status.allocatable", "missing"),
    ("not-a-list.yaml", "document 2", "expected a Kubernetes List or object"),
    ("truncated.yaml", "line 1932, column 32", "malformed YAML"),
])
def test_bad_snapshots_are_one_line_each(name: str, where: str, reason: str) -> None:
    with pytest.raises(InputError) as e:
        read_snapshot(DATA / "bad" / name)
    (p,) = e.value.problems
    assert p.field == where and reason in p.reason
    assert "\n" not in str(p)
