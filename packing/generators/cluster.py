"""Seeded Kubernetes cluster snapshots, shaped like ``kubectl get nodes,pods,pdb -A -o json``.

The objects carry the fields a real API server returns (from the Kubernetes API reference: Node,
Pod and PodDisruptionBudget v1, https://kubernetes.io/docs/reference/kubernetes-api/), including
those vbp does not read (``uid``, ``resourceVersion``, ``managedFields``, ``status.conditions``,
``nodeInfo``, ``containerStatuses``, ...), so that the snapshot reader
(:mod:`packing.loaders.snapshot`) meets them as it would in a real cluster.

* :func:`node_object`, :func:`pod_object`, :func:`pdb_object` build one object; :func:`as_list`
  wraps objects in a ``v1 List`` as ``kubectl get`` prints it.
* :func:`generate_cluster` draws a whole cluster from a seed: node types of a cloud's general
  purpose, compute and memory families (:data:`NODE_TYPES`, allocatable after the kubelet's
  reserve), DaemonSets on every node (and one on a share of them) making about ``daemon_share``
  of the pods, Deployments and StatefulSets of 1 to 12 replicas with requests on the usual grid
  (multiples of 50m and 64Mi), PodDisruptionBudgets on some of them, a few pinned pods, and the
  pods spread over the nodes as the default scheduler's least-allocated scoring would leave them
  after scale-downs: the cluster has room to consolidate.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

API_TIME = "2025-01-06T09:00:00Z"
"""The timestamp every generated object carries."""

NODE_TYPES: dict[str, tuple[int, int, int, float]] = {
    "m5.large": (2, 8, 29, 0.096),
    "m5.xlarge": (4, 16, 58, 0.192),
    "m5.2xlarge": (8, 32, 58, 0.384),
    "c5.2xlarge": (8, 16, 58, 0.34),
    "r5.xlarge": (4, 32, 58, 0.252),
}
"""Instance type -> (cores, GiB, max pods, price per hour): AWS EC2 on-demand shapes and prices."""


def _uid(*parts: str) -> str:
    h = hashlib.sha1("/".join(parts).encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def _managed(manager: str, fields: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [{"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": dict(fields),
             "manager": manager, "operation": "Update", "time": API_TIME}]


def allocatable(cores: int, gib: int) -> tuple[str, str]:
    """The kubelet's allocatable for a node of ``cores`` and ``gib``: ``(cpu, memory)`` quantities.

    The reserve of the EKS bootstrap (kube-reserved CPU 60m for the first core, 10m for the
    second, 5m each for the next two, 2.5m for each further one; memory 255Mi plus 11Mi per pod,
    and 100Mi eviction threshold), rounded as the kubelet prints them (CPU in millicores, memory
    in Ki).
    """
    milli = 1000 * cores - (60 + (10 if cores > 1 else 0) + 5 * min(2, max(0, cores - 2))
                            + int(2.5 * max(0, cores - 4)))
    pods = 58 if cores > 2 else 29
    mem_ki = gib * 1024 * 1024 - (255 + 11 * pods + 100) * 1024 - int(gib * 1024 * 1024 * 0.06)
    return f"{milli}m", f"{mem_ki}Ki"


def node_object(name: str, instance_type: str, *, cores: int, gib: int, pods: int = 110,
                alloc: tuple[str, str] | None = None, zone: str = "us-east-1a",
                labels: Mapping[str, str] | None = None, taints: Sequence[Mapping[str, str]] = (),
                unschedulable: bool = False, gpus: int = 0, ready: bool = True) -> dict[str, Any]:
    """A Node as the API server returns it (``metadata``, ``spec``, ``status``)."""
    cpu, mem = alloc or allocatable(cores, gib)
    cap = {"cpu": str(cores), "ephemeral-storage": "83873772Ki", "hugepages-1Gi": "0",
           "hugepages-2Mi": "0", "memory": f"{gib * 1024 * 1024}Ki", "pods": str(pods)}
    al = {"cpu": cpu, "ephemeral-storage": "76224326324", "hugepages-1Gi": "0", "hugepages-2Mi": "0",
          "memory": mem, "pods": str(pods)}
    if gpus:
        cap["nvidia.com/gpu"] = al["nvidia.com/gpu"] = str(gpus)
    lab = {"beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/instance-type": instance_type,
           "beta.kubernetes.io/os": "linux", "failure-domain.beta.kubernetes.io/region": zone[:-1],
           "failure-domain.beta.kubernetes.io/zone": zone, "kubernetes.io/arch": "amd64",
           "kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
           "node.kubernetes.io/instance-type": instance_type,
           "topology.kubernetes.io/region": zone[:-1], "topology.kubernetes.io/zone": zone,
           **(labels or {})}
    spec: dict[str, Any] = {"podCIDR": "10.244.0.0/24", "podCIDRs": ["10.244.0.0/24"],
                            "providerID": f"aws:///{zone}/i-{_uid(name)[:17].replace('-', '')}"}
    all_taints = [dict(t) for t in taints]
    if unschedulable:
        spec["unschedulable"] = True
        all_taints.append({"effect": "NoSchedule", "key": "node.kubernetes.io/unschedulable",
                           "timeAdded": API_TIME})
    if all_taints:
        spec["taints"] = all_taints
    conds = [
        {"lastHeartbeatTime": API_TIME, "lastTransitionTime": API_TIME, "message": msg,
         "reason": reason, "status": status, "type": kind}
        for kind, status, reason, msg in (
            ("MemoryPressure", "False", "KubeletHasSufficientMemory",
             "kubelet has sufficient memory available"),
            ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
            ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
            ("Ready", "True" if ready else "False", "KubeletReady" if ready else "KubeletNotReady",
             "kubelet is posting ready status" if ready else "container runtime network not ready"))]
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"annotations": {"alpha.kubernetes.io/provided-node-ip": "10.0.0.1",
                                     "node.alpha.kubernetes.io/ttl": "0",
                                     "volumes.kubernetes.io/controller-managed-attach-detach": "true"},
                     "creationTimestamp": API_TIME, "labels": lab,
                     "managedFields": _managed("kubelet", {"f:metadata": {"f:labels": {}}}),
                     "name": name, "resourceVersion": "123456", "uid": _uid("node", name)},
        "spec": spec,
        "status": {
            "addresses": [{"address": "10.0.0.1", "type": "InternalIP"},
                          {"address": name, "type": "Hostname"}],
            "allocatable": al, "capacity": cap, "conditions": conds,
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "images": [{"names": ["registry.k8s.io/pause:3.9"], "sizeBytes": 321520}],
            "nodeInfo": {"architecture": "amd64", "bootID": _uid("boot", name),
                         "containerRuntimeVersion": "containerd://1.7.11",
                         "kernelVersion": "5.10.205-195.807.amzn2.x86_64",
                         "kubeProxyVersion": "v1.29.0", "kubeletVersion": "v1.29.0",
                         "machineID": _uid("machine", name).replace("-", ""),
                         "operatingSystem": "linux", "osImage": "Amazon Linux 2",
                         "systemUUID": _uid("system", name)}},
    }


def pod_object(name: str, namespace: str, node: str | None, *,
               requests: Mapping[str, str] | None = None, limits: Mapping[str, str] | None = None,
               owner: tuple[str, str] | None = None, labels: Mapping[str, str] | None = None,
               annotations: Mapping[str, str] | None = None, phase: str | None = None,
               ready: bool | None = None, init_requests: Mapping[str, str] | None = None,
               volumes: Sequence[Mapping[str, Any]] = (), tolerations: Sequence[Mapping[str, Any]] = (),
               node_selector: Mapping[str, str] | None = None,
               affinity: Mapping[str, Any] | None = None, image: str = "nginx:1.25",
               priority_class: str | None = None) -> dict[str, Any]:
    """A Pod as the API server returns it; ``phase`` defaults to Running on a node, else Pending."""
    phase = phase or ("Running" if node else "Pending")
    ready = (phase == "Running") if ready is None else ready
    res: dict[str, Any] = {}
    if requests:
        res["requests"] = dict(requests)
    if limits:
        res["limits"] = dict(limits)
    container = {"image": image, "imagePullPolicy": "IfNotPresent", "name": name.split("-")[0] or "app",
                 "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
                 "resources": res, "terminationMessagePath": "/dev/termination-log",
                 "terminationMessagePolicy": "File",
                 "volumeMounts": [{"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                                   "name": "kube-api-access", "readOnly": True}]}
    spec: dict[str, Any] = {
        "containers": [container], "dnsPolicy": "ClusterFirst", "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority", "priority": 0, "restartPolicy": "Always",
        "schedulerName": "default-scheduler", "securityContext": {}, "serviceAccount": "default",
        "serviceAccountName": "default", "terminationGracePeriodSeconds": 30,
        "tolerations": [
            {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists",
             "tolerationSeconds": 300},
            {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists",
             "tolerationSeconds": 300}, *[dict(t) for t in tolerations]],
        "volumes": [{"name": "kube-api-access", "projected": {"defaultMode": 420, "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}]}},
            *[dict(v) for v in volumes]],
    }
    if init_requests:
        spec["initContainers"] = [{"image": "busybox:1.36", "name": "init", "resources": {
            "requests": dict(init_requests)}, "command": ["sh", "-c", "true"]}]
    if node:
        spec["nodeName"] = node
    if node_selector:
        spec["nodeSelector"] = dict(node_selector)
    if affinity:
        spec["affinity"] = dict(affinity)
    if priority_class:
        spec["priorityClassName"] = priority_class
    meta: dict[str, Any] = {"creationTimestamp": API_TIME, "labels": dict(labels or {}),
                            "managedFields": _managed("kube-controller-manager", {"f:metadata": {}}),
                            "name": name, "namespace": namespace, "resourceVersion": "234567",
                            "uid": _uid("pod", namespace, name)}
    if annotations:
        meta["annotations"] = dict(annotations)
    if owner is not None:
        kind, oname = owner
        meta["generateName"] = f"{oname}-"
        meta["ownerReferences"] = [{"apiVersion": "v1" if kind == "Node" else "apps/v1"
                                    if kind != "Job" else "batch/v1", "blockOwnerDeletion": True,
                                    "controller": True, "kind": kind, "name": oname,
                                    "uid": _uid(kind, namespace, oname)}]
    status: dict[str, Any] = {"phase": phase, "qosClass": "Burstable" if requests else "BestEffort"}
    if phase == "Pending" and not node:
        status["conditions"] = [{"lastProbeTime": None, "lastTransitionTime": API_TIME,
                                 "message": "0/3 nodes are available: 3 Insufficient cpu.",
                                 "reason": "Unschedulable", "status": "False", "type": "PodScheduled"}]
    else:
        status.update({
            "conditions": [{"lastProbeTime": None, "lastTransitionTime": API_TIME, "status": s,
                            "type": t} for t, s in (
                ("Initialized", "True"), ("Ready", "True" if ready else "False"),
                ("ContainersReady", "True" if ready else "False"), ("PodScheduled", "True"))],
            "containerStatuses": [{"containerID": f"containerd://{_uid('c', name).replace('-', '')}",
                                   "image": image, "imageID": f"docker.io/library/{image}@sha256:0",
                                   "lastState": {}, "name": container["name"], "ready": bool(ready),
                                   "restartCount": 0, "started": phase == "Running",
                                   "state": {"running": {"startedAt": API_TIME}}
                                   if phase == "Running" else {"terminated": {"exitCode": 0,
                                   "reason": "Completed", "finishedAt": API_TIME}}}],
            "hostIP": "10.0.0.1", "podIP": "10.244.0.10", "podIPs": [{"ip": "10.244.0.10"}],
            "startTime": API_TIME})
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def pdb_object(name: str, namespace: str, match_labels: Mapping[str, str] | None, *,
               min_available: int | str | None = None, max_unavailable: int | str | None = None,
               status: Mapping[str, int] | None = None) -> dict[str, Any]:
    """A PodDisruptionBudget (policy/v1) with the status the disruption controller would write."""
    spec: dict[str, Any] = {}
    if match_labels is not None:
        spec["selector"] = {"matchLabels": dict(match_labels)}
    if min_available is not None:
        spec["minAvailable"] = min_available
    if max_unavailable is not None:
        spec["maxUnavailable"] = max_unavailable
    st = {"currentHealthy": 0, "desiredHealthy": 0, "disruptionsAllowed": 0, "expectedPods": 0,
          **(status or {})}
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"creationTimestamp": API_TIME, "generation": 1,
                         "managedFields": _managed("kubectl-client-side-apply", {"f:spec": {}}),
                         "name": name, "namespace": namespace, "resourceVersion": "345678",
                         "uid": _uid("pdb", namespace, name)},
            "spec": spec,
            "status": {**st, "observedGeneration": 1, "conditions": [
                {"lastTransitionTime": API_TIME, "message": "", "observedGeneration": 1,
                 "reason": "SufficientPods" if st["disruptionsAllowed"] else "InsufficientPods",
                 "status": "True" if st["disruptionsAllowed"] else "False",
                 "type": "DisruptionAllowed"}]}}


def _on_node(name: str) -> dict[str, Any]:
    """The node affinity the DaemonSet controller gives its pod on node ``name``."""
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [name]}]}
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [term]}}}


def as_list(objects: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Objects as the ``v1 List`` ``kubectl get ... -o yaml`` prints."""
    return {"apiVersion": "v1", "items": [dict(o) for o in objects], "kind": "List",
            "metadata": {"resourceVersion": ""}}


# ------------------------------------------------------------------------------------------------
SHAPES = ((100, 128), (100, 256), (250, 256), (250, 512), (500, 512), (500, 1024), (750, 1536),
          (1000, 1024), (1000, 2048), (1500, 3072), (2000, 4096), (200, 2048), (500, 3072))
"""Container requests (millicores, MiB) a service draws from."""
DAEMONS = (("kube-system", "kube-proxy", 100, 0), ("kube-system", "aws-node", 25, 0),
           ("monitoring", "node-exporter", 50, 64), ("logging", "fluent-bit", 100, 128))
"""DaemonSets (namespace, name, millicores, MiB), in the order they are added."""


def _hash(name: str) -> str:
    return hashlib.sha1(name.encode()).hexdigest()[:10]


def generate_cluster(nodes: int = 240, pods: int = 1600, *, seed: int = 0,
                     daemon_share: float = 1 / 3, fill: float = 0.45, pending: int = 0,
                     types: Sequence[str] = ("m5.large", "m5.xlarge", "m5.2xlarge", "c5.2xlarge",
                                             "r5.xlarge")) -> list[dict[str, Any]]:
    """A seeded cluster: Nodes, Pods and PodDisruptionBudgets (see the module docstring).

    Args:
        nodes: nodes.
        pods: pods in all (DaemonSet pods, service pods and ``pending`` Pending pods).
        seed: the seed; the same arguments give the same objects.
        daemon_share: the share of the pods that are DaemonSet pods.
        fill: the share of the nodes' CPU and memory the service pods ask for (about).
        pending: service pods left Pending (no node).
        types: the node types drawn (keys of :data:`NODE_TYPES`).

    Returns:
        The objects, nodes first.
    """
    rng = np.random.default_rng(seed)
    kinds = [types[int(i)] for i in rng.integers(0, len(types), nodes)]
    zones = ("us-east-1a", "us-east-1b", "us-east-1c")
    out: list[dict[str, Any]] = []
    names = [f"ip-10-{k // 250}-{(k % 250) // 10}-{10 + k % 10 + 10 * (k // 2500)}.ec2.internal"
             for k in range(nodes)]
    names = [f"node-{k:05d}" if len(set(names)) != nodes else n for k, n in enumerate(names)]
    cap = np.zeros((nodes, 3), dtype=np.int64)  # millicores, MiB, pods
    for k, (name, t) in enumerate(zip(names, kinds, strict=True)):
        cores, gib, maxp, _ = NODE_TYPES[t]
        cpu, mem = allocatable(cores, gib)
        cap[k] = (int(cpu[:-1]), int(mem[:-2]) // 1024, maxp)
        labels = {"eks.amazonaws.com/nodegroup": t.split(".")[0]}
        if k % 9 == 0:
            labels["monitoring"] = "enabled"
        out.append(node_object(name, t, cores=cores, gib=gib, pods=maxp, alloc=(cpu, mem),
                               zone=zones[k % 3], labels=labels))
    load = np.zeros_like(cap)
    n_daemon = int(round(pods * daemon_share))
    made = 0
    for ns, ds, milli, mib in DAEMONS:
        on = [k for k in range(nodes) if ds != "fluent-bit" or k % 9 == 0]
        if made >= n_daemon:
            break
        on = on[: n_daemon - made]
        for k in on:
            req = {"cpu": f"{milli}m"} | ({"memory": f"{mib}Mi"} if mib else {})
            out.append(pod_object(f"{ds}-{_hash(names[k])[:8]}", ns, names[k], requests=req,
                                  owner=("DaemonSet", ds), labels={"k8s-app": ds,
                                  "controller-revision-hash": "6b9c4d7f8"}, image=f"{ds}:v1",
                                  tolerations=[{"operator": "Exists"}],
                                  node_selector={"monitoring": "enabled"} if ds == "fluent-bit" else None,
                                  affinity=_on_node(names[k])))
            load[k] += (milli, mib, 1)
        made += len(on)
    n_service = pods - made
    budget = cap[:, :2].sum(axis=0) * fill
    objs: list[tuple[Any, ...]] = []
    used = np.zeros(2)
    d = 0
    placed = 0
    while placed < n_service:
        replicas = int(min(n_service - placed, rng.choice([1, 2, 2, 3, 3, 3, 4, 5, 6, 8, 12])))
        milli, mib = SHAPES[int(rng.integers(0, len(SHAPES)))]
        ns = ("default", "shop", "payments", "search", "data")[int(rng.integers(0, 5))]
        kind = "StatefulSet" if rng.random() < 0.1 else "Deployment"
        app = f"svc-{d:04d}"
        d += 1
        h = _hash(app)[:10]
        for r in range(replicas):
            pname = f"{app}-{r}" if kind == "StatefulSet" else f"{app}-{h}-{_hash(f'{app}{r}')[:5]}"
            owner = ("StatefulSet", app) if kind == "StatefulSet" else ("ReplicaSet", f"{app}-{h}")
            labels = {"app": app} | ({} if kind == "StatefulSet" else {"pod-template-hash": h})
            annotations = None
            if rng.random() < 0.01:
                annotations = {"cluster-autoscaler.kubernetes.io/safe-to-evict": "false"}
            objs.append((pname, ns, owner, labels, annotations, milli, mib, kind))
            placed += 1
            used += (milli, mib)
    # scale the requests so that the service pods ask for about `fill` of the nodes
    scale = min(3.0, float(min(budget[0] / max(used[0], 1), budget[1] / max(used[1], 1))))
    order = rng.permutation(len(objs))
    pdbs: dict[tuple[str, str], int] = {}
    for rank, i in enumerate(order.tolist()):
        pname, ns, owner, labels, annotations, milli, mib, kind = objs[i]
        milli = max(50, int(round(milli * scale / 50)) * 50)
        mib = max(64, int(round(mib * scale / 64)) * 64)
        free = cap - load
        ok = (free[:, 0] >= milli) & (free[:, 1] >= mib) & (free[:, 2] >= 1)
        node = None
        if rank >= len(objs) - pending or not ok.any():
            node = None
        else:
            score = ((free[:, 0] - milli) / cap[:, 0] + (free[:, 1] - mib) / cap[:, 1]) / 2
            score = np.where(ok, score + 0.3 * rng.random(nodes), -np.inf)
            k = int(np.argmax(score))
            node = names[k]
            load[k] += (milli, mib, 1)
        vols = [{"name": "cache", "emptyDir": {}}] if kind == "StatefulSet" and rng.random() < 0.3 else []
        ann = dict(annotations or {})
        if vols:
            ann["cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes"] = "cache"
        out.append(pod_object(pname, ns, node, requests={"cpu": f"{milli}m", "memory": f"{mib}Mi"},
                              owner=owner, labels=labels, annotations=ann or None, volumes=vols))
        app = labels["app"]
        pdbs[(ns, app)] = pdbs.get((ns, app), 0) + 1
    for (ns, app), n in sorted(pdbs.items()):
        if n >= 3 and int(_hash(app)[:2], 16) % 3 == 0:
            spec = {"max_unavailable": 1} if int(_hash(app)[2:4], 16) % 2 else {"min_available": "50%"}
            out.append(pdb_object(f"{app}-pdb", ns, {"app": app}, **spec))
    return out


__all__ = ["DAEMONS", "NODE_TYPES", "SHAPES", "allocatable", "as_list", "generate_cluster",
           "node_object", "pdb_object", "pod_object"]
