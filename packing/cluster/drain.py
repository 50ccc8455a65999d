"""The drain plan of a consolidation: the kubectl commands a person runs, wave by wave.

:func:`kubectl_commands` writes, for one :class:`~packing.cluster.answer.Consolidation`:

1. the new nodes to launch (their node group or provisioner is the cluster's own business: the
   plan names each node's type), then wait until they are Ready;
2. ``kubectl cordon`` every node to remove, so that no evicted pod lands there;
3. per wave, one eviction per pod through the Eviction API (``kubectl create --raw
   .../pods/<pod>/eviction``: the API server refuses an eviction a PodDisruptionBudget does not
   allow, https://kubernetes.io/docs/concepts/scheduling-eviction/api-eviction/), then a wait
   until the pods' controllers run all their pods again (``kubectl rollout status`` for
   Deployments and StatefulSets, else ``kubectl wait --for=condition=Ready`` on the pods' labels);
4. ``kubectl drain`` (DaemonSets left alone) and ``kubectl delete node`` for each removed node.

The scheduler decides where an evicted pod goes; the plan's targets are where vbp found room for
it. With the nodes to remove cordoned, the pods can only go to the nodes that stay, which hold
them all.
"""

from __future__ import annotations

import json
import shlex

from packing.cluster.answer import Consolidation
from packing.cluster.problem import ClusterProblem

WAIT = "10m"
"""The timeout of every wait in the plan."""


def kubectl_commands(problem: ClusterProblem, answer: Consolidation) -> list[str]:
    """The drain plan as shell lines (comments start with ``#``; see the module docstring)."""
    P = problem
    a = answer
    pods = {(p.namespace, p.name): p for p in P.snapshot.pods}
    out = [f"# vbp consolidate: cost {a.cost_before:g} -> {a.cost_after:g} "
           f"({a.status}, bound {a.bound:g}); {len(a.removed)} nodes removed, {len(a.added)} added, "
           f"{len(a.evictions)} pods evicted in {len(a.waves)} wave{'' if len(a.waves) == 1 else 's'}"]
    if a.added:
        out.append("# 1. launch these nodes and wait until they are Ready:")
        out += [f"#    {node}: type {t}" for node, t in a.added]
    if a.removed:
        out.append("# 2. cordon the nodes to remove (no evicted pod lands there)")
        out.append("kubectl cordon " + " ".join(shlex.quote(n) for n in a.removed))
    for k, wave in enumerate(a.waves):
        out.append(f"# 3. wave {k + 1} of {len(a.waves)}: {len(wave)} evictions, then wait")
        waits: dict[str, str] = {}
        for i in wave:
            e = a.evictions[i]
            body = json.dumps({"apiVersion": "policy/v1", "kind": "Eviction",
                               "metadata": {"name": e.pod, "namespace": e.namespace}})
            out.append(f"echo {shlex.quote(body)} | kubectl create --raw "
                       f"/api/v1/namespaces/{e.namespace}/pods/{e.pod}/eviction -f -"
                       f"   # {e.from_} -> {e.to}")
            p = pods.get((e.namespace, e.pod))
            ctrl = p.controller if p is not None else None
            kind, name = (ctrl or "").split("/")[0], (ctrl or "").rsplit("/", 1)[-1]
            if kind in ("Deployment", "StatefulSet"):
                waits[ctrl or ""] = (f"kubectl rollout status -n {e.namespace} {kind.lower()}/{name} "
                                     f"--timeout={WAIT}")
            elif p is not None and p.labels:
                sel = ",".join(f"{k_}={v}" for k_, v in p.labels)
                waits[f"{e.namespace}:{sel}"] = (f"kubectl wait -n {e.namespace} --for=condition=Ready "
                                                 f"pod -l {shlex.quote(sel)} --timeout={WAIT}")
        out += list(waits.values())
    for node in a.removed:
        out.append(f"# 4. remove {node}")
        out.append(f"kubectl drain {shlex.quote(node)} --ignore-daemonsets --delete-emptydir-data "
                   f"--timeout={WAIT}")
        out.append(f"kubectl delete node {shlex.quote(node)}")
    return out


__all__ = ["WAIT", "kubectl_commands"]
