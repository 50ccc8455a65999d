"""What a consolidation says: the nodes to remove and add, the evictions, their waves, the proof.

:func:`consolidation_of` turns a checked solution of a :class:`~packing.cluster.problem.ClusterProblem`
into a :class:`Consolidation`; its :meth:`~Consolidation.to_dict` is the ``"result"`` of JSON
``vbp-consolidate/2`` (``docs/schemas/vbp-consolidate-2.json``). Baselines (what an autoscaler
would do) are :class:`Outcome` rows of the same shape.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from packing.cluster.problem import ClusterProblem
from packing.cluster.waves import Waves, plan_waves


@dataclass(frozen=True)
class Eviction:
    """One pod that moves: ``pod`` in ``namespace`` from node ``from_`` to node ``to``."""

    pod: str
    namespace: str
    from_: str
    to: str

    def to_dict(self) -> dict[str, str]:
        """``{"pod", "namespace", "from", "to"}``."""
        return {"pod": self.pod, "namespace": self.namespace, "from": self.from_, "to": self.to}


@dataclass(frozen=True)
class Outcome:
    """A solution of a consolidation problem, by any method, measured.

    Attributes:
        name: who found it (``vbp``, ``cluster-autoscaler``, ``karpenter``).
        cost_after: the price of the nodes kept and added.
        nodes_after: nodes kept plus nodes added.
        removed: names of the nodes removed.
        added: the new nodes (``<type>-new-<k>``) and their types.
        moves: pods evicted.
        x: the solution, shape ``(A, H)``.
        note: how it was found, in a few words.
    """

    name: str
    cost_after: float
    nodes_after: int
    removed: tuple[str, ...]
    added: tuple[tuple[str, str], ...]
    moves: int
    x: np.ndarray = field(repr=False, compare=False)
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The row as JSON data (``removed`` and ``added`` as in :meth:`Consolidation.to_dict`)."""
        return {"name": self.name, "cost_after": self.cost_after, "nodes_after": self.nodes_after,
                "removed": list(self.removed), "added": [{"node": n, "type": t} for n, t in self.added],
                "moves": self.moves, "note": self.note}


def outcome(problem: ClusterProblem, x: np.ndarray, name: str, note: str = "") -> Outcome:
    """Measure a solution: cost, nodes, removed and added nodes, moves."""
    P = problem
    used = P.used(x)
    removed = tuple(P.host_names[h] for h in np.flatnonzero(P.existing & ~used).tolist())
    added = tuple((P.host_names[h], P.host_type[h]) for h in np.flatnonzero(~P.existing & used).tolist())
    return Outcome(name, P.cost(x), int(used.sum()), removed, added, P.moves(x), x, note)


@dataclass(frozen=True)
class Consolidation:
    """The answer of ``vbp consolidate``.

    Attributes:
        status: ``optimal`` (the cost is proven least with the move budget), ``feasible`` (with
            the proven ``bound``), ``infeasible`` (with the ``reason``), ``unknown``.
        cost_before: the price of every node now (nodes, without prices).
        cost_after: the price of the nodes kept and added (``None`` without a solution).
        nodes_before: nodes now.
        nodes_after: nodes after.
        bound: a proven lower bound on the least cost reachable with the move budget.
        max_moves: the move budget (``None``: none).
        moves: pods evicted.
        removed: nodes to remove.
        added: nodes to add (``<type>-new-<k>``) and their types.
        evictions: every pod that moves.
        waves: the evictions in order (indices into ``evictions``), each wave within every
            PodDisruptionBudget.
        placed: Pending pods and the node each goes to: ``(namespace/pod, node)``.
        unplaced: Pending pods no node can take: ``(namespace/pod, reason)``.
        pinned: pods that stay where they run: ``(namespace/pod, reason)``.
        reason: why, when infeasible or unknown.
        proofs: which part found the solution and which proved the bound.
        seconds: wall time.
        outcome: the solution measured.
        baselines: what autoscalers would do, measured the same way.
    """

    status: str
    cost_before: float
    cost_after: float | None
    nodes_before: int
    nodes_after: int | None
    bound: float
    max_moves: int | None
    moves: int
    removed: tuple[str, ...] = ()
    added: tuple[tuple[str, str], ...] = ()
    evictions: tuple[Eviction, ...] = ()
    waves: tuple[tuple[int, ...], ...] = ()
    placed: tuple[tuple[str, str], ...] = ()
    unplaced: tuple[tuple[str, str], ...] = ()
    pinned: tuple[tuple[str, str], ...] = ()
    reason: str | None = None
    proofs: Mapping[str, str] = field(default_factory=dict)
    seconds: float = 0.0
    outcome: Outcome | None = field(default=None, repr=False, compare=False)
    baselines: tuple[Outcome, ...] = ()

    @property
    def gap(self) -> float | None:
        """``(cost_after - bound) / cost_after`` (0 when both are 0; ``None`` without a solution)."""
        if self.cost_after is None:
            return None
        if self.cost_after <= 0:
            return 0.0
        return max(0.0, (self.cost_after - self.bound) / self.cost_after)

    def to_dict(self) -> dict[str, Any]:
        """As JSON data (the body of ``vbp-consolidate/2``)."""
        return {
            "status": self.status, "cost_before": self.cost_before, "cost_after": self.cost_after,
            "nodes_before": self.nodes_before, "nodes_after": self.nodes_after,
            "bound": self.bound if math.isfinite(self.bound) else None, "gap": self.gap,
            "max_moves": self.max_moves, "moves": self.moves, "removed": list(self.removed),
            "added": [{"node": n, "type": t} for n, t in self.added],
            "evictions": [e.to_dict() for e in self.evictions],
            "waves": [list(w) for w in self.waves],
            "placed": [{"pod": p, "node": n} for p, n in self.placed],
            "unplaced": [{"pod": p, "reason": r} for p, r in self.unplaced],
            "pinned": [{"pod": p, "reason": r} for p, r in self.pinned],
            "reason": self.reason, "proofs": dict(self.proofs), "seconds": self.seconds,
            "baselines": [b.to_dict() for b in self.baselines],
        }


def consolidation_of(problem: ClusterProblem, x: np.ndarray | None, *, status: str, bound: float,
                     max_moves: int | None, reason: str | None = None,
                     proofs: Mapping[str, str] | None = None, seconds: float = 0.0,
                     waves: Waves | None = None, baselines: Sequence[Outcome] = ()) -> Consolidation:
    """The answer for solution ``x`` (checked by the caller), its moves in waves."""
    P = problem
    pods = P.snapshot.pods
    pinned = tuple((pods[i].key, g.why or "pinned") for g in P.apps if g.pinned for i in g.pods)
    unplaced = tuple((pods[i].key, why) for i, why in P.unplaced)
    base: dict[str, Any] = {
        "cost_before": P.cost_before, "nodes_before": P.nodes_before, "max_moves": max_moves,
        "pinned": pinned, "unplaced": unplaced, "reason": reason, "proofs": dict(proofs or {}),
        "seconds": seconds, "baselines": tuple(baselines)}
    if x is None:
        return Consolidation(status, cost_after=None, nodes_after=None, bound=bound, moves=0, **base)
    w = waves if waves is not None else plan_waves(P, x)
    idx: dict[int, int] = {}
    evictions: list[Eviction] = []
    placed: list[tuple[str, str]] = []
    for k, mv in enumerate(w.moves):
        # a problem from a planning instance has containers, not pods: "<app>[<i>]"
        ns, name = ((pods[mv.pod].namespace, pods[mv.pod].name) if pods
                    else ("", f"{P.apps[mv.app].name}[{mv.pod}]"))
        if mv.src >= 0:
            idx[k] = len(evictions)
            evictions.append(Eviction(name, ns, P.host_names[mv.src], P.host_names[mv.dst]))
        else:
            placed.append((f"{ns}/{name}" if ns else name, P.host_names[mv.dst]))
    waves_e = tuple(t for t in (tuple(idx[k] for k in wave if k in idx) for wave in w.waves) if t)
    o = outcome(P, x, "vbp")
    return Consolidation(status, cost_after=o.cost_after, nodes_after=o.nodes_after, bound=bound,
                         moves=o.moves, removed=o.removed, added=o.added, evictions=tuple(evictions),
                         waves=waves_e, placed=tuple(placed), outcome=o, **base)


@dataclass(frozen=True)
class ConsolidateResult:
    """``vbp consolidate``'s answer: one :class:`Consolidation` per move budget.

    Attributes:
        problem: the cluster as a consolidation problem.
        answers: per budget, in the order asked.
        source: the snapshot read.
    """

    problem: ClusterProblem
    answers: tuple[Consolidation, ...]
    source: str

    def to_dict(self) -> dict[str, Any]:
        """As JSON data: ``vbp-consolidate/2`` without ``format`` (``docs/schemas``)."""
        P = self.problem
        snap = P.snapshot
        return {"path": self.source, "priced": P.priced, "replace": bool(P.offers),
                "nodes": len(snap.nodes), "pods": len(snap.pods),
                "daemon_pods": sum(p.daemon for p in snap.pods),
                "results": [a.to_dict() for a in self.answers]}


def parse_budgets(text: str | int | None | Sequence[int | None]) -> tuple[int | None, ...]:
    """Move budgets: ``5``, ``"0,5,20"``, ``"all"`` (no limit), ``None`` (no limit) or a list.

    Raises:
        InputError: a budget that is not a whole number >= 0 or ``all``.
    """
    from packing.errors import input_error

    if text is None or isinstance(text, int):
        items: list[Any] = [text]
    elif isinstance(text, str):
        items = [s.strip() for s in text.split(",")]
    else:
        items = list(text)
    out: list[int | None] = []
    for s in items:
        if s is None or (isinstance(s, str) and s.lower() in ("all", "none", "")):
            out.append(None)
        elif isinstance(s, int) and not isinstance(s, bool) and s >= 0:
            out.append(s)
        elif isinstance(s, str) and s.isdigit():
            out.append(int(s))
        else:
            raise input_error("--max-moves", str(text), f"expected whole numbers >= 0 or all, got {s!r}")
    return tuple(out)


__all__ = ["ConsolidateResult", "Consolidation", "Eviction", "Outcome", "consolidation_of",
           "outcome", "parse_budgets"]
