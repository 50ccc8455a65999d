"""``vbp.consolidate``: which nodes of a running cluster to remove (and add), with proof and waves.

The orchestration only: the snapshot is read by :mod:`packing.loaders.snapshot`, the problem built
by :mod:`packing.cluster.problem`, each move budget solved by :mod:`solvers.consolidate` (the
budgets in increasing order, each from the answer before: more moves never cost more), and the
autoscalers' answers (:mod:`policies.autoscalers`) measured beside it. Their answers with no move
limit also join the climb where their moves fit, so vbp's answer with enough moves is never dearer
than theirs.

Example:
    >>> import vbp
    >>> r = vbp.consolidate("cluster.yaml", ["m5.large=2c8g:price=0.096"], max_moves=10)  # doctest: +SKIP
    >>> a = r.answers[0]; (a.cost_before, a.cost_after, a.bound, a.removed)  # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from packing.cluster.answer import ConsolidateResult, parse_budgets
from packing.plan.model import HostOffer


def consolidate(snapshot: str | Path, hosts: str | Sequence[str | Path | HostOffer] = (), *,
                max_moves: str | int | None | Sequence[int | None] = None, replace: bool = False,
                time_limit: float = 60.0, threads: int = 2, seed: int = 0,
                type_label: str | None = None, baselines: bool = True,
                stop: Any = None, progress: Callable[[str], None] | None = None) -> ConsolidateResult:
    """Consolidate the cluster of a snapshot (see ``docs/consolidate.md``).

    Args:
        snapshot: ``kubectl get nodes,pods,pdb -A -o yaml`` (or json) output: a file or folder.
        hosts: host types: prices by node type (without prices nodes are counted), and with
            ``replace`` the types new nodes may be of.
        max_moves: the move budget(s): a number, ``"0,5,20"``, ``"all"`` or ``None`` (no limit).
        replace: new nodes of the host types may be added (m -> n consolidation).
        time_limit: seconds for the autoscalers' answers with no move limit (which start the
            climb where their moves fit) and the climb of the ladder of budgets to no limit (a
            lower budget stops earlier; :func:`solvers.consolidate.solve.consolidate_budgets`);
            the climb's deterministic work is the whole time limit.
        threads: CP-SAT workers.
        seed: seeds the search.
        type_label: the node label naming node types (default ``node.kubernetes.io/instance-type``).
        baselines: add cluster-autoscaler's and Karpenter's answers to each result.
        stop: a :class:`solvers.StopFlag` that ends the search early.
        progress: called with one line per rung of the ladder climbed.

    Raises:
        InputError: a bad snapshot, host types, budget, or a node type without a price.
    """
    from packing.cluster.problem import build_problem
    from packing.loaders.host_types import load_hosts
    from packing.loaders.snapshot import read_snapshot
    from policies.autoscalers import cluster_autoscaler, karpenter
    from solvers.base import check_run_options
    from solvers.consolidate.solve import consolidate_budgets, verify

    check_run_options(time_limit, threads, seed, workers_name="threads")
    budgets = parse_budgets(max_moves)
    offers = load_hosts(hosts) if hosts else ()
    if replace and not offers:
        from packing.errors import input_error

        raise input_error("--replace", "", "needs --hosts: the host types new nodes may be of")
    problem = build_problem(read_snapshot(snapshot, type_label), offers, replace=replace)
    t0 = time.perf_counter()
    # the autoscalers' answers with no move limit start the climb's rung where their moves fit
    # (the same starts whatever budgets are asked: more moves never cost more across runs)
    free: dict[int | None, tuple[Any, ...]] = {
        None: (cluster_autoscaler(problem, None), karpenter(problem, None))}
    left = max(0.5 * time_limit, time_limit - (time.perf_counter() - t0))
    answers = consolidate_budgets(problem, budgets, time_limit=left, threads=threads, seed=seed,
                                  stop=stop, progress=progress, work=time_limit,
                                  starts=[o.x for o in free[None]])
    if baselines:
        answers = [dataclasses.replace(a, baselines=free.get(b) or (
            cluster_autoscaler(problem, b), karpenter(problem, b)))
            for a, b in zip(answers, budgets, strict=True)]
        bad = [f"{o.name}: {v}" for a, b in zip(answers, budgets, strict=True) if a.status != "infeasible"
               for o in a.baselines for v in verify(problem, o.x, b)[:1]]
        if bad:  # every placement goes through the one checker, the baselines' too
            raise RuntimeError(f"consolidate: a baseline breaks the rules: {bad[:3]}")
    return ConsolidateResult(problem, tuple(answers), str(snapshot))


__all__ = ["ConsolidateResult", "consolidate"]
