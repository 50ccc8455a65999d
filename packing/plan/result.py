"""What a capacity plan says, per growth scenario and per host type.

Per scenario: the status, hosts, cost, proven bound and gap; per host type the usage
(:class:`~packing.plan.model.TypeUsage`).

Model side only: :func:`summarise` reads any checked placement of a planning instance
(:func:`packing.plan.model.build_instance`) into a :class:`ScenarioResult`; the solving is in
:mod:`solvers.plan.scenario` and the entry point is ``vbp.plan``. The JSON of :meth:`PlanResult.to_dict`
is documented by ``docs/schemas/vbp-plan-3.json``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packing.model.instance import Instance, Placement
from packing.plan.model import HostOffer, TypeUsage, full_capacity, planned_capacity, type_usage

FORMAT = "vbp-plan/3"
"""The ``format`` of :meth:`PlanResult.to_dict` (schema: ``docs/schemas/vbp-plan-3.json``)."""

BOUND_KIND = "lower"
"""A plan minimises hosts or cost: its proven bound is a lower bound."""


@dataclass(frozen=True)
class Replay:
    """What writing a scenario as Kubernetes objects needs besides its instance and placement.

    Attributes:
        offers: the host types offered.
        reserve: per host type (by name), the amount off allocatable per resource (``--reserve``
            plus the DaemonSets it runs, their pod slots included), base units
            (:func:`packing.plan.model.reserved`).
        pods: per app, the workload and its pod template (:attr:`packing.plan.model.Demand.pods`).
    """

    offers: tuple[HostOffer, ...]
    reserve: Mapping[str, Mapping[str, int]]
    pods: Mapping[str, Mapping[str, Any]]


@dataclass(frozen=True)
class ScenarioResult:
    """The plan for one demand multiplier.

    Attributes:
        growth: the demand multiplier (replicas rounded up).
        status: ``"optimal"``, ``"feasible"`` (with a proven gap), ``"infeasible"`` or
            ``"unknown"``.
        objective_kind: what the plan minimises: ``"hosts"`` (no prices) or ``"cost"``
            (``objective`` is a deprecated read-only alias).
        hosts: hosts used (``None`` without a plan).
        cost: total price of the hosts used (``None`` without prices or without a plan).
        bound: proven lower bound on the objective (hosts or cost).
        gap: ``(value - bound) / value`` of the objective (0 when optimal).
        per_type: usage per host type, in the order of the host list.
        max_hosts: hosts of each type the plan could use (the given count or the derived bound).
        seconds: wall time of the scenario.
        proofs: which method found the plan and which proved the bound.
        reason: why, when infeasible.
        placement: where every container goes (hosts named ``"<type>#<i>"``).
        instance: the instance solved (planned capacities, scaled replicas).
        n_plus_one: the N+1 check (see ``docs/plan.md``), when asked for.
        current: the plan on top of the running cluster (``--current``: its move budget and use,
            what is added), when asked for.
        replay: what :meth:`to_kubernetes` needs (set by ``vbp.plan``).
    """

    growth: float
    status: str
    objective_kind: str
    hosts: int | None
    cost: float | None
    bound: float
    gap: float | None
    per_type: tuple[TypeUsage, ...]
    max_hosts: dict[str, int]
    seconds: float
    proofs: dict[str, str] = field(default_factory=dict)
    reason: str | None = None
    placement: Placement | None = None
    instance: Instance | None = None
    n_plus_one: dict[str, Any] | None = None
    kept: tuple[str, ...] = ()
    """The running cluster's hosts (``--current``): written as Nodes even when empty."""
    autoscaler: dict[str, Any] | None = None
    """What the autoscalers' provisioning gives (:func:`policies.autoscalers.provision`):
    ``{"hosts", "cost"}`` (``cost`` ``None`` without prices), or ``None``."""

    def with_autoscaler(self, placement: Placement | None) -> ScenarioResult:
        """The scenario with the autoscalers' placement measured (``None``: it places nothing)."""
        import dataclasses

        if placement is None or self.instance is None or self.cost is None and self.hosts is None:
            return self
        used = set(h for hs in placement.hosts.values() for h in hs if h >= 0)
        cost = float(sum(self.instance.host_cost[h] for h in used)) if self.cost is not None else None
        return dataclasses.replace(self, autoscaler={"hosts": len(used), "cost": cost})
    current: dict[str, Any] | None = None
    replay: Replay | None = field(default=None, compare=False, repr=False)

    @property
    def bound_kind(self) -> str:
        """``"lower"``: a plan minimises, so :attr:`bound` is a lower bound."""
        return BOUND_KIND

    @property
    def lower_bound(self) -> float:
        """Deprecated alias of :attr:`bound`."""
        return self.bound

    def to_kubernetes(self) -> list[dict[str, Any]]:
        """The plan as Kubernetes objects: a Node per used host, a bound Pod per container.

        With ``n_plus_one``, its spare hosts are Nodes too (empty), and so are the running
        cluster's hosts (``--current``): written back, the cluster reads as it was.

        See :mod:`packing.plan.k8s_out` (write them with :func:`packing.plan.k8s_out.write_objects`).

        Raises:
            ValueError: the scenario has no placement, or was not made by ``vbp.plan``.
        """
        from packing.plan.k8s_out import plan_objects

        if self.placement is None or self.instance is None:
            raise ValueError(f"growth {self.growth:g}: no plan to write ({self.status})")
        if self.replay is None:
            raise ValueError("the scenario has no host offers; make it with vbp.plan")
        spares = tuple((self.n_plus_one or {}).get("spares") or ())
        return plan_objects(self.instance, self.placement, self.replay.offers,
                            self.replay.reserve, self.replay.pods,
                            spares + tuple(h for h in self.kept if h not in spares))

    @property
    def objective(self) -> str:
        """Deprecated name of :attr:`objective_kind` (in JSON since ``vbp-plan/3``)."""
        import warnings

        warnings.warn("ScenarioResult.objective is deprecated; use objective_kind", DeprecationWarning,
                      stacklevel=2)
        return self.objective_kind

    @property
    def moves(self) -> dict[str, Any] | None:
        """Deprecated name of :attr:`current` (in JSON since ``vbp-plan/3``)."""
        import warnings

        warnings.warn("ScenarioResult.moves is deprecated; use current", DeprecationWarning, stacklevel=2)
        return self.current

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of the scenario (see ``docs/plan.md``); infinities become ``null``."""
        d: dict[str, Any] = {
            "growth": self.growth, "status": self.status, "objective_kind": self.objective_kind,
            "hosts": self.hosts, "cost": self.cost, "bound": finite(self.bound),
            "bound_kind": self.bound_kind, "gap": finite(self.gap),
            "seconds": round(self.seconds, 3), "per_type": [t.to_dict() for t in self.per_type],
            "max_hosts": dict(self.max_hosts), "proofs": dict(self.proofs), "reason": self.reason,
        }
        if self.n_plus_one is not None:
            d["n_plus_one"] = self.n_plus_one
        if self.current is not None:
            d["current"] = self.current
        if self.autoscaler is not None:
            d["autoscaler"] = self.autoscaler
        return d


@dataclass(frozen=True)
class PlanResult:
    """Every scenario of a plan.

    Attributes:
        scenarios: one per growth multiplier, in the order given.
        planned_against: which capacity the plans respect (reserve and headroom applied).
        host_types: the host types offered.
    """

    scenarios: tuple[ScenarioResult, ...]
    planned_against: str
    host_types: tuple[HostOffer, ...]

    def to_dict(self) -> dict[str, Any]:
        """``{"format": "vbp-plan/3", "planned_against": ..., "scenarios": [...]}``."""
        return {"format": FORMAT, "planned_against": self.planned_against,
                "scenarios": [s.to_dict() for s in self.scenarios]}

    def exit_status(self) -> int:
        """The command's exit status (README's table): the worst over the scenarios.

        3 (:data:`~packing.errors.EXIT_INFEASIBLE`) when a scenario is proven infeasible (an
        infeasible ``--current`` with ``--verify-only`` too) or its N+1 check proves a host whose
        loss is not absorbed (``n_plus_one.holds`` false); else 4
        (:data:`~packing.errors.EXIT_NO_PLACEMENT`) when a scenario has no plan within the time
        limit or its N+1 check could not decide (``holds`` null); else 0.
        """
        from packing.errors import EXIT_INFEASIBLE, EXIT_NO_PLACEMENT, EXIT_OK

        holds = [(s.n_plus_one or {}).get("holds", True) for s in self.scenarios if s.n_plus_one]
        if any(s.status == "infeasible" for s in self.scenarios) or False in holds:
            return EXIT_INFEASIBLE
        if any(s.placement is None for s in self.scenarios) or None in holds:
            return EXIT_NO_PLACEMENT
        return EXIT_OK

    def to_frame(self) -> Any:
        """A pandas DataFrame, one row per scenario and host type.

        Columns: ``growth, status, total_hosts, total_cost, bound, gap, type, hosts, cost,
        bottleneck``, then ``util_<resource>`` (of the hosts' capacity),
        ``util_planned_<resource>`` (of the planned capacity) and ``stranded_<resource>`` per
        resource.

        Raises:
            ImportError: pandas is not installed (with how to install it).
        """
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("PlanResult.to_frame needs pandas: pip install pandas "
                              "(or use to_dict())") from None
        rows = []
        for s in self.scenarios:
            for t in s.per_type:
                row: dict[str, Any] = {
                    "growth": s.growth, "status": s.status, "total_hosts": s.hosts,
                    "total_cost": s.cost, "bound": s.bound, "gap": s.gap,
                    "type": t.type, "hosts": t.hosts, "cost": t.cost, "bottleneck": t.bottleneck}
                row.update({f"util_{r}": u for r, u in t.utilisation.items()})
                row.update({f"util_planned_{r}": u for r, u in t.utilisation_of_planned.items()})
                row.update({f"stranded_{r}": v for r, v in t.stranded.items()})
                rows.append(row)
        return pd.DataFrame(rows)


def finite(x: float | None) -> float | None:
    """``x``, or ``None`` when it is ``None`` or not finite (JSON has no infinity)."""
    return None if x is None or not math.isfinite(x) else x


def gap_of(value: float, bound: float) -> float:
    """``(value - bound) / value``, 0 when the value meets the bound (within rounding)."""
    if value <= bound + 1e-9 * max(1.0, abs(value)):
        return 0.0
    return (value - bound) / value if value else math.inf


def summarise(instance: Instance, growth: float, placement: Placement | None, status: str,
              bound: float, offers: Sequence[HostOffer], seconds: float,
              proofs: Mapping[str, str] | None = None, reason: str | None = None
              ) -> ScenarioResult:
    """A :class:`ScenarioResult` from any (checked) placement of a planning instance.

    Args:
        instance: the planning instance.
        growth: the demand multiplier.
        placement: the plan, or ``None``.
        status: the solver's status.
        bound: the proven lower bound on the objective.
        offers: the host types offered (prices, labels and full capacities).
        seconds: wall time so far.
        proofs: which method found the plan and which proved the bound.
        reason: why, when there is no plan.
    """
    priced = any(o.price is not None for o in offers)
    kind = "cost" if priced else "hosts"
    max_hosts = {t.name: t.count for t in instance.host_types}
    if placement is None:
        return ScenarioResult(growth, status, kind, None, None, bound, None, (), max_hosts,
                              seconds, dict(proofs or {}), reason, None, instance)
    per_type = type_usage(instance, placement, priced, [dict(o.labels) for o in offers],
                          full_capacity(instance, offers), planned_capacity(instance))
    hosts = sum(t.hosts for t in per_type)
    cost = sum(t.cost or 0.0 for t in per_type) if priced else None
    value = float(cost if priced and cost is not None else hosts)
    gap = 0.0 if status == "optimal" or value == bound else (
        abs(value - bound) / value if value else math.inf)
    return ScenarioResult(growth, status, kind, hosts, cost, bound, gap, per_type, max_hosts,
                          seconds, dict(proofs or {}), reason, placement, instance)


def plan_files(scenarios: Sequence[ScenarioResult], out: str | Path | None = None,
               k8s_out: str | Path | None = None) -> list[tuple[Path, str, str]]:
    """The files ``--out`` and ``--k8s-out`` write for a plan, as texts (nothing written yet).

    One placement file per scenario with a plan (:func:`scenario_path`), then one Kubernetes file
    per such scenario; write them with :func:`packing.io.atomic.write_texts` (all or none).

    Returns:
        ``(path, text, what)`` per file: ``what`` is ``"placement"`` or the Kubernetes objects'
        summary (``"2 Nodes (std x2), 5 Pods"``).

    Raises:
        ValueError: a scenario cannot be written as Kubernetes objects (see
            :meth:`ScenarioResult.to_kubernetes`).
    """
    from packing.io.documents import document_text
    from packing.io.placement_file import placement_to_dict
    from packing.plan import k8s_out as k8s

    done = [(s, s.placement, s.instance) for s in scenarios
            if s.placement is not None and s.instance is not None]
    several = len(scenarios) > 1
    files: list[tuple[Path, str, str]] = []
    for s, placement, inst in done if out is not None else ():
        p = scenario_path(out or "", s.growth, several)
        files.append((p, document_text(p, placement_to_dict(placement, inst)), "placement"))
    for s, _, _ in done if k8s_out is not None else ():
        objs = s.to_kubernetes()
        files.append((scenario_path(k8s_out or "", s.growth, several), k8s.dump_yaml(objs),
                      k8s.summary(objs)))
    return files


def scenario_path(out: str | Path, growth: float, several: bool) -> Path:
    """Where ``--out`` writes a scenario's file: ``out`` itself, or ``<stem>-x<growth><suffix>``."""
    p = Path(out)
    return p.with_name(f"{p.stem}-x{growth:g}{p.suffix}") if several else p


__all__ = ["BOUND_KIND", "FORMAT", "PlanResult", "Replay", "ScenarioResult", "finite", "gap_of",
           "plan_files", "scenario_path", "summarise"]
