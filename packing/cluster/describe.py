"""What ``vbp info`` says about a cluster snapshot: nodes per type, load per node, pending and pinned pods.

:func:`snapshot_facts` gives plain JSON data (the ``"snapshot"`` object of ``vbp info --json``);
:func:`snapshot_lines` the text for people.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from packing.cluster.problem import ClusterProblem
from packing.cluster.snapshot import show, to_units

SHOWN = ("cpu", "memory", "pods")
"""The resources of the per-node table (others are in the JSON)."""


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
        "cordoned": [n.name for n in snap.nodes if n.unschedulable],
        "pods": len(snap.pods), "daemon_pods": sum(p.daemon for p in snap.pods),
        "finished_pods": snap.finished,
        "pending": [p.key for p in snap.pods if p.node is None],
        "pinned": [{"pod": snap.pods[i].key, "reason": g.why or ""} for g in P.apps if g.pinned
                   for i in g.pods],
        "unplaceable": [{"pod": snap.pods[i].key, "reason": why} for i, why in P.unplaced],
        "budgets": budgets, "per_node": per_node, "resources": list(snap.resources),
        "objects": dict(sorted(snap.kinds.items())), "skipped": dict(sorted(snap.skipped.items())),
        "ignored": list(P.ignored), "files": list(snap.sources),
    }


def snapshot_lines(facts: dict[str, Any]) -> list[str]:
    """``vbp info``'s text for a snapshot."""
    f = facts
    types = ", ".join(f"{n} {t}" for t, n in f["types"].items())
    rows = [
        ("nodes", f"{f['nodes']:,} ({types}); {len(f['cordoned'])} cordoned"),
        ("pods", f"{f['pods']:,} running or pending ({f['daemon_pods']:,} DaemonSet pods), "
                 f"{len(f['pending']):,} pending, {f['finished_pods']:,} finished (hold nothing)"),
        ("pinned", f"{len(f['pinned']):,} pods stay where they run"
                   + (" (listed below)" if f["pinned"] else "")),
        ("budgets", "; ".join(f"{b['budget']} allows {b['allowed']} at once" for b in f["budgets"])
         or "none"),
        ("resources", ", ".join(f["resources"])),
        ("objects", ", ".join(f"{n:,} {k}" for k, n in f["objects"].items())),
    ]
    if f["unplaceable"]:
        rows.append(("unplaceable", f"{len(f['unplaceable'])} pending pods fit on no node (listed below)"))
    width = max(len(k) for k, _ in rows)
    out = [f"{k.ljust(width)}  {v}" for k, v in rows]
    head = ["node", "type"] + [f"{r} req/alloc" for r in SHOWN]
    table = [head]
    for n in f["per_node"]:
        cells = [n["node"] + (" (cordoned)" if n["cordoned"] else ""), n["type"]]
        for r in SHOWN:
            cells.append(f"{_num(r, n['requested'][r])}/{_num(r, n['allocatable'][r])}")
        table.append(cells)
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    out += ["", *("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
                  for row in table)]
    out += [f"  pending: {x}" for x in f["pending"]]
    for what, key in (("pinned", "pinned"), ("pending, fits nowhere", "unplaceable")):
        out += [f"  {what}: {x['pod']}: {x['reason']}" for x in f[key]]
    out += [f"  ignored: {x}" for x in f["ignored"]]
    return out


def _num(resource: str, value: float) -> str:
    return f"{value:.3g}" if resource != "pods" else f"{value:g}"


__all__ = ["SHOWN", "show", "snapshot_facts", "snapshot_lines"]
