"""Helpers every solver method shares: the objective, cheap bounds, objective values, GPU cards.

Solvers solve the *offline* problem: every container of every app at once, on empty hosts. They
ignore ``Instance.initial`` and the request times in ``Instance.requests``.
"""

from __future__ import annotations

import dataclasses
import math
import signal
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import numpy as np

from packing.feasibility.predicates import ClusterState
from packing.io.fields import MAX_SEED, check_whole
from packing.model.instance import UNPLACED, Instance, Placement
from solvers.result import Objective, Progress, ProgressCallback, SolveResult

T = TypeVar("T")

EPS = 1e-9
"""Tolerance when comparing float objectives and bounds."""


def resolve_objective(instance: Instance, objective: str | None) -> Objective:
    """The objective to use: ``None`` means ``"cost"`` if any host type costs other than 1.

    Raises:
        ValueError: ``objective`` is not ``"hosts"``, ``"cost"``, ``"deployed"`` or ``None``.
    """
    if objective is None:
        return "cost" if any(t.cost != 1 for t in instance.host_types) else "hosts"
    if objective not in ("hosts", "cost", "deployed"):
        raise ValueError(f"unknown objective {objective!r}; use hosts, cost or deployed")
    return objective  # type: ignore[return-value]


class Stop(Protocol):
    """What ``stop=`` accepts: a :class:`StopFlag` or a :class:`threading.Event`."""

    def is_set(self) -> bool:
        """Whether the stop was requested."""

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the stop is requested or ``timeout`` seconds pass; whether it was."""


class StopFlag:
    """A cooperative stop request, shared by the caller and a running solve (thread-safe).

    Pass it as ``solvers.solve(..., stop=flag)`` and call :meth:`set` from any thread (a timer,
    a signal handler): every method then stops as soon as it can and returns the best placement
    and the best *proven* bound found so far, with ``interrupted=True``. CP-SAT is stopped
    within about :data:`STOP_POLL` seconds; column generation, tabu search, the exact cover's
    enumeration and LNS stop at their next check (between iterations or chunks, well under a
    second); the CBC child processes (arc flow, the exact cover, the pattern partition) are
    terminated; ``pulp``'s CBC process is interrupted and hands back its best solution
    (:mod:`solvers.exact.cbc_run`). A :class:`threading.Event` works the same way.

    Example:
        >>> flag = StopFlag()
        >>> threading.Timer(5.0, flag.set).start()          # doctest: +SKIP
        >>> solve(instance, time_limit=600, stop=flag)       # doctest: +SKIP
    """

    def __init__(self) -> None:
        self._event = threading.Event()

    def set(self) -> None:
        """Request the stop (idempotent)."""
        self._event.set()

    def is_set(self) -> bool:
        """Whether the stop was requested."""
        return self._event.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the stop is requested or ``timeout`` seconds pass; whether it was."""
        return self._event.wait(timeout)

    def __repr__(self) -> str:
        return f"StopFlag(set={self.is_set()})"


class Aborted(KeyboardInterrupt):
    """A second Ctrl-C while the solve still runs in its thread (raised by :func:`run_stoppable`)."""


def run_stoppable(work: Callable[[StopFlag], T], on_stop: Callable[[], None] | None = None) -> tuple[T, bool]:
    """Run ``work(stop)`` with Ctrl-C wired to ``stop``; return its result and whether it was stopped.

    For a script or command that solves in the foreground: the first Ctrl-C sets ``stop`` (and
    calls ``on_stop``, e.g. to say so), so the solve returns its best placement and bound so far.

    The solve runs in a worker thread while the main thread waits for SIGINT. On POSIX, SIGINT
    is blocked in every thread the solve starts (the worker and the threads the solvers start
    inherit the mask) and the main thread takes it with ``sigwait``, waiting there without a
    break until the worker wakes it (``pthread_kill``) as it ends. The kernel hands a
    process-wide signal to the main thread whenever that thread is waiting for it, so neither a
    native solver that installs a SIGINT disposition of its own for a moment (CBC does, during
    branch and bound) nor a thread started before the mask (OpenBLAS's, at numpy's import) can
    take the Ctrl-C; the main thread sees it even while the worker is inside native code. The
    worker starts its work only once the main thread is about to wait (a Ctrl-C in between, with
    SIGINT blocked in the main thread and a native SIG_IGN in force, went to OpenBLAS's thread
    and was lost).
    Elsewhere a Python handler does the same, less robustly. The first SIGINT sets
    the flag; the solver then returns its best so far. A second SIGINT raises
    :class:`KeyboardInterrupt` here (hard abort). Outside the main thread no handler can be
    installed and the solve runs directly.

    Raises:
        Aborted: a second Ctrl-C (the worker thread is still running).
        KeyboardInterrupt: raised by the solve itself.
    """
    stop = StopFlag()
    if threading.current_thread() is not threading.main_thread():
        return work(stop), stop.is_set()
    box: dict[str, Any] = {}

    done = threading.Event()
    listening = threading.Event()  # the main thread still waits (not after a hard abort)
    main_id = threading.main_thread().ident
    waitable = hasattr(signal, "pthread_sigmask") and hasattr(signal, "sigwait")

    ready = threading.Event()  # set by the main thread just before it starts waiting for SIGINT

    def target() -> None:
        try:
            ready.wait()
            box["result"] = work(stop)
        except BaseException as e:  # noqa: BLE001 - re-raised in the main thread
            box["error"] = e
        finally:
            done.set()
            if waitable and listening.is_set() and main_id is not None:
                signal.pthread_kill(main_id, signal.SIGINT)  # wake the main thread's sigwait

    def on_sigint(signum: int = signal.SIGINT, frame: object = None) -> None:
        if stop.is_set():
            raise KeyboardInterrupt  # the second Ctrl-C: abort now
        stop.set()
        if on_stop is not None:
            on_stop()

    worker = threading.Thread(target=target, name="vbp-solve", daemon=True)
    previous = signal.signal(signal.SIGINT, on_sigint)
    if waitable:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        listening.set()
    try:
        worker.start()
        while not done.is_set():
            ready.set()  # the worker needs the GIL, which this thread keeps until it is in sigwait
            if not waitable:
                worker.join(0.5)
            elif signal.sigwait({signal.SIGINT}) and not done.is_set():
                on_sigint()
        worker.join()
    except KeyboardInterrupt:
        if worker.is_alive():
            raise Aborted from None
        raise
    finally:
        listening.clear()
        if waitable:
            while signal.sigtimedwait({signal.SIGINT}, 0) is not None:
                pass  # a Ctrl-C as the solve ended: its result is complete
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        signal.signal(signal.SIGINT, previous)
    if "error" in box:
        raise box["error"]
    return box["result"], stop.is_set()


def check_run_options(time_limit: float, workers: int, seed: int, *, workers_name: str = "workers") -> None:
    """The checks of a front door's solver options: the command line's ranges for Python callers.

    Raises:
        InputError: ``time_limit`` not a finite number of seconds above 0, ``workers`` not a whole
            number >= 1, or ``seed`` not a whole number in ``0..2**32 - 1``.
    """
    from packing.errors import input_error

    if isinstance(time_limit, bool) or not isinstance(time_limit, int | float | np.number) \
            or not math.isfinite(float(time_limit)) or float(time_limit) <= 0:
        raise input_error("<options>", "time_limit", f"expected a finite number of seconds above 0, got "
                          f"{time_limit!r}")
    check_whole(workers, workers_name, 1)
    check_whole(seed, "seed", 0, MAX_SEED)


@dataclass(frozen=True)
class SolveOptions:
    """What every solver method takes besides the instance (see :data:`solvers.METHODS`).

    :func:`solvers.solve` builds one from its keywords; a method passes a changed copy
    (:meth:`replace`) to the methods it calls.

    Attributes:
        time_limit: wall-time budget in seconds.
        workers: worker threads the method may use.
        seed: random seed of the method.
        objective: ``"hosts"``, ``"cost"``, ``"deployed"`` or ``None`` (``"cost"`` if any host
            type's cost is not 1, else ``"hosts"``; see :func:`resolve_objective`).
        callback: receives a :class:`~solvers.result.Progress` for every new incumbent or bound.
        hint: a feasible placement to start from (methods may ignore it).
        stop: a stop request (:class:`StopFlag` or :class:`threading.Event`); once set, the
            method returns the best placement and proven bound found so far.
    """

    time_limit: float = 60.0
    workers: int = 2
    seed: int = 0
    objective: str | None = None
    callback: ProgressCallback | None = None
    hint: Placement | None = None
    stop: Stop | None = None

    def replace(self, **changes: Any) -> SolveOptions:
        """A copy with ``changes`` (field name -> new value)."""
        return dataclasses.replace(self, **changes)


DEFAULT_OPTIONS = SolveOptions()
"""The options a method uses when none are given."""


STOP_POLL = 0.05
"""Seconds between two looks at the stop flag while CP-SAT runs (:func:`run_cpsat`)."""


class Clock:
    """Wall time since creation, what is left of a time limit, and the stop request.

    A requested stop (:class:`StopFlag`) ends the budget: :meth:`left` then returns its floor,
    so every loop that runs while time is left ends at its next check.

    Args:
        time_limit: the budget in seconds.
        stop: the stop request (``None``: only the time limit ends the budget).
    """

    def __init__(self, time_limit: float, stop: Stop | None = None) -> None:
        self.start = time.perf_counter()
        self.time_limit = float(time_limit)
        self.stop = stop

    @property
    def elapsed(self) -> float:
        """Seconds since the clock was created."""
        return time.perf_counter() - self.start

    @property
    def deadline(self) -> float:
        """The budget's end on :func:`time.perf_counter`'s scale."""
        return self.start + self.time_limit

    @property
    def stopped(self) -> bool:
        """Whether the stop was requested."""
        return self.stop is not None and self.stop.is_set()

    def left(self, floor: float = 0.01) -> float:
        """Seconds left of the budget (at least ``floor``; exactly ``floor`` once stopped)."""
        if self.stopped:
            return floor
        return max(floor, self.time_limit - self.elapsed)

    def sub(self, time_limit: float) -> Clock:
        """A clock for a part of the work: its own budget, the same stop request.

        The budget never reaches past this clock's end (a part cannot outlive the whole).
        """
        return Clock(max(0.0, min(time_limit, self.time_limit - self.elapsed)), self.stop)


def run_cpsat(solver: Any, model: Any, callback: Any = None, stop: Stop | None = None,
              deadline: float | None = None) -> Any:
    """``solver.solve(model, callback)`` that ends early when ``stop`` is set.

    With ``deadline`` (on :func:`time.perf_counter`'s scale, usually the caller's start plus
    its time limit), CP-SAT's ``max_time_in_seconds`` is cut to the time left until it, so
    building the model never pushes the solve past the caller's budget.

    Without ``stop`` this is the plain call (CP-SAT then handles SIGINT itself, OR-Tools'
    default). With ``stop``, CP-SAT leaves SIGINT to the caller (``catch_sigint_signal`` off: the
    caller's handler sets the flag), and a watcher thread calls ``solver.stop_search()`` within
    :data:`STOP_POLL` seconds of the stop; CP-SAT then returns as at a time limit, with its best
    solution and its proven bound. A stop set before the call gives CP-SAT no time at all.

    Args:
        solver: a ``cp_model.CpSolver`` with its parameters set.
        model: the ``cp_model.CpModel``.
        callback: a solution callback, or ``None``.
        stop: the stop request, or ``None``.
        deadline: when the solve must end, or ``None`` (only ``max_time_in_seconds``).

    Returns:
        The CP-SAT status.
    """
    if deadline is not None:
        left = max(0.0, deadline - time.perf_counter())
        solver.parameters.max_time_in_seconds = min(solver.parameters.max_time_in_seconds, left)
    if stop is None:
        return solver.solve(model, callback)
    solver.parameters.catch_sigint_signal = False
    if stop.is_set():
        solver.parameters.max_time_in_seconds = 0.0
        return solver.solve(model, callback)
    done = threading.Event()

    def watch() -> None:
        while not done.wait(STOP_POLL):
            if stop.is_set():
                solver.stop_search()  # a no-op until the search starts: repeated until it ends

    watcher = threading.Thread(target=watch, name="vbp-cpsat-stop", daemon=True)
    watcher.start()
    try:
        return solver.solve(model, callback)
    finally:
        done.set()
        watcher.join()


def notify(
    callback: ProgressCallback | None,
    history: list[Progress],
    clock: Clock,
    objective: float | None,
    bound: float | None,
    method: str,
    message: str = "",
) -> None:
    """Record a progress event in ``history`` and pass it to ``callback`` (if any)."""
    p = Progress(clock.elapsed, objective, bound, method, message)
    history.append(p)
    if callback is not None:
        callback(p)


# ------------------------------------------------------------------------------------------------
# objective values
def used_hosts(instance: Instance, host_of: np.ndarray) -> np.ndarray:
    """Boolean mask of hosts with at least one container, shape ``(n_hosts,)``.

    Args:
        instance: the instance.
        host_of: host per container, shape ``(n_containers,)``; -1 = unplaced.
    """
    used = np.zeros(instance.n_hosts, dtype=bool)
    h = host_of[host_of != UNPLACED]
    used[h] = True
    return used


def objective_value(instance: Instance, host_of: np.ndarray, kind: Objective) -> float:
    """The objective of a placement: hosts used, their total cost, or containers placed.

    Args:
        instance: the instance.
        host_of: host per container, shape ``(n_containers,)``; -1 = unplaced.
        kind: ``"hosts"``, ``"cost"`` or ``"deployed"``.
    """
    if kind == "deployed":
        return float(np.count_nonzero(host_of != UNPLACED))
    used = used_hosts(instance, host_of)
    if kind == "cost":
        return float(instance.host_cost[used].sum())
    return float(used.sum())


# ------------------------------------------------------------------------------------------------
# cheap lower bounds
def cheap_lower_bound(instance: Instance, kind: Objective) -> tuple[float, str]:
    """The best cheap lower bound for ``kind`` and the name of the bound that gives it.

    Uses :func:`packing.feasibility.bounds.lower_bounds` (volume, cap, clique, GPU) for ``"hosts"`` and
    :func:`packing.feasibility.bounds.cost_lower_bound` for ``"cost"``. For ``"deployed"`` (maximised) it
    returns the trivial upper bound ``n_containers``. A bound above what the hosts allow
    (``inf`` or more than ``n_hosts``) proves the instance infeasible (:func:`bound_infeasible`).
    """
    from packing.feasibility import bounds as _bounds

    if kind == "deployed":
        return float(instance.n_containers), "count"
    if kind == "cost":
        return float(_bounds.cost_lower_bound(instance)), "cost"
    lb = _bounds.lower_bounds(instance)
    names = ("volume", "cap", "clique", "excluded", "gpu", "best")
    name = next(f for f in names if getattr(lb, f) == lb.best)
    return float(lb.best), name


def bound_infeasible(instance: Instance, kind: Objective, bound: float) -> bool:
    """Whether a cheap lower bound proves that not every container can be placed."""
    if kind == "deployed":
        return False
    return math.isinf(bound) or (kind == "hosts" and bound > instance.n_hosts)


def infeasibility_reason(instance: Instance) -> str | None:
    """Why no placement exists, (:func:`packing.feasibility.explain.explain_infeasibility`), or ``None``."""
    try:
        from packing.feasibility.explain import explain_infeasibility
    except ImportError:  # pragma: no cover - until packing.feasibility.explain lands
        return None
    reasons = explain_infeasibility(instance)
    return "; ".join(reasons) if reasons else None


def infeasible_result(instance: Instance, kind: Objective, method: str, clock: Clock,
                      proof: str, history: list[Progress], reason: str | None = None
                      ) -> SolveResult:
    """The result for a proven-infeasible instance, with the reason from ``explain``."""
    why = reason or infeasibility_reason(instance) or f"the {proof} bound exceeds the hosts"
    return SolveResult("infeasible", None, math.inf, None, None, method, clock.elapsed, kind,
                       {"bound": proof}, why, tuple(history))


# ------------------------------------------------------------------------------------------------
# GPU cards
def assign_cards(instance: Instance, host_of: np.ndarray) -> list[tuple[int, ...]] | None:
    """Deterministic GPU card assignment for a host assignment, or ``None`` if the fit fails.

    On each host, whole-card containers go first, then shared ones by decreasing share; each takes
    the fullest fitting cards (:meth:`ClusterState.choose_cards`). Card packing is a bin-packing
    problem of its own, so failing here does not prove the host assignment infeasible.

    Args:
        instance: the instance.
        host_of: host per container, shape ``(n_containers,)``; -1 = unplaced.

    Returns:
        Cards per container (length ``n_containers``), or ``None``.
    """
    inst = instance
    cards: list[tuple[int, ...]] = [()] * inst.n_containers
    if not inst.max_gpus:
        return cards
    apps = inst.container_app
    need = inst.gpu_cards[apps] > 0
    js = np.flatnonzero(need & (host_of != UNPLACED))
    if len(js) == 0:
        return cards
    whole = np.array([inst.apps[a].gpu_whole for a in apps[js]], dtype=bool)
    share = np.where(np.isinf(inst.gpu_demand), 0.0, inst.gpu_demand).sum(axis=1)[apps[js]]
    order = np.lexsort((js, -share, ~whole, host_of[js]))
    st = ClusterState(inst)
    for j in js[order]:
        a, h = int(apps[j]), int(host_of[j])
        try:
            cs = st.choose_cards(a, h)
        except ValueError:
            return None
        st.place(a, h, cs)
        cards[j] = cs
    return cards


def ceil_bound(value: float) -> float:
    """``ceil`` with a little tolerance, for bounds on integer objectives."""
    return float(math.ceil(value - 1e-6))


def containers_by_host(instance: Instance, x: Sequence[tuple[int, int, int]]) -> np.ndarray:
    """Turn aggregated counts ``(app, host, n)`` into host per container, shape ``(n_containers,)``.

    Containers of an app are given to its hosts in the order of ``x``; the rest stay unplaced.
    """
    host_of = np.full(instance.n_containers, UNPLACED, dtype=np.int64)
    nxt = instance.offsets[:-1].copy()
    for a, h, n in x:
        if n > 0:
            lo = int(nxt[a])
            host_of[lo : lo + n] = h
            nxt[a] += n
    return host_of
