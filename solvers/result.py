"""The typed result every solver method returns, and the progress record its callback receives."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from packing.model.instance import Placement

Status = Literal["optimal", "feasible", "infeasible", "unknown"]
Objective = Literal["hosts", "cost", "deployed"]
BoundKind = Literal["lower", "upper"]


@dataclass(frozen=True)
class Progress:
    """One progress event: a new incumbent or a better bound.

    Attributes:
        seconds: wall time since the solve started.
        objective: best objective found so far (``None`` before the first solution).
        bound: best proven bound so far.
        method: the method reporting (``"cpsat"``, ``"colgen"``, ...).
        message: a short human-readable note.
    """

    seconds: float
    objective: float | None
    bound: float | None
    method: str
    message: str = ""


ProgressCallback = Callable[[Progress], None]


def bound_kind(objective: Objective) -> BoundKind:
    """Which side of ``objective`` a proven bound is on: ``"upper"`` for ``"deployed"`` (maximised)."""
    return "upper" if objective == "deployed" else "lower"


@dataclass(frozen=True)
class SolveResult:
    """What a solver returns.

    Attributes:
        status: ``"optimal"`` (proven), ``"feasible"`` (a solution, not proven optimal),
            ``"infeasible"`` (proven: no solution), ``"unknown"`` (nothing proven, no solution).
        objective: value of the returned placement: hosts used, total host cost, or (for
            ``objective_kind == "deployed"``) containers deployed; ``None`` without a placement.
        bound: the proven bound on the objective: a lower bound for the minimised objectives
            (``"hosts"``, ``"cost"``), an upper bound for ``"deployed"`` (maximised);
            :attr:`bound_kind` says which. ``math.inf`` for a proven ``"infeasible"``.
        placement: the placement, already passed through :func:`packing.feasibility.checker.check`.
        hosts: hosts used by the placement.
        method: the method that produced the placement (``"auto"`` results name the parts
            in ``proofs``).
        seconds: wall time.
        objective_kind: ``"hosts"``, ``"cost"`` or ``"deployed"``.
        proofs: which method found the solution and which proved the bound, e.g.
            ``{"solution": "ffd", "bound": "colgen"}``.
        reason: for ``"infeasible"``, why (the app and rule involved).
        history: progress events, in time order.
        interrupted: the solve was stopped early (``stop=`` set, e.g. by Ctrl-C in ``vbp
            solve``): the placement is the best found so far and the bound the best proven so
            far; ``status`` is ``"optimal"`` only if that proof was complete.
    """

    status: Status
    objective: float | None
    bound: float
    placement: Placement | None
    hosts: int | None
    method: str
    seconds: float
    objective_kind: Objective = "hosts"
    proofs: dict[str, str] = field(default_factory=dict)
    reason: str | None = None
    history: tuple[Progress, ...] = ()
    interrupted: bool = False

    @property
    def lower_bound(self) -> float:
        """Deprecated name of :attr:`bound` (read-only; for ``"deployed"`` it is an upper bound)."""
        warnings.warn("SolveResult.lower_bound is deprecated; read SolveResult.bound (and bound_kind)",
                      DeprecationWarning, stacklevel=2)
        return self.bound

    @property
    def bound_kind(self) -> BoundKind:
        """``"upper"`` when the objective is maximised (``"deployed"``), else ``"lower"``."""
        return bound_kind(self.objective_kind)

    @property
    def gap(self) -> float | None:
        """Relative gap ``|objective - bound| / objective`` (0 when proven optimal)."""
        if self.objective is None:
            return None
        if self.objective == 0:
            return 0.0 if self.bound == 0 else math.inf
        return abs(self.objective - self.bound) / abs(self.objective)

    def to_dict(self) -> dict[str, object]:
        """The JSON object ``vbp solve --json`` prints (without the placement).

        ``bound_kind`` says which side of the objective ``bound`` is on (``"upper"`` for
        ``"deployed"``). ``bound`` is ``math.inf`` for ``"infeasible"``: callers writing JSON
        turn it into ``null``.
        """
        return {
            "status": self.status,
            "objective": self.objective,
            "objective_kind": self.objective_kind,
            "hosts": self.hosts,
            "bound": self.bound,
            "bound_kind": self.bound_kind,
            "gap": self.gap,
            "seconds": round(self.seconds, 3),
            "method": self.method,
            "proofs": dict(self.proofs),
            "reason": self.reason,
            "interrupted": self.interrupted,
        }
