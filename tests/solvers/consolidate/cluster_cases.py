"""Small seeded clusters for the consolidation tests: generated snapshots with a cordoned node, a
tainted node with tolerating pods, hostname anti-affinity and tight PodDisruptionBudgets."""

from __future__ import annotations

from typing import Any

import numpy as np

from packing.cluster.snapshot import Snapshot
from packing.generators.cluster import as_list, generate_cluster, pdb_object
from packing.loaders.host_types import load_hosts
from packing.plan.model import HostOffer

OFFERS = ("m5.large=2c8g:price=0.096", "m5.xlarge=4c16g:price=0.192", "m5.2xlarge=8c32g:price=0.384",
          "c5.2xlarge=8c16g:price=0.34", "r5.xlarge=4c32g:price=0.252")
"""Prices of the generator's node types."""


def offers() -> tuple[HostOffer, ...]:
    return load_hosts(list(OFFERS))


def small_cluster(seed: int, nodes: int = 6, pods: int = 30, pending: int = 1) -> list[dict[str, Any]]:
    """A generated cluster, changed by the seed: node 1 cordoned, node 2 tainted (a third of the
    deployments tolerate it), one deployment with hostname anti-affinity (one whose pods run on
    different nodes), every deployment of three or more pods, none Pending, under a budget of one
    at a time."""
    rng = np.random.default_rng(1000 + seed)
    objs = generate_cluster(nodes, pods, seed=seed, fill=0.35, pending=pending,
                            types=("m5.large", "m5.xlarge", "r5.xlarge"))
    nodes_ = [o for o in objs if o["kind"] == "Node"]
    if len(nodes_) > 1:
        nodes_[1]["spec"]["unschedulable"] = True
    taint = {"key": "team", "value": "data", "effect": "NoSchedule"}
    if len(nodes_) > 2:
        nodes_[2]["spec"]["taints"] = [taint]
    apps: dict[str, int] = {}
    for o in objs:
        if o["kind"] == "Pod" and "app" in o["metadata"]["labels"]:
            apps[o["metadata"]["labels"]["app"]] = apps.get(o["metadata"]["labels"]["app"], 0) + 1
    names = sorted(apps)
    tolerant = {a for a in names if rng.random() < 0.35}
    where: dict[str, list[Any]] = {}
    for o in objs:
        if o["kind"] == "Pod" and "app" in o["metadata"]["labels"]:
            where.setdefault(o["metadata"]["labels"]["app"], []).append(o["spec"].get("nodeName"))
    spread = next((a for a in names if apps[a] >= 2 and None not in where[a]
                   and len(set(where[a])) == len(where[a])), None)
    for o in objs:
        if o["kind"] != "Pod" or "app" not in o["metadata"]["labels"]:
            continue
        app = o["metadata"]["labels"]["app"]
        spec = o["spec"]
        if app in tolerant:
            spec["tolerations"].append({"key": "team", "operator": "Equal", "value": "data",
                                        "effect": "NoSchedule"})
        if app == spread:
            spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": "kubernetes.io/hostname"}]}}
    objs = [o for o in objs if o["kind"] != "PodDisruptionBudget"]
    ns_of = {o["metadata"]["labels"]["app"]: o["metadata"]["namespace"] for o in objs
             if o["kind"] == "Pod" and "app" in o["metadata"]["labels"]}
    objs += [pdb_object(f"{a}-pdb", ns_of[a], {"app": a}, max_unavailable=1)
             for a in names if apps[a] >= 3 and None not in where[a]]
    return objs


def snapshot_of(objs: list[dict[str, Any]], tmp_path: Any, name: str = "c.json") -> Snapshot:
    import json

    from packing.loaders.snapshot import read_snapshot

    p = tmp_path / name
    p.write_text(json.dumps(as_list(objs)))
    return read_snapshot(p)
