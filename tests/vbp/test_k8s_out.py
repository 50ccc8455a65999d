"""``vbp plan --k8s-out``: the plan as Kubernetes Nodes and bound Pods, read back and checked.

Sources: tests/data/k8s (see SOURCE.txt): online-boutique-small.yaml, rules/taints.yaml,
rules/selectors.yaml. Every check here is independent of vbp: the written YAML is read with
``yaml.safe_load_all`` and replayed by :func:`tests.k8s_replay.replay` (the scheduler's filters
written from its documentation).
"""

from __future__ import annotations

import json
from collections import Counter
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml

import vbp
from packing.plan.k8s_out import dump_yaml
from tests.k8s_replay import pod_request, quantity, replay
from vbp.cli import main

K8S = Path(__file__).resolve().parents[1] / "data" / "k8s"
RULES = K8S / "rules"
SCHEMA = Path(__file__).resolve().parents[2] / "docs" / "schemas" / "vbp-plan-3.json"


def run(capsys, *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as e:
        main(list(args))
    out, err = capsys.readouterr()
    return int(e.value.code or 0), out, err


def workloads(path: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """(namespace, name) -> object, for the replicated workloads of a manifest file."""
    out = {}
    for d in yaml.safe_load_all(path.read_text()):
        if d and d["kind"] in ("Deployment", "StatefulSet"):
            out[(d["metadata"].get("namespace", "default"), d["metadata"]["name"])] = d
    return out


def check_replay(objects: list[dict[str, Any]], manifest: Path, growth: float = 1.0) -> None:
    """Every pod once, bound to a written Node that admits it and has room for it."""
    nodes = {o["metadata"]["name"]: o for o in objects if o["kind"] == "Node"}
    pods = [o for o in objects if o["kind"] == "Pod"]
    spaces = [o["metadata"]["name"] for o in objects if o["kind"] == "Namespace"]
    assert len(spaces) + len(nodes) + len(pods) == len(objects)
    assert spaces == sorted({p["metadata"]["namespace"] for p in pods} - {"default"})
    for name, n in nodes.items():
        assert n["apiVersion"] == "v1"
        assert n["metadata"]["labels"]["kubernetes.io/hostname"] == name
    assert replay(objects) == []  # every pod binds through the scheduler's filters
    want = {}
    for (ns, name), d in workloads(manifest).items():
        reps = -(-d["spec"].get("replicas", 1) * Fraction(str(growth)) // 1)
        want.update({(ns, f"{name}-{i}"): d for i in range(int(reps))})
    got = Counter((p["metadata"].get("namespace"), p["metadata"]["name"]) for p in pods)
    assert set(got) == set(want) and set(got.values()) == {1}
    for p in pods:
        d = want[(p["metadata"]["namespace"], p["metadata"]["name"])]
        tmpl = d["spec"]["template"]
        assert p["metadata"]["labels"] == tmpl["metadata"]["labels"]
        assert p["spec"]["containers"] == tmpl["spec"]["containers"]


def test_online_boutique_round_trip_and_json_names_the_files(capsys, tmp_path):
    """1-core hosts force several Nodes; reserve 100m,256Mi leaves allocatable 900m, 3840Mi."""
    out = tmp_path / "nodes.yaml"
    src = K8S / "online-boutique-small.yaml"
    code, text, err = run(capsys, "plan", str(src), "--hosts", "small:1c4g", "--reserve",
                          "100m,256Mi", "--headroom", "10%", "--growth", "1,3", "--k8s-out",
                          str(out), "--json", "--time-limit", "20")
    assert code == 0, err
    doc = json.loads(text)
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(doc, json.loads(SCHEMA.read_text()))
    files = doc["outputs"]["kubernetes"]
    assert doc["outputs"]["placements"] == []
    assert files == [str(tmp_path / "nodes-x1.yaml"), str(tmp_path / "nodes-x3.yaml")]
    for f, g in zip(files, (1, 3), strict=True):
        objs = list(yaml.safe_load_all(Path(f).read_text()))
        check_replay(objs, src, g)
        for n in (o for o in objs if o["kind"] == "Node"):
            assert n["status"]["capacity"] == {"cpu": "1000m", "memory": "4Gi", "pods": "110"}
            assert n["status"]["allocatable"] == {"cpu": "900m", "memory": "3840Mi",
                                                  "pods": "110"}
            assert n["metadata"]["labels"]["vbp.io/host-type"] == "small"
    n3 = sum(1 for o in yaml.safe_load_all(Path(files[1]).read_text()) if o["kind"] == "Node")
    assert n3 >= 2


def test_taints_and_selectors_are_honoured(capsys, tmp_path):
    """rules/taints.yaml on a tainted GPU type and an untainted CPU type; each type's allocatable
    loses the DaemonSets it runs: the GPU type gpu-plugin (50m, 20Mi) only, since logger does not
    tolerate its taint."""
    hosts = tmp_path / "hosts.yaml"
    hosts.write_text(yaml.safe_dump([
        {"name": "gpu", "cpu": "4", "memory": "16Gi", "gpu": 1, "labels": {"accelerator": "nvidia"},
         "taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]},
        {"name": "cpu", "cpu": "2", "memory": "4Gi"}]))
    out = tmp_path / "k.yml"
    code, text, err = run(capsys, "plan", str(RULES / "taints.yaml"), "--hosts", str(hosts),
                          "--k8s-out", str(out), "--time-limit", "20")
    assert code == 0, err
    assert f"kubernetes {out} (" in text
    objs = list(yaml.safe_load_all(out.read_text()))
    nodes = {o["metadata"]["name"]: o for o in objs if o["kind"] == "Node"}
    assert {n["metadata"]["labels"]["vbp.io/host-type"] for n in nodes.values()} == {"gpu", "cpu"}
    g = next(n for n in nodes.values() if n["metadata"]["labels"]["vbp.io/host-type"] == "gpu")
    assert g["spec"]["taints"] == [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
    assert g["metadata"]["labels"]["accelerator"] == "nvidia"
    assert g["status"]["allocatable"] == {"cpu": "3950m", "memory": "16364Mi",
                                          "nvidia.com/gpu": "1", "pods": "109"}  # gpu-plugin's slot
    check_replay(objs, RULES / "taints.yaml")
    on = {p["metadata"]["name"]: nodes[p["spec"]["nodeName"]] for p in objs if p["kind"] == "Pod"}
    assert on["trainer-0"] is g and on["plain-0"] is not g


def test_node_affinity_expressions(capsys, tmp_path):
    """rules/selectors.yaml: ssd-app needs disk=ssd, new-gen gen>3 and zone in [a, b] (or pool),
    not-spot lifecycle NotIn [spot]; only the "fast" type admits them."""
    hosts = tmp_path / "hosts.yaml"
    hosts.write_text(yaml.safe_dump({"host_types": [
        {"name": "fast", "cpu": "2", "memory": "4Gi",
         "labels": {"disk": "ssd", "gen": "5", "zone": "a"}},
        {"name": "spot", "cpu": "2", "memory": "4Gi", "labels": {"lifecycle": "spot"}}]}))
    out = tmp_path / "k.yaml"
    code, _, err = run(capsys, "plan", str(RULES / "selectors.yaml"), "--hosts", str(hosts),
                       "--k8s-out", str(out), "--time-limit", "20")
    assert code == 0, err
    objs = list(yaml.safe_load_all(out.read_text()))
    check_replay(objs, RULES / "selectors.yaml")
    nodes = {o["metadata"]["name"]: o for o in objs if o["kind"] == "Node"}
    for p in (o for o in objs if o["kind"] == "Pod" and o["metadata"]["name"] != "soft-0"):
        assert nodes[p["spec"]["nodeName"]]["metadata"]["labels"]["vbp.io/host-type"] == "fast"


def test_python_api_matches_the_file_and_is_deterministic(capsys, tmp_path):
    src = K8S / "online-boutique-small.yaml"
    out = tmp_path / "a.yaml"
    code, _, err = run(capsys, "plan", str(src), "--hosts", "small:1c4g", "--k8s-out", str(out),
                       "--time-limit", "20")
    assert code == 0, err
    objs = vbp.plan(str(src), ["small:1c4g"], time_limit=20).scenarios[0].to_kubernetes()
    assert dump_yaml(objs) == out.read_text()


def test_csv_demand_gets_pause_pods(capsys, tmp_path):
    """A deployments CSV has no pod template: one pause container requesting the demand."""
    csv = tmp_path / "d.csv"
    csv.write_text("name,replicas,cpu,memory\nweb,3,1500m,1Gi\ndb,1,1,6Gi\n")
    out = tmp_path / "k.yaml"
    code, _, err = run(capsys, "plan", str(csv), "--hosts", "m:4c8g", "--k8s-out", str(out),
                       "--time-limit", "20")
    assert code == 0, err
    objs = list(yaml.safe_load_all(out.read_text()))
    pods = {o["metadata"]["name"]: o for o in objs if o["kind"] == "Pod"}
    assert sorted(pods) == ["db-0", "web-0", "web-1", "web-2"]
    assert pods["web-1"]["spec"]["containers"][0]["resources"]["requests"] == {
        "cpu": "1500m", "memory": "1Gi"}
    nodes = {o["metadata"]["name"]: o for o in objs if o["kind"] == "Node"}
    for name, n in nodes.items():
        here = [p for p in pods.values() if p["spec"]["nodeName"] == name]
        for r in ("cpu", "memory"):
            assert sum(pod_request(p["spec"]).get(r, 0) for p in here) <= quantity(
                n["status"]["allocatable"][r])
    assert {p["spec"]["nodeName"] for p in pods.values()} == set(nodes)


def test_overwrite_rule_and_suffix(capsys, tmp_path):
    src = str(K8S / "online-boutique-small.yaml")
    out = tmp_path / "k.yaml"
    out.write_text("keep\n")
    code, _, err = run(capsys, "plan", src, "--hosts", "s:8c32g", "--k8s-out", str(out))
    assert code == 2 and "--force" in err and out.read_text() == "keep\n"
    code, _, err = run(capsys, "plan", src, "--hosts", "s:8c32g", "--k8s-out",
                       str(tmp_path / "k.json"))
    assert code == 2 and "--k8s-out" in err
    code, _, err = run(capsys, "plan", src, "--hosts", "s:8c32g", "--k8s-out", src, "--force")
    assert code == 2 and out.read_text() == "keep\n"


def test_documented_example_is_what_vbp_writes(capsys, tmp_path):
    """docs/kubernetes.md "Kubernetes out": the host list and the YAML shown are real."""
    import re

    text = (Path(__file__).resolve().parents[2] / "docs" / "kubernetes.md").read_text()
    sec = text.split("## Kubernetes out", 1)[1].split("\n## ", 1)[0]
    hosts_doc, objs_doc = re.findall(r"```yaml\n(.*?)```", sec, re.S)
    hosts = tmp_path / "hosts.yaml"
    hosts.write_text(hosts_doc)
    out = tmp_path / "nodes.yaml"
    code, text_out, err = run(capsys, "plan", str(RULES / "taints.yaml"), "--hosts", str(hosts),
                              "--reserve", "100m,128Mi", "--k8s-out", str(out))
    assert code == 0, err
    assert f"kubernetes {out} (2 Nodes (gpu x1, std x1), 3 Pods)" in text_out
    written = list(yaml.safe_load_all(out.read_text()))
    shown = list(yaml.safe_load_all(objs_doc))
    assert len(shown) == 2 and all(d in written for d in shown)


def test_n_plus_one_spares_are_nodes(capsys, tmp_path):
    """With --n-plus-one the plan's hosts include an empty spare: it is a Node too."""
    out = tmp_path / "k.yaml"
    code, text, err = run(capsys, "plan", str(K8S / "online-boutique-small.yaml"), "--hosts",
                          "s:1c4g", "--n-plus-one", "--k8s-out", str(out), "--json",
                          "--time-limit", "20")
    assert code == 0, err
    s = json.loads(text)["scenarios"][0]
    objs = list(yaml.safe_load_all(out.read_text()))
    nodes = [o for o in objs if o["kind"] == "Node"]
    assert len(nodes) == s["hosts"] and s["n_plus_one"]["extra_hosts"] == 1  # hosts counts spares
    spares = {n["metadata"]["annotations"]["vbp.io/host"] for n in nodes} - {
        n["metadata"]["annotations"]["vbp.io/host"] for n in nodes
        if any(p["spec"]["nodeName"] == n["metadata"]["name"] for p in objs if p["kind"] == "Pod")}
    assert spares == set(s["n_plus_one"]["spares"])
    check_replay(objs, K8S / "online-boutique-small.yaml")


@pytest.mark.parametrize("taints, reason", [
    ("[{key: '', effect: NoSchedule}]", "a taint needs a key"),
    ("[{key: a, effect: Never}]", "effect must be one of"),
    ("{key: a}", "expected a list"),
    ("[{key: a, colour: red}]", "expected a mapping of key, value, effect"),
])
def test_bad_taints_are_one_line(capsys, tmp_path, taints, reason):
    hosts = tmp_path / "hosts.yaml"
    hosts.write_text(f"- {{name: t, cpu: '4', memory: 8Gi, taints: {taints}}}\n")
    code, _, err = run(capsys, "plan", str(K8S / "online-boutique-small.yaml"), "--hosts",
                       str(hosts))
    assert code == 2 and reason in err and "taints" in err and len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


def test_namespaces_and_name_clashes(capsys, tmp_path):
    """web in two namespaces (a Deployment and a StatefulSet in shop): Namespace objects first,
    pods named per namespace, the kind added when two kinds share a name."""
    def obj(kind: str, ns: str, replicas: int) -> dict[str, Any]:
        return {"apiVersion": "apps/v1", "kind": kind,
                "metadata": {"name": "web", "namespace": ns},
                "spec": {"replicas": replicas, "template": {
                    "metadata": {"labels": {"app": "web", "kind": kind}},
                    "spec": {"containers": [{"name": "c", "image": "x", "resources": {
                        "requests": {"cpu": "500m", "memory": "1Gi"}}}]}}}}
    src = tmp_path / "m.yaml"
    src.write_text(yaml.safe_dump_all([obj("Deployment", "shop", 2), obj("StatefulSet", "shop", 1),
                                       obj("Deployment", "blog", 3)]))
    out = tmp_path / "k.yaml"
    code, _, err = run(capsys, "plan", str(src), "--hosts", "s:2c4g", "--k8s-out", str(out),
                       "--time-limit", "20")
    assert code == 0, err
    objs = list(yaml.safe_load_all(out.read_text()))
    assert [o["metadata"]["name"] for o in objs if o["kind"] == "Namespace"] == ["blog", "shop"]
    assert objs[0]["kind"] == "Namespace" and objs[1]["kind"] == "Namespace"
    pods = sorted((o["metadata"]["namespace"], o["metadata"]["name"]) for o in objs
                  if o["kind"] == "Pod")
    assert pods == [("blog", "web-0"), ("blog", "web-1"), ("blog", "web-2"),
                    ("shop", "web-deployment-0"), ("shop", "web-deployment-1"),
                    ("shop", "web-statefulset-0")]


def test_only_complete_placements_are_written():
    from packing.model.instance import UNPLACED, Placement
    from packing.plan.k8s_out import plan_objects

    p = vbp.plan(str(K8S / "online-boutique-small.yaml"), ["s:8c32g"], time_limit=20)
    s = p.scenarios[0]
    assert s.instance is not None and s.placement is not None and s.replay is not None
    app = s.instance.apps[0].name
    bad = Placement({**s.placement.hosts, app: (UNPLACED,) * s.instance.apps[0].count})
    with pytest.raises(ValueError, match="unplaced"):
        plan_objects(s.instance, bad, s.replay.offers)
    with pytest.raises(ValueError, match="spare"):
        plan_objects(s.instance, s.placement, s.replay.offers, spares=("nope#0",))
