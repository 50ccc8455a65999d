"""The independent feasibility checker: every placement any solver, policy or agent returns goes here.

``check(instance, placement)`` rebuilds the cluster state from the placement alone and applies the
predicates of :mod:`packing.feasibility.predicates` to it. It trusts nothing the producer of the placement
computed.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from packing.feasibility.predicates import ClusterState, fits, over_cap, rule_broken
from packing.model import topology
from packing.model.instance import UNPLACED, Instance, Placement
from packing.model.selection import reasons

KINDS = (
    "unknown_app",
    "count",
    "unknown_host",
    "unplaced",
    "capacity",
    "gpu_assignment",
    "gpu_card",
    "gpu_model",
    "node_selection",
    "anti_affinity",
    "exclusion",
    "rule",
    "domain_cap",
    "spread",
)
"""Every kind of violation the checker reports."""


@dataclass(frozen=True)
class Violation:
    """One broken constraint.

    Attributes:
        kind: one of :data:`KINDS`.
        message: a sentence naming the host, app, resource or rule involved.
        host: global host index, if the violation is on a host.
        app: app name, if one app is involved.
        other: the other app of a rule or exclusion.
        resource: resource name for capacity violations.
    """

    kind: str
    message: str
    host: int | None = None
    app: str | None = None
    other: str | None = None
    resource: str | None = None

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


def check(instance: Instance, placement: Placement, *, require_all: bool = False) -> list[Violation]:
    """All violations of ``placement`` on ``instance`` (empty list: feasible).

    Args:
        instance: the instance.
        placement: where each container is.
        require_all: also report every unplaced container (as kind ``"unplaced"``, one per app).

    Returns:
        The violations, grouped by kind in the order of :data:`KINDS`.
    """
    inst = instance
    out: list[Violation] = []
    idx = inst.app_index
    for name in placement.hosts:
        if name not in idx:
            out.append(Violation("unknown_app", f"placement names app {name!r}, which the "
                                 "instance does not have", app=name))
    for app in inst.apps:
        hs = placement.hosts.get(app.name, ())
        if app.name in placement.hosts and len(hs) != app.count:
            out.append(Violation("count", f"app {app.name!r} has {app.count} containers but "
                                 f"the placement lists {len(hs)}", app=app.name))
    placement = _host_indices(placement, out)
    host_of = placement.host_array(inst)
    bad = (host_of != UNPLACED) & ((host_of < 0) | (host_of >= inst.n_hosts))
    for j in np.flatnonzero(bad):
        a = inst.apps[int(inst.container_app[j])].name
        out.append(Violation("unknown_host", f"a container of app {a!r} is on host "
                             f"{int(host_of[j])}, but hosts are numbered 0..{inst.n_hosts - 1}",
                             app=a))
    if require_all:
        unplaced = np.bincount(inst.container_app[host_of == UNPLACED], minlength=inst.n_apps)
        for i in np.flatnonzero(unplaced):
            out.append(Violation("unplaced", f"{int(unplaced[i])} of {inst.apps[i].count} "
                                 f"containers of app {inst.apps[i].name!r} are not placed",
                                 app=inst.apps[i].name))
    cards_of = _cards(inst, placement, host_of, out)
    st = ClusterState.from_placement(inst, host_of, cards_of)
    _capacity(inst, st, out)
    _gpu(inst, st, host_of, out)
    _counts(inst, st, out)
    _topology(inst, st, out)
    return out


def _host_indices(placement: Placement, out: list[Violation]) -> Placement:
    """``placement`` with every host that is not an index reported and taken as unplaced.

    A host is an ``int`` (a NumPy integer too), as in ``Instance.initial``; a name, ``None``, a
    boolean or a float (``1.5`` would otherwise be read as host 1) is a violation of kind
    ``"unknown_host"``.
    """
    fixed: dict[str, tuple[int, ...]] = {}
    for app, hs in placement.hosts.items():
        if set(map(type, hs)) <= {int}:
            continue
        row = []
        for h in hs:
            if isinstance(h, numbers.Integral) and not isinstance(h, bool):
                row.append(int(h))
                continue
            out.append(Violation("unknown_host", f"a container of app {app!r} is on host {h!r}, "
                                 f"which is not a host index (an int; {UNPLACED} for unplaced)",
                                 app=app))
            row.append(UNPLACED)
        fixed[app] = tuple(row)
    return Placement({**placement.hosts, **fixed}, placement.gpus) if fixed else placement


def is_feasible(instance: Instance, placement: Placement, *, require_all: bool = False) -> bool:
    """Whether :func:`check` finds no violation."""
    return not check(instance, placement, require_all=require_all)


def _cards(
    inst: Instance, placement: Placement, host_of: np.ndarray, out: list[Violation]
) -> list[tuple[int, ...]] | None:
    """Per-container cards, reporting malformed card assignments."""
    if not inst.max_gpus and not any(placement.gpus.values()):
        return None
    cards: list[tuple[int, ...]] = []
    for i, app in enumerate(inst.apps):
        lo = int(inst.offsets[i])
        for j in range(app.count):
            cs = placement.cards_of(app.name, j)
            h = int(host_of[lo + j])
            if h == UNPLACED or not (0 <= h < inst.n_hosts):
                cards.append(())
                continue
            need = app.gpu_cards
            n_cards = int(inst.host_gpus[h])
            valid = tuple(c for c in cs if 0 <= c < n_cards)
            if len(cs) != need or len(set(cs)) != len(cs) or len(valid) != len(cs):
                out.append(Violation(
                    "gpu_assignment",
                    f"container {j} of app {app.name!r} on host {inst.host_names[h]} uses "
                    f"cards {list(cs)}; it needs {need} distinct cards among the host's "
                    f"{n_cards}", host=h, app=app.name))
            cards.append(tuple(dict.fromkeys(valid)))
    return cards


def _capacity(inst: Instance, st: ClusterState, out: list[Violation]) -> None:
    over = ~fits(st.used, st.capacity)
    for h, r in zip(*np.nonzero(over), strict=True):
        out.append(Violation(
            "capacity",
            f"host {inst.host_names[h]} uses {st.used[h, r]:g} of {inst.resources[r]!r}, "
            f"capacity {st.capacity[h, r]:g}", host=int(h), resource=inst.resources[r]))


def _gpu(inst: Instance, st: ClusterState, host_of: np.ndarray, out: list[Violation]) -> None:
    if inst.max_gpus:
        over = ~fits(st.card_used, st.card_capacity[:, None, :])
        for h, g, r in zip(*np.nonzero(over), strict=True):
            out.append(Violation(
                "gpu_card",
                f"card {g} of host {inst.host_names[h]} is loaded with "
                f"{st.card_used[h, g, r]:g} of {inst.gpu_resources[r]!r}, capacity "
                f"{st.card_capacity[h, r]:g}", host=int(h), resource=inst.gpu_resources[r]))
    if inst.type_allowed is None:
        return
    models: list[Violation] = []
    selection: list[Violation] = []
    for i, app in enumerate(inst.apps):
        hs = host_of[inst.offsets[i] : inst.offsets[i + 1]]
        hs = hs[(hs >= 0) & (hs < inst.n_hosts)]
        ok = st.type_allowed(i)
        for h in np.unique(hs[~ok[hs]]):
            t = inst.host_types[int(inst.host_type_of[h])]
            if app.gpu_models and t.gpu_model not in app.gpu_models:
                models.append(Violation(
                    "gpu_model",
                    f"app {app.name!r} accepts GPU models {list(app.gpu_models)} but runs on host "
                    f"{inst.host_names[h]} with {t.gpu_model!r}", host=int(h), app=app.name))
            else:
                why = reasons(app.node_selector, app.node_affinity, app.tolerations, t.labels,
                              t.taints)
                why += [f"the type has no label {k!r}, which the app's spread needs"
                        for k, _ in app.spreads if k != topology.HOSTNAME
                        and k not in dict(t.labels)]
                selection.append(Violation(
                    "node_selection",
                    f"app {app.name!r} may not run on host {inst.host_names[h]} (type "
                    f"{t.name!r}): {'; '.join(why)}", host=int(h), app=app.name))
    out += models + selection


def _counts(inst: Instance, st: ClusterState, out: list[Violation]) -> None:
    cols = st.col
    tracked = np.flatnonzero(cols >= 0)  # count column c belongs to app tracked[c]
    hosts, col = np.nonzero(st.count)  # (host, count column) with containers, host-major
    over = over_cap(st.count[hosts, col], inst.cap[tracked[col]])
    for c, h in sorted(zip(col[over].tolist(), hosts[over].tolist(), strict=True)):
        i = int(tracked[c])
        out.append(Violation(
            "anti_affinity",
            f"host {inst.host_names[h]} runs {int(st.count[h, c])} containers of app "
            f"{inst.apps[i].name!r}; at most {int(inst.cap[i])} are allowed per host",
            host=int(h), app=inst.apps[i].name))
    ra, rb, rk = inst.rule_arrays
    excl = {frozenset(p) for p in inst.exclusions}
    if not len(ra):
        return
    # a rule <A, B, k> can only break on a host that runs A: pair every rule with those hosts
    by_col = np.argsort(col, kind="stable")
    hosts = hosts[by_col]
    ptr = np.searchsorted(col[by_col], np.arange(st.count.shape[1] + 1))
    ca = cols[ra]
    lens = ptr[ca + 1] - ptr[ca]
    chunk = 20_000_000
    found_h: list[np.ndarray] = []
    found_r: list[np.ndarray] = []
    first = 0
    while first < len(ra):  # rules in groups of at most ``chunk`` (rule, host) pairs
        last = first + max(1, int(np.searchsorted(np.cumsum(lens[first:]), chunk, side="right")))
        n = lens[first:last]
        rr = np.repeat(np.arange(first, last), n)
        pos = ptr[ca[rr]] + np.arange(len(rr)) - np.repeat(np.cumsum(n) - n, n)
        hh = hosts[pos]
        broken = rule_broken(st.count[hh, ca[rr]], st.count[hh, cols[rb[rr]]], rk[rr])
        found_h.append(hh[broken])
        found_r.append(rr[broken])
        first = last
    bh, br = np.concatenate(found_h), np.concatenate(found_r)
    order = np.lexsort((br, bh))  # host by host, rules in instance order
    for h, r in zip(bh[order].tolist(), br[order].tolist(), strict=True):
        an, bn, kk = inst.apps[ra[r]].name, inst.apps[rb[r]].name, int(rk[r])
        nb = int(st.count[h, cols[rb[r]]])
        if kk == 0 and frozenset((an, bn)) in excl:
            out.append(Violation(
                "exclusion", f"host {inst.host_names[h]} runs apps {an!r} and {bn!r}, "
                "which exclude each other", host=int(h), app=an, other=bn))
        else:
            out.append(Violation(
                "rule", f"host {inst.host_names[h]} runs app {an!r} and {nb} containers of "
                f"app {bn!r}; rule <{an}, {bn}, {kk}> allows {kk}",
                host=int(h), app=an, other=bn))


def _topology(inst: Instance, st: ClusterState, out: list[Violation]) -> None:
    """Domain caps and spread (:mod:`packing.model.topology`) on the final state."""
    for b in st.topology_broken():
        out.append(Violation(b.kind, b.message, host=b.host, app=inst.apps[b.app].name))
