"""The facts that describe an instance: :meth:`Instance.summary` plus names, sources and rule counts."""

from __future__ import annotations

from typing import Any

from packing.model.instance import Instance


def describe(inst: Instance, path: str) -> dict[str, Any]:
    """The facts ``vbp info --json`` prints about ``inst``, read from ``path``.

    Adds to :meth:`packing.model.instance.Instance.summary`: the path and source, resource and host type
    names, requests with a departure, apps restricted to some host types, host types with labels
    or taints, apps with domain caps or spread rules, and the Kubernetes facts of an instance
    read from manifests (``k8s``) or from a cluster snapshot (``snapshot``), and the host types
    given without a count (``uncounted``: one host per container, as many as needed).
    """
    d = dict(inst.summary())
    d["path"] = path
    d["source"] = inst.meta.get("source")
    d["resource_names"] = list(inst.resources)
    d["host_type_names"] = [t.name for t in inst.host_types]
    d["requests_with_end"] = sum(1 for q in inst.requests if q.end is not None)
    ok = inst.type_allowed
    d["restricted_apps"] = 0 if ok is None else int((~ok).any(axis=1).sum())
    d["labelled_host_types"] = sum(1 for t in inst.host_types if t.labels or t.taints)
    d["domain_capped_apps"] = sum(1 for a in inst.apps if a.domain_caps)
    d["spread_apps"] = sum(1 for a in inst.apps if a.spreads)
    d["uncounted"] = list(inst.meta.get("uncounted") or ())  # host types as many as needed
    for key in ("k8s", "snapshot"):
        if isinstance(inst.meta.get(key), dict):
            d[key] = inst.meta[key]
    return d


__all__ = ["describe"]
