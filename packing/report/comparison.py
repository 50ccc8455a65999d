"""Policies against an optimum: one summary row per policy over its runs, and its excess over the optimum.

The numbers come from :class:`packing.sim.evaluation.RunRecord` (that is, from
:mod:`packing.feasibility.metrics`);
the optimum is any solve result with ``objective`` and ``objective_kind`` (``"hosts"``, ``"cost"``
or ``"deployed"``, :class:`solvers.result.SolveResult`). ``vbp compare`` prints these rows and
``vbp sweep --optimum`` writes the excess of every run.

The excess is not a gap: a gap (:attr:`solvers.result.SolveResult.gap`, ``vbp solve``, ``vbp plan``)
is ``(value - bound) / value``, how far a result may be from the optimum (a proof); the excess is
``(value - optimum) / optimum``, how much more a policy uses than the optimum found.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from packing.sim.evaluation import RunRecord


def json_number(x: float | None) -> float | None:
    """``x`` for a JSON report: rounded to 6 decimals; ``None`` for none, ``nan`` or infinity."""
    return None if x is None or not math.isfinite(x) else round(float(x), 6)


def excess(optimum: float | None, kind: str, *, hosts: float, cost: float, deployed: float) -> float | None:
    """The excess of a result over the optimum, relative to the optimum, in the optimum's unit.

    Args:
        optimum: the optimum's objective (``None``: none found).
        kind: the objective: ``"hosts"``, ``"cost"`` or ``"deployed"`` (maximised).
        hosts: hosts the result uses.
        cost: cost of those hosts.
        deployed: containers the result places.

    Returns:
        ``(value - optimum) / optimum`` (``(optimum - deployed) / optimum`` for ``"deployed"``),
        where value is ``cost`` for ``"cost"`` and ``hosts`` otherwise; ``None`` without a
        positive optimum.
    """
    if optimum is None or optimum <= 0:
        return None
    if kind == "deployed":
        return (optimum - deployed) / optimum
    return ((cost if kind == "cost" else hosts) - optimum) / optimum


@dataclass(frozen=True)
class ComparisonRow:
    """One policy's line of a comparison: means over its runs and the excess over the optimum.

    Every arrival of a run is counted once: ``deployed_mean + rejected_mean + waiting_mean +
    departed_mean`` is the number of arrivals plus the snapshot's containers (which count as
    deployed) (``rejected``: no host could take it; ``waiting``:
    the policy chose WAIT, or the container fit nowhere with ``wait_when_full``, and no departure
    let it in before the end). On an autoscaled pool (:mod:`packing.sim.autoscale`) the row also
    has the means of the pool's peak nodes, node-hours and node cost (``None`` on a fixed pool).
    """

    name: str
    hosts_mean: float
    hosts_min: int
    hosts_max: int
    cost_mean: float
    allocation_mean: float
    rejected_mean: float
    excess: float | None
    deployed_mean: float = 0.0
    waiting_mean: float = 0.0
    departed_mean: float = 0.0
    allocation_by_resource_mean: dict[str, float] = field(default_factory=dict)
    nodes_peak_mean: float | None = None
    node_hours_mean: float | None = None
    node_cost_mean: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of the row (names as in ``docs/outputs.md``; the pool's only when autoscaled)."""
        pool = {} if self.node_hours_mean is None else {
            "nodes_peak_mean": self.nodes_peak_mean, "node_hours_mean": json_number(self.node_hours_mean),
            "node_cost_mean": json_number(self.node_cost_mean)}
        base = {"name": self.name, "hosts_mean": self.hosts_mean, "hosts_min": self.hosts_min,
                "hosts_max": self.hosts_max, "cost_mean": self.cost_mean,
                "allocation_mean": json_number(self.allocation_mean),
                "deployed_mean": self.deployed_mean, "rejected_mean": self.rejected_mean,
                "waiting_mean": self.waiting_mean, "departed_mean": self.departed_mean,
                "excess": json_number(self.excess),
                "allocation_by_resource_mean": {k: json_number(v) for k, v in
                                                self.allocation_by_resource_mean.items()}}
        return {**base, **pool}


def summarise(name: str, records: Sequence[RunRecord], optimum: float | None, kind: str) -> ComparisonRow:
    """One policy's row from its runs (one record per order or snapshot).

    Args:
        name: the row's name.
        records: the policy's runs, at least one.
        optimum: the optimum's objective (``None``: none found).
        kind: the optimum's objective (see :func:`excess`); the excess is of the mean hosts, mean cost
            or mean deployed.
    """
    runs = len(records)
    hosts = [r.hosts for r in records]
    mean = sum(hosts) / runs
    cost = sum(r.cost for r in records) / runs
    deployed = float(sum(r.deployed for r in records) / runs)
    return ComparisonRow(name, mean, min(hosts), max(hosts), cost,
                         float(sum(r.allocation for r in records) / runs),
                         float(sum(r.rejected for r in records) / runs),
                         excess(optimum, kind, hosts=mean, cost=cost, deployed=deployed), deployed,
                         float(sum(r.waiting for r in records) / runs),
                         float(sum(r.departed for r in records) / runs),
                         {k: float(sum(r.allocation_by_resource.get(k, 0.0) for r in records) / runs)
                          for k in records[0].allocation_by_resource},
                         *_pool_means(records))


def _pool_means(records: Sequence[RunRecord]) -> tuple[float | None, ...]:
    """Means of the pool's ``nodes_peak``, ``node_hours``, ``node_cost`` (``None`` on a fixed pool)."""
    runs = [r for r in records if r.node_hours is not None]
    if not runs:
        return (None, None, None)
    return tuple(float(sum(getattr(r, k) for r in runs) / len(runs))
                 for k in ("nodes_peak", "node_hours", "node_cost"))


__all__ = ["ComparisonRow", "excess", "json_number", "summarise"]
