"""What ``vbp info`` says about a cluster snapshot: nodes per type, load per node, pending and pinned pods.

:func:`snapshot_facts` gives plain JSON data (the ``"snapshot"`` object of ``vbp info --json``);
:func:`snapshot_lines` the text for people.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from packing.cluster.problem import ClusterProblem
from packing.cluster.snapshot import to_units


def snapshot_facts(problem: ClusterProblem) -> dict[str, Any]:
    """The snapshot's facts as JSON data (units: cores, GiB, counts)."""
    P = problem
    snap = P.snapshot
    nidx = snap.node_index()
    req = np.zeros((len(snap.nodes), len(snap.resources)), dtype=np.int64)
    for p in snap.pods:
        if p.node is not None:
            req[nidx[p.node]] += [int(p.request.get(r, 0)) for r in snap.resources]
    per_node = [{"node": n.name, "type": n.type, "cordoned": n.unschedulable,
                 "requested": {r: to_units(r, int(v)) for r, v in zip(snap.resources, req[i], strict=True)},
                 "allocatable": {r: to_units(r, int(n.allocatable.get(r, 0))) for r in snap.resources}}
                for i, n in enumerate(snap.nodes)]
    budgets = [{"budget": s.budget.key, "pods": len(s.pods), "healthy": s.healthy,
                "desired": s.desired, "allowed": s.allowed} for s in P.budgets]
    return {
        "nodes": len(snap.nodes),
        "types": dict(Counter(n.type or "(no type label)" for n in snap.nodes)),
        "type_label": snap.type_label,
        "cordoned_nodes": [n.name for n in snap.nodes if n.unschedulable],
        "pods": len(snap.pods), "daemon_pods": sum(p.daemon for p in snap.pods),
        "finished_pods": snap.finished,
        "pending": [p.key for p in snap.pods if p.node is None],
        "pinned": [{"pod": snap.pods[i].key, "reason": g.why or ""} for g in P.apps if g.pinned
                   for i in g.pods],
        "unplaceable": [{"pod": snap.pods[i].key, "reason": why} for i, why in P.unplaced],
        "budgets": budgets, "per_node": per_node, "resource_names": list(snap.resources),
        "objects": dict(sorted(snap.kinds.items())), "skipped": dict(sorted(snap.skipped.items())),
        "ignored": list(P.ignored), "files": list(snap.sources),
    }


__all__ = ["snapshot_facts"]
