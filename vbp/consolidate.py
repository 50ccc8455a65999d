"""``vbp.consolidate``: which nodes of a running cluster to remove (and add), with proof and waves.

The orchestration only: the snapshot is read by :mod:`packing.loaders.snapshot`, the problem built
by :mod:`packing.cluster.problem`, each move budget solved by :mod:`solvers.consolidate` (the
budgets in increasing order, each from the answer before: more moves never cost more), and the
autoscalers' answers (:mod:`policies.autoscalers`) measured beside it.

Example:
    >>> import vbp
    >>> r = vbp.consolidate("cluster.yaml", ["m5.large=2c8g:price=0.096"], max_moves=10)  # doctest: +SKIP
    >>> a = r.answers[0]; (a.cost_before, a.cost_after, a.bound, a.removed)  # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packing.cluster.answer import Consolidation
from packing.cluster.problem import ClusterProblem
from packing.plan.model import HostOffer


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
        """As JSON data (``vbp-consolidate/1`` without ``format``)."""
        P = self.problem
        snap = P.snapshot
        return {"snapshot": self.source, "priced": P.priced, "replace": bool(P.offers),
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


def consolidate(snapshot: str | Path, hosts: str | Sequence[str | Path | HostOffer] = (), *,
                max_moves: str | int | None | Sequence[int | None] = None, replace: bool = False,
                time_limit: float = 60.0, threads: int = 2, seed: int = 0,
                type_label: str | None = None, baselines: bool = True,
                stop: Any = None) -> ConsolidateResult:
    """Consolidate the cluster of a snapshot (see ``docs/consolidate.md``).

    Args:
        snapshot: ``kubectl get nodes,pods,pdb -A -o yaml`` (or json) output: a file or folder.
        hosts: host types: prices by node type (without prices nodes are counted), and with
            ``replace`` the types new nodes may be of.
        max_moves: the move budget(s): a number, ``"0,5,20"``, ``"all"`` or ``None`` (no limit).
        replace: new nodes of the host types may be added (m -> n consolidation).
        time_limit: per budget, seconds.
        threads: CP-SAT workers.
        seed: seeds the search.
        type_label: the node label naming node types (default ``node.kubernetes.io/instance-type``).
        baselines: add cluster-autoscaler's and Karpenter's answers to each result.
        stop: a :class:`solvers.StopFlag` that ends the search early.

    Raises:
        InputError: a bad snapshot, host types, budget, or a node type without a price.
    """
    from packing.cluster.problem import build_problem
    from packing.loaders.host_types import load_hosts
    from packing.loaders.snapshot import read_snapshot
    from policies.autoscalers import cluster_autoscaler, karpenter
    from solvers.base import check_run_options
    from solvers.consolidate.solve import consolidate_budgets

    check_run_options(time_limit, threads, seed, workers_name="threads")
    budgets = parse_budgets(max_moves)
    offers = load_hosts(hosts) if hosts else ()
    if replace and not offers:
        from packing.errors import input_error

        raise input_error("--replace", "", "needs --hosts: the host types new nodes may be of")
    problem = build_problem(read_snapshot(snapshot, type_label), offers, replace=replace)
    answers = consolidate_budgets(problem, budgets, time_limit=time_limit, threads=threads,
                                  seed=seed, stop=stop)
    if baselines:
        answers = [dataclasses.replace(a, baselines=(cluster_autoscaler(problem, b), karpenter(problem, b)))
                   for a, b in zip(answers, budgets, strict=True)]
    return ConsolidateResult(problem, tuple(answers), str(snapshot))


__all__ = ["ConsolidateResult", "consolidate", "parse_budgets"]
