"""Exact solvers with proven bounds, behind one front door: :func:`solve`.

Every method is a function with the same signature::

    method(instance, options: SolveOptions = DEFAULT_OPTIONS, **extra) -> SolveResult

where :class:`SolveOptions` (a frozen dataclass) holds what every method takes: ``time_limit,
workers, seed, objective, callback, hint, stop``; ``extra`` are a method's own keyword-only knobs
(:func:`solve` passes only ``settings``, and only to ``"auto"``). :func:`solve` keeps those as
keywords and builds the options. A method is registered by dotted path in :data:`METHODS`; it is
imported only when used (like networkx's ``flow_func``), so ``import solvers`` stays cheap and a
method whose module is missing simply is not :func:`available`.

The methods live in rooms: :mod:`solvers.exact` (CP-SAT, column generation, arc flow, PuLP,
``auto``), :mod:`solvers.search` (first fit and local searches), :mod:`solvers.bounds` (bounds with
a model of their own), :mod:`solvers.plan` (capacity plans), :mod:`solvers.consolidate` (consolidating
a running cluster) and :mod:`solvers.dag` (DAG carving).
The files at the top that every room uses are :mod:`solvers.base` (options, objectives, cheap
bounds) and :mod:`solvers.result` (the result and progress records).

Solvers solve the **offline** problem: all containers at once on empty hosts. They ignore
``Instance.initial`` and the request times in ``Instance.requests``.

Example:
    >>> from solvers import solve
    >>> res = solve(instance, time_limit=10)          # doctest: +SKIP
    >>> res.status, res.objective, res.bound, res.bound_kind    # doctest: +SKIP
    ('optimal', 12.0, 12.0, 'lower')
"""

from __future__ import annotations

import dataclasses
import importlib
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from packing.errors import input_error
from packing.feasibility.checker import check
from packing.model.instance import Instance, Placement
from solvers.base import (
    DEFAULT_OPTIONS,
    EPS,
    Aborted,
    SolveOptions,
    Stop,
    StopFlag,
    check_run_options,
    objective_value,
    resolve_objective,
    run_stoppable,
)
from solvers.result import Objective, Progress, ProgressCallback, SolveResult

if TYPE_CHECKING:
    from solvers.exact.auto import AutoSettings

METHODS: dict[str, str] = {
    "auto": "solvers.exact.auto:solve_auto",
    "cpsat": "solvers.exact.cpsat:solve_cpsat",
    "pulp": "solvers.exact.pulp_model:solve_pulp",
    "colgen": "solvers.exact.colgen:solve_colgen",
    "arcflow": "solvers.exact.arcflow:solve_arcflow",
}
"""Method name -> ``"module:function"``, resolved on use."""

DEFAULT_METHOD = "auto"
"""The method :func:`solve` uses when none is given."""

METHOD_NAMES: tuple[str, ...] = tuple(METHODS)
"""The method names, in the order of :data:`METHODS` (the ``--method`` choices of the command line)."""

SolveFunction = Callable[..., SolveResult]


class SolverBug(RuntimeError):
    """A method returned a placement the checker rejects, or a bound above its objective."""


def get_method(method: str) -> SolveFunction:
    """The function behind a method name.

    Raises:
        ValueError: the name is not in :data:`METHODS`.
        ImportError: the method's module (or its solver library) is not installed.
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")
    mod, _, attr = METHODS[method].partition(":")
    fn: SolveFunction = getattr(importlib.import_module(mod), attr)
    return fn


def available(method: str) -> bool:
    """Whether ``method`` can be imported (its module exists and its solver is installed)."""
    try:
        get_method(method)
    except ImportError:
        return False
    return True


def available_methods() -> list[str]:
    """The names of the methods that can run here."""
    return [m for m in METHODS if available(m)]


def solve(
    instance: Instance,
    method: str = DEFAULT_METHOD,
    *,
    time_limit: float = 60.0,
    workers: int = 2,
    seed: int = 0,
    objective: str | None = None,
    callback: ProgressCallback | None = None,
    hint: Placement | None = None,
    settings: AutoSettings | None = None,
    stop: Stop | None = None,
) -> SolveResult:
    """Solve ``instance`` with ``method`` and verify the result.

    Args:
        instance: the instance; solved offline (``initial`` and request times are ignored).
        method: a key of :data:`METHODS`.
        time_limit: wall-time budget in seconds (honoured within a couple of seconds).
        workers: worker threads the method may use.
        seed: random seed of the method.
        objective: ``"hosts"`` (hosts used), ``"cost"`` (total host cost), ``"deployed"``
            (maximise containers placed on the given hosts) or ``None``: ``"cost"`` if any host
            type's cost is not 1, else ``"hosts"``.
        callback: receives a :class:`Progress` for every new incumbent or bound.
        hint: a feasible placement to start from (methods may ignore it).
        settings: the knobs of ``"auto"`` (:class:`solvers.exact.auto.AutoSettings`; ``None``: the
            defaults). Only ``"auto"`` takes settings.
        stop: a :class:`StopFlag` (or :class:`threading.Event`); once set (from any thread), the
            method stops as soon as it can (see :class:`StopFlag`) and returns the best placement
            and the best proven bound found so far, with ``interrupted=True``. ``auto`` then
            runs none of its remaining parts.

    Returns:
        The result. Its placement passed :func:`packing.feasibility.checker.check` (with ``require_all``
        except for ``"deployed"``), its objective was recomputed from the placement, and its bound
        is on the right side of the objective.

    Raises:
        ValueError: unknown method or objective, ``settings`` for a method other than ``"auto"``,
            or a time limit, worker count or seed outside the command line's ranges (an
            :class:`~packing.errors.InputError`).
        ImportError: the method is not available here.
        SolverBug: the method returned an infeasible placement or an invalid bound.
    """
    check_run_options(time_limit, workers, seed)
    kind = resolve_objective(instance, objective)
    fn = get_method(method)
    extra: dict[str, Any] = {}
    if settings is not None:
        if method != "auto":
            raise input_error("<options>", "settings",
                              f"settings are the knobs of method 'auto', not of {method!r}")
        extra["settings"] = settings
    options = SolveOptions(time_limit=time_limit, workers=workers, seed=seed, objective=kind,
                           callback=callback, hint=hint, stop=stop)
    res = fn(instance, options, **extra)
    if stop is not None and stop.is_set() and not res.interrupted:
        res = dataclasses.replace(res, interrupted=True)
    verify(instance, res, kind, method)
    return res


def verify(instance: Instance, res: SolveResult, kind: Objective, method: str = "?") -> None:
    """Check a method's result: feasible placement, true objective, bound on the right side.

    Raises:
        SolverBug: with the violations found.
    """
    if res.objective_kind != kind:
        raise SolverBug(f"{method}: solved for {res.objective_kind!r}, asked for {kind!r}")
    if res.placement is None:
        if res.status in ("optimal", "feasible"):
            raise SolverBug(f"{method}: status {res.status} without a placement")
        return
    bad = check(instance, res.placement, require_all=kind != "deployed")
    if bad:
        lines = "; ".join(str(v) for v in bad[:5])
        raise SolverBug(f"{method}: infeasible placement ({len(bad)} violations): {lines}")
    value = objective_value(instance, res.placement.host_array(instance), kind)
    if res.objective is None or not math.isclose(value, res.objective, rel_tol=1e-9, abs_tol=1e-9):
        raise SolverBug(f"{method}: reports objective {res.objective}, placement gives {value}")
    tol = 1e-6 * max(1.0, abs(value))
    if kind == "deployed":
        ok = res.bound >= value - tol
    else:
        ok = res.bound <= value + tol
    if not ok:
        raise SolverBug(f"{method}: bound {res.bound} is on the wrong side of {value}")
    if res.status == "optimal" and abs(res.bound - value) > max(tol, EPS):
        raise SolverBug(f"{method}: 'optimal' with bound {res.bound} != objective {value}")


def __getattr__(name: str) -> Any:
    """``solvers.AutoSettings``, imported on first use (``import solvers`` stays cheap)."""
    if name == "AutoSettings":
        from solvers.exact.auto import AutoSettings

        return AutoSettings
    raise AttributeError(f"module 'solvers' has no attribute {name!r}")


__all__ = [
    "Aborted",
    "AutoSettings",
    "DEFAULT_METHOD",
    "DEFAULT_OPTIONS",
    "METHODS",
    "METHOD_NAMES",
    "Progress",
    "ProgressCallback",
    "SolveOptions",
    "SolveResult",
    "SolverBug",
    "Stop",
    "StopFlag",
    "available",
    "available_methods",
    "get_method",
    "run_stoppable",
    "solve",
    "verify",
]

