"""Cheap explanations of why an instance has no placement of all its containers.

:func:`explain_infeasibility` returns sentences that name the app, the resource or the rule. Every
reason is a proof: an instance with a reason has no placement that places every container and
that :func:`packing.feasibility.checker.check` accepts. An empty list means no cheap reason was found, not
that the instance is feasible. Comparisons of demand with capacity use
:func:`packing.feasibility.predicates.fits`, the one capacity logic.
"""

from __future__ import annotations

import math

import numpy as np

from packing.feasibility.bounds import fewest_hosts, lower_bounds, per_host_max, slack
from packing.feasibility.predicates import fits
from packing.model.instance import App, HostType, Instance
from packing.model.node_labels import shown
from packing.model.selection import reasons
from packing.model.topology import HOSTNAME, cap_shortfalls

MAX_TYPES_NAMED = 3
"""At most this many host types are named when saying why an app fits none."""


def type_problems(inst: Instance, app: App, t: HostType) -> list[str]:
    """Why one container of ``app`` cannot run on a host of type ``t`` (empty: it can).

    Each reason names the failing predicate: a resource with both amounts (``cpu 5 > 4``), the
    node selector or affinity not matched, the untolerated taint, a spread's ``topologyKey`` the
    type has no label for (with the labels it has), GPU cards and models.
    """
    out: list[str] = []
    for r, name in enumerate(inst.resources):
        if not fits(app.demand[r], t.capacity[r]):
            out.append(f"{name} {app.demand[r]:g} > {t.capacity[r]:g}")
    if app.gpu_models and t.gpu_model not in app.gpu_models:
        out.append(f"GPU model {t.gpu_model!r} not in {list(app.gpu_models)}")
    out += reasons(app.node_selector, app.node_affinity, app.tolerations, t.labels, t.taints)
    for key, _ in app.spreads:
        if key != HOSTNAME and key not in dict(t.labels):
            out.append(f"its topology spread over {key} needs that label; the type has "
                       f"{shown(t.name, t.labels)}")
    if app.gpu_cards:
        if t.gpus < app.gpu_cards:
            out.append(f"{t.gpus} GPU cards < {app.gpu_cards}")
        elif not app.gpu_whole:
            for g, name in enumerate(inst.gpu_resources):
                if not fits(app.gpu_per_card[g], t.gpu_capacity[g]):
                    out.append(f"{name} share {app.gpu_per_card[g]:g} per card > card "
                               f"capacity {t.gpu_capacity[g]:g}")
    return out


def _fits_nowhere(inst: Instance, i: int) -> str | None:
    app = inst.apps[i]
    if not inst.host_types:
        return f"app {app.name!r}: the instance has no host types"
    why = [(t, type_problems(inst, app, t)) for t in inst.host_types]
    if any(not p for _, p in why):
        return None
    # a single resource that no host type has enough of says it best
    for r, name in enumerate(inst.resources):
        largest = max(t.capacity[r] for t in inst.host_types)
        if not fits(app.demand[r], largest):
            return (f"app {app.name!r}: a container needs {app.demand[r]:g} of {name!r}, but the "
                    f"largest host type has {largest:g}")
    if app.gpu_models and not any(t.gpu_model in app.gpu_models for t in inst.host_types):
        have = sorted({str(t.gpu_model) for t in inst.host_types if t.gpus})
        return (f"app {app.name!r}: accepts GPU models {list(app.gpu_models)}, but the host "
                f"types have {have}")
    if app.gpu_cards:
        most = max(t.gpus for t in inst.host_types)
        if most < app.gpu_cards:
            return (f"app {app.name!r}: a container needs {app.gpu_cards} GPU cards, but no host "
                    f"type has more than {most}")
    return f"app {app.name!r}: a container fits no host type: {refusals(inst, i)}"


def refusals(inst: Instance, i: int, shown_types: int = MAX_TYPES_NAMED) -> str:
    """Per host type, why a container of app ``i`` cannot run there: ``std (cpu 5 > 4), ...``.

    At most ``shown_types`` types are named (then how many more); a type that admits the app
    reads ``fits``.
    """
    app = inst.apps[i]
    why = [(t, type_problems(inst, app, t)) for t in inst.host_types]
    parts = [f"{t.name} ({'; '.join(p) or 'fits'})" for t, p in why[:shown_types]]
    more = len(why) - shown_types
    return ", ".join(parts) + (f" and {more} more" if more > 0 else "")


def _cap_source(inst: Instance, i: int) -> str:
    """Name what sets the effective cap of app ``i`` (max_per_host or a self-rule)."""
    app = inst.apps[i]
    cap = int(inst.cap[i])
    for r in inst.rules:
        if r.a == r.b == app.name and r.k == cap:
            return f"self-rule <{app.name}, {app.name}, {r.k}>"
    if app.max_per_host is not None and app.max_per_host == cap:
        return f"max_per_host = {cap}"
    return f"at most {cap} per host"


def explain_infeasibility(instance: Instance) -> list[str]:
    """Reasons why not every container of ``instance`` can be placed (empty: none found).

    Checks, in order: containers that fit no host type (naming the resource, the demand and the
    largest capacity, or the GPU cards, shares and models), apps whose cap is 0, apps needing
    more hosts than can run them (``ceil(count / cap)``, naming the cap or self-rule), apps whose
    domain caps leave too little room (:func:`packing.model.topology.cap_shortfalls`), cliques of
    mutually exclusive apps needing more hosts than exist, GPU cards, and total demand per
    resource above the total capacity.

    Args:
        instance: the instance.

    Returns:
        One sentence per reason.
    """
    inst = instance
    out: list[str] = []
    nowhere: set[int] = set()
    for i, app in enumerate(inst.apps):
        if app.count == 0:
            continue
        msg = _fits_nowhere(inst, i)
        if msg is not None:
            out.append(msg)
            nowhere.add(i)
            continue
        if inst.cap[i] == 0:
            src = _cap_source(inst, i)
            out.append(f"app {app.name!r}: {src} allows no container on any host, but it has "
                       f"{app.count}")
            nowhere.add(i)
    if not inst.host_types:
        return out
    m = per_host_max(inst)
    for i, app in enumerate(inst.apps):
        if app.count == 0 or i in nowhere:
            continue
        need = fewest_hosts(float(app.count), m[i], inst.type_count, inst.n_hosts)
        if need > inst.n_hosts:
            nowhere.add(i)
            hosts_ok = int(inst.type_count[m[i] > 0].sum())
            cap = int(inst.cap[i])
            if cap < app.count and math.ceil(app.count / cap) > inst.n_hosts:
                out.append(f"app {app.name!r}: {app.count} containers with {_cap_source(inst, i)}"
                           f" need at least {math.ceil(app.count / cap)} hosts, but there are "
                           f"{inst.n_hosts}")
            else:
                most = int(m[i].max())
                out.append(f"app {app.name!r}: {app.count} containers, at most {most} per host "
                           f"(by its cap {cap}, host capacity and GPU cards) need more than the "
                           f"{hosts_ok} hosts that can run it")
    out += cap_shortfalls(inst, m)
    lb = lower_bounds(inst)
    if lb.clique > inst.n_hosts and len(lb.clique_apps) > 1 and not nowhere:
        names = ", ".join(repr(a) for a in lb.clique_apps)
        out.append(f"apps {names} pairwise may not share a host (exclusions or rules with k = 0) "
                   f"and together need at least {lb.clique} hosts, but there are {inst.n_hosts}")
    if lb.gpu > inst.n_hosts and not nowhere:
        cards = int(inst.host_gpus.sum())
        out.append(f"GPU apps need at least {lb.gpu_cards} GPU cards on at most "
                   f"{inst.n_hosts} hosts, but the hosts have {cards} cards")
    total = (inst.counts[:, None] * inst.demand).sum(axis=0) if inst.n_apps else np.zeros(
        inst.n_resources)
    capacity = (inst.type_count[:, None] * inst.type_capacity).sum(axis=0)
    # compare with the capacity plus each host's tolerance, as the checker allows
    allowed = (inst.type_count[:, None] * slack(inst.type_capacity)).sum(axis=0)
    for r, name in enumerate(inst.resources):
        if total[r] > allowed[r]:
            out.append(f"resource {name!r}: total demand {total[r]:g} exceeds the total "
                       f"capacity {capacity[r]:g} of all {inst.n_hosts} hosts")
    return out


__all__ = ["explain_infeasibility", "refusals", "type_problems"]
