"""Write the cluster snapshots of this folder (deterministic; run from the repository root).

    python tests/data/k8s-snapshots/make_snapshots.py

One small cluster, written from the Kubernetes API reference (see SOURCE.txt) with the object
builders of packing.generators.cluster, in the shapes kubectl prints it: a v1 List in YAML
(cluster.yaml) and JSON (cluster.json), multi-document YAML (multi.yaml: one List per kind, as
three kubectl get commands give), and a folder (folder/); and the bad snapshots of bad/.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from packing.generators.cluster import as_list, node_object, pdb_object, pod_object

HERE = Path(__file__).resolve().parent
ALL = [{"operator": "Exists"}]
DS = ("kube-proxy", 100, None), ("aws-node", 25, "64Mi")
N1, N2, N3, N4, N5, N6 = ("ip-10-0-1-11.ec2.internal", "ip-10-0-1-12.ec2.internal",
                          "ip-10-0-2-21.ec2.internal", "ip-10-0-2-22.ec2.internal",
                          "ip-10-0-3-31.ec2.internal", "ip-10-0-3-32.ec2.internal")


def nodes() -> list[dict]:
    big = ("3920m", "15155088Ki")
    small = ("1930m", "7089276Ki")
    return [
        node_object(N1, "m5.xlarge", cores=4, gib=16, pods=58, alloc=big, zone="us-east-1a"),
        node_object(N2, "m5.xlarge", cores=4, gib=16, pods=58, alloc=big, zone="us-east-1b"),
        node_object(N3, "m5.large", cores=2, gib=8, pods=29, alloc=small, zone="us-east-1a"),
        node_object(N4, "m5.large", cores=2, gib=8, pods=29, alloc=small, zone="us-east-1b",
                    unschedulable=True),
        node_object(N5, "g4dn.xlarge", cores=4, gib=16, pods=29, alloc=big, zone="us-east-1a",
                    gpus=1, labels={"workload": "batch"},
                    taints=[{"effect": "NoSchedule", "key": "dedicated", "value": "batch"}]),
        node_object(N6, "m5.large", cores=2, gib=8, pods=29, alloc=small, zone="us-east-1c"),
    ]


def rs(app: str, h: str, i: str, ns: str, node: str | None, cpu: str, mem: str, **kw) -> dict:
    return pod_object(f"{app}-{h}-{i}", ns, node, requests={"cpu": cpu, "memory": mem},
                      owner=("ReplicaSet", f"{app}-{h}"), labels={"app": app, "pod-template-hash": h},
                      **kw)


def pods() -> list[dict]:
    out = []
    for k, n in enumerate((N1, N2, N3, N4, N5, N6)):
        for name, cpu, mem in DS:
            req = {"cpu": f"{cpu}m"} | ({"memory": mem} if mem else {})
            out.append(pod_object(f"{name}-{'abcdef'[k]}{k + 2}x{k}q", "kube-system", n, requests=req,
                                  owner=("DaemonSet", name), labels={"k8s-app": name},
                                  tolerations=ALL, image=f"{name}:v1.29", affinity={
                                      "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                                          "nodeSelectorTerms": [{"matchFields": [{
                                              "key": "metadata.name", "operator": "In", "values": [n]}]}]}}}))
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "api"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    out += [
        rs("web", "7d9f8b6c5", "x2k4p", "shop", N1, "500m", "512Mi", limits={"ephemeral-storage": "1Gi"}),
        rs("web", "7d9f8b6c5", "q8z3m", "shop", N2, "500m", "512Mi", limits={"ephemeral-storage": "1Gi"}),
        rs("web", "7d9f8b6c5", "m4n7v", "shop", N3, "500m", "512Mi", limits={"ephemeral-storage": "1Gi"}),
        rs("api", "5c6d7e8f9", "a1b2c", "shop", N1, "1", "2Gi", affinity=anti),
        rs("api", "5c6d7e8f9", "d3e4f", "shop", N2, "1", "2Gi", affinity=anti),
        rs("coredns", "66bff467f8", "k8s9t", "kube-system", N1, "100m", "70Mi",
           priority_class="system-cluster-critical"),
        rs("coredns", "66bff467f8", "w2w5x", "kube-system", N3, "100m", "70Mi",
           priority_class="system-cluster-critical"),
        rs("cart", "84c9b5d6f", "c7c7c", "shop", N4, "250m", "256Mi"),
        rs("search", "6f5e4d3c2", "p0p0p", "shop", None, "500m", "1Gi"),
        rs("worker", "59d8c7b6a", "b1b1b", "batch", N5, "1", "1Gi", node_selector={"workload": "batch"},
           tolerations=[{"key": "dedicated", "operator": "Equal", "value": "batch", "effect": "NoSchedule"}]),
        rs("infer", "7a6b5c4d3", "g0g0g", "batch", N5, "500m", "2Gi", node_selector={"workload": "batch"},
           limits={"nvidia.com/gpu": "1"},
           tolerations=[{"key": "dedicated", "operator": "Equal", "value": "batch", "effect": "NoSchedule"}]),
        pod_object("redis-0", "shop", N2, requests={"cpu": "250m", "memory": "1Gi"},
                   owner=("StatefulSet", "redis"), labels={"app": "redis"},
                   volumes=[{"name": "data", "emptyDir": {}}]),
        pod_object("debug", "default", N1, requests={"cpu": "100m", "memory": "64Mi"},
                   labels={"run": "debug"}, image="busybox:1.36"),
        pod_object("ml-train-0", "batch", N2, requests={"cpu": "200m", "memory": "512Mi"},
                   owner=("Job", "ml-train"), labels={"job-name": "ml-train"},
                   annotations={"karpenter.sh/do-not-disrupt": "true"}),
        pod_object("report-28431-5z9kd", "batch", N3, requests={"cpu": "1", "memory": "1Gi"},
                   owner=("Job", "report-28431"), labels={"job-name": "report-28431"},
                   phase="Succeeded", ready=False),
    ]
    return out


def pdbs() -> list[dict]:
    return [
        pdb_object("web", "shop", {"app": "web"}, max_unavailable=1,
                   status={"currentHealthy": 3, "desiredHealthy": 2, "disruptionsAllowed": 1,
                           "expectedPods": 3}),
        pdb_object("api", "shop", {"app": "api"}, min_available=1,
                   status={"currentHealthy": 2, "desiredHealthy": 1, "disruptionsAllowed": 1,
                           "expectedPods": 2}),
        pdb_object("coredns", "kube-system", {"app": "coredns"}, max_unavailable="50%",
                   status={"currentHealthy": 2, "desiredHealthy": 1, "disruptionsAllowed": 1,
                           "expectedPods": 2}),
    ]


class Dumper(yaml.SafeDumper):
    """kubectl prints no YAML anchors or aliases."""

    def ignore_aliases(self, data: object) -> bool:
        return True


def dump_yaml(path: Path, docs: list) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.dump_all(docs, Dumper=Dumper, sort_keys=True, width=100), encoding="utf-8")


def main() -> None:
    objs = nodes() + pods() + pdbs()
    dump_yaml(HERE / "cluster.yaml", [as_list(objs)])
    (HERE / "cluster.json").write_text(json.dumps(as_list(objs), indent=4, sort_keys=True) + "\n")
    dump_yaml(HERE / "multi.yaml", [as_list(nodes()), as_list(pods()), as_list(pdbs())])
    dump_yaml(HERE / "folder" / "nodes.yaml", [as_list(nodes())])
    (HERE / "folder" / "pods.json").write_text(json.dumps(as_list(pods()), indent=4, sort_keys=True) + "\n")
    dump_yaml(HERE / "folder" / "pdb.yaml", pdbs())
    bad = HERE / "bad"
    ghost = pods()[:1] + [pod_object("lost-0", "shop", "ip-10-0-9-99.ec2.internal",
                                     requests={"cpu": "100m"}, owner=("StatefulSet", "lost"))]
    dump_yaml(bad / "unknown-node.yaml", [as_list(nodes() + ghost)])
    bare = nodes()
    del bare[2]["status"]["allocatable"]
    dump_yaml(bad / "no-allocatable.yaml", [as_list(bare)])
    dump_yaml(bad / "not-a-list.yaml", [as_list(nodes()), ["kubectl", "get", "pods"]])
    text = (HERE / "cluster.yaml").read_text()
    cut = text.index("creationTimestamp: '", len(text) // 2) + len("creationTimestamp: '2025-01")
    (bad / "truncated.yaml").write_text(text[:cut])  # a transfer cut inside a quoted string


if __name__ == "__main__":
    main()
