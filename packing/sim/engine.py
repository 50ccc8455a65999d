"""The one stepwise engine: arrivals, departures, waiting requests and decisions, one at a time.

Every consumer of the event loop runs this engine: :func:`packing.sim.simulator.simulate` (a loop that asks a
policy), the Gymnasium env (:mod:`packing.env.placement_env`, a loop driven by an agent's actions), the
evaluation
layer and everything above them. There is no second copy of the loop.

Arrivals
    From ``instance.requests`` (each request of ``count`` containers gives ``count`` arrivals at its
    time, leaving at ``end``), sorted by time with ties kept in stream order; or, when the instance has
    no requests, one arrival per container not in the snapshot, in app order, at times ``0, 1, 2, ...``
    (:func:`arrivals`). An *order* is a permutation of the arrivals: arrival slots keep their times, the
    order decides which container arrives in which slot, and a container keeps its own duration.

Decisions
    :meth:`Engine.reset` starts from the snapshot (``instance.initial``, checked once) and advances to
    the first decision. A decision is an arrival, or the retry of a waiting request after a departure.
    Departures at a time ``<=`` an arrival's time happen before it (a heap keyed by
    ``(time, insertion counter, container)``, so ties break deterministically); after each departure
    every waiting request is retried once, in FIFO order. After the last arrival, departures keep being
    processed while requests wait. A decision whose mask is empty is resolved by the engine itself,
    without asking anyone: rejected, or delayed when the engine was built with ``wait_when_full``.

Actions (:meth:`Engine.apply`)
    a host index where :meth:`Engine.mask` is True (optionally with the GPU cards; else
    :meth:`packing.feasibility.predicates.ClusterState.choose_cards` picks them),
    :data:`~packing.sim.policy.WAIT`
    (the request waits for the next departure) or :data:`REJECT` (the container is refused). Anything
    else raises :class:`packing.errors.PolicyError`.

Autoscaled pool
    Built with ``autoscale`` (:class:`packing.sim.autoscale.Autoscale`), the hosts are the nodes that may
    exist: the mask holds the hosts that fit and are in the pool, a decision that fits no node in the
    pool opens one (a scale-up; the mask is then that node), and nodes left empty for the scale-down
    delay are removed (:class:`packing.sim.autoscale.Pool`, kept in :attr:`Engine.pool`).

Record
    One row per decision (:class:`Trajectory`): time, arrival, app, host, outcome, hosts in use and the
    Sigma allocation rate per metric resource after it (:func:`packing.feasibility.metrics.sigma_rate`, GPU
    resources included), kept as running sums so a step costs ``O(resources)``.

Fast path
    A policy with a compiled whole-episode kernel (:class:`packing.sim.policy.CompiledEpisode`) runs the
    whole episode in one call (``Engine.reset(order, compiled=policy)``) when there are no
    departures, no waiting, no autoscaled pool and
    :meth:`~packing.sim.policy.CompiledEpisode.compiled_supports` holds. It
    makes the same decisions (tested decision by decision), and the record is filled with vectorised
    arithmetic. On GPU instances the kernel also returns the cards of each arrival (a third array,
    shape ``(n, G)``, -1 padded), which become the containers' cards.
"""

from __future__ import annotations

import heapq
import weakref
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numba
import numpy as np

from packing.errors import InputError, PolicyError, Problem, input_error
from packing.feasibility.checker import check
from packing.feasibility.metrics import sigma_rate, state_loads
from packing.feasibility.predicates import ClusterState
from packing.model.instance import UNPLACED, Instance, Placement
from packing.sim.autoscale import Autoscale, Pool
from packing.sim.policy import WAIT, Arranging, CompiledEpisode, Observation, implements

PLACED, REJECTED, DELAYED = 0, 1, 2
"""Outcome codes of a decision in :attr:`Trajectory.outcome`."""

REJECT = -2
"""Action meaning "refuse this container" (it is counted as rejected)."""


def _ro(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


class Arrivals(NamedTuple):
    """The arrival slots of an instance.

    Attributes:
        app: app index per arrival, shape ``(n,)``.
        time: arrival time per slot, shape ``(n,)``, non-decreasing.
        duration: how long each arrival's container stays, shape ``(n,)`` (``inf``: it stays).
        request: the request (deployment) each arrival belongs to, shape ``(n,)``; without requests
            every arrival is its own request.
    """

    app: np.ndarray
    time: np.ndarray
    duration: np.ndarray
    request: np.ndarray


class Trajectory(NamedTuple):
    """One row per decision (an arrival, or a retry of a delayed request).

    Attributes:
        time: time of the decision, shape ``(n_steps,)``.
        arrival: arrival index (into :class:`Arrivals`), shape ``(n_steps,)``.
        app: app index, shape ``(n_steps,)``.
        host: chosen host, -1 if rejected or delayed, shape ``(n_steps,)``.
        outcome: :data:`PLACED`, :data:`REJECTED` or :data:`DELAYED`, shape ``(n_steps,)``.
        hosts_used: hosts running containers after the decision, shape ``(n_steps,)``.
        allocation: Sigma allocation rate per metric resource (host resources, then GPU resources)
            after the decision, shape ``(n_steps, n_metric_resources)`` (0 while no host is used).
    """

    time: np.ndarray
    arrival: np.ndarray
    app: np.ndarray
    host: np.ndarray
    outcome: np.ndarray
    hosts_used: np.ndarray
    allocation: np.ndarray


class Decision(NamedTuple):
    """The decision the engine waits for.

    Attributes:
        arrival: arrival index (into :class:`Arrivals`).
        app: app index of the container.
        time: time of the decision.
        step: decision number within the episode (0-based; auto-resolved decisions count).
        retry: whether this is the retry of a waiting request.
    """

    arrival: int
    app: int
    time: float
    step: int
    retry: bool


# ------------------------------------------------------------------------------------------------
class _PerInstance:
    """A small cache keyed by instance identity (weak references guard reused ids)."""

    def __init__(self, size: int = 64) -> None:
        self.size = size
        self.items: dict[int, tuple[weakref.ref[Instance], Any]] = {}

    def get(self, inst: Instance, make: Callable[[Instance], Any]) -> Any:
        hit = self.items.get(id(inst))
        if hit is not None and hit[0]() is inst:
            return hit[1]
        value = make(inst)
        if len(self.items) >= self.size:
            self.items.clear()
        self.items[id(inst)] = (weakref.ref(inst), value)
        return value


_ARRIVALS = _PerInstance()
_ARRIVAL_FACTS = _PerInstance()
_SNAPSHOT_OK = _PerInstance()
_ALL_FREE = _PerInstance()


def _arrival_facts(inst: Instance) -> tuple[np.ndarray, bool]:
    """Arrivals per app ``(n_apps,)`` and whether no container ever departs."""
    arr = arrivals(inst)
    per_app = np.bincount(arr.app, minlength=inst.n_apps).astype(np.int64)
    return _ro(per_app), bool(np.all(np.isinf(arr.duration)))


def arrivals(instance: Instance) -> Arrivals:
    """The arrival slots of ``instance`` (see the module docstring); arrays are read-only."""
    result: Arrivals = _ARRIVALS.get(instance, _make_arrivals)
    return result


def _make_arrivals(inst: Instance) -> Arrivals:
    if inst.requests:
        idx = inst.app_index
        reqs = sorted(enumerate(inst.requests), key=lambda p: (p[1].time, p[0]))
        apps, times, durs, blocks = [], [], [], []
        problems = []
        for i, q in reqs:
            if q.app not in idx:
                problems.append(Problem(inst.name, f"requests[{i}].app", f"unknown app {q.app!r}"))
                continue
            d = np.inf if q.end is None else float(q.end) - float(q.time)
            if d < 0:
                problems.append(Problem(inst.name, f"requests[{i}].end", "departure before arrival"))
            apps += [idx[q.app]] * q.count
            times += [float(q.time)] * q.count
            durs += [d] * q.count
            blocks += [i] * q.count
        if problems:
            raise InputError(problems)
        return Arrivals(_ro(np.array(apps, dtype=np.int64)), _ro(np.array(times, dtype=np.float64)),
                        _ro(np.array(durs, dtype=np.float64)), _ro(np.array(blocks, dtype=np.int64)))
    placed = np.zeros(inst.n_containers, dtype=bool)
    if inst.initial is not None:
        placed = inst.initial.host_array(inst) != UNPLACED
    apps_arr = inst.container_app[~placed].astype(np.int64)
    n = len(apps_arr)
    return Arrivals(_ro(apps_arr), _ro(np.arange(n, dtype=np.float64)), _ro(np.full(n, np.inf)),
                    _ro(np.arange(n, dtype=np.int64)))


def _all_free(inst: Instance) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Free container slots of an instance without a snapshot: ``(slots, first per app, per app)``."""
    result: tuple[np.ndarray, np.ndarray, np.ndarray] = _ALL_FREE.get(inst, lambda i: (
        _ro(np.arange(i.n_containers, dtype=np.int64)), _ro(np.ascontiguousarray(i.offsets[:-1])),
        _ro(np.ascontiguousarray(i.counts, dtype=np.int64))))
    return result


def _snapshot_violations(inst: Instance) -> list[Any]:
    assert inst.initial is not None
    return check(inst, inst.initial)


class _NoCards(list):
    """Cards per container of an instance without GPU cards: always ``()``, nothing stored."""

    def __getitem__(self, j: Any) -> Any:
        return ()

    def __setitem__(self, j: Any, value: Any) -> None:
        pass


def initial_state(instance: Instance) -> tuple[ClusterState, np.ndarray, list[tuple[int, ...]]]:
    """The snapshot's state: ``(state, host per container (n_containers,), cards per container)``.

    For instances without GPU cards the cards list stores nothing (every entry reads ``()``).

    Raises:
        InputError: the snapshot breaks a constraint (repair it with
            :func:`packing.sim.simulator.repair_snapshot`).
    """
    inst = instance
    cards: list[tuple[int, ...]] = [()] * inst.n_containers if inst.max_gpus else _NoCards()
    if inst.initial is None:
        return ClusterState(inst), np.full(inst.n_containers, UNPLACED, dtype=np.int64), cards
    viol = _SNAPSHOT_OK.get(inst, _snapshot_violations)
    if viol:
        raise input_error(inst.name, "initial", f"the snapshot is infeasible ({len(viol)} violations; "
                          f"first: {viol[0]}); start from a repaired one: "
                          "packing.sim.simulator.repair_snapshot(instance) or --repair-snapshot")
    host_of = inst.initial.host_array(inst).copy()
    if inst.max_gpus:
        for i, app in enumerate(inst.apps):
            lo = int(inst.offsets[i])
            for j in range(app.count):
                if host_of[lo + j] != UNPLACED:
                    cards[lo + j] = tuple(inst.initial.cards_of(app.name, j))
    return ClusterState.from_placement(inst, host_of, cards if inst.max_gpus else None), host_of, cards


def _is_permutation(o: np.ndarray, n: int) -> bool:
    """Whether ``o`` (int64) is a permutation of ``arange(n)``."""
    return o.shape == (n,) and bool(_permutation_c(np.ascontiguousarray(o)))


@numba.njit(cache=True)
def _permutation_c(o):  # pragma: no cover - compiled
    seen = np.zeros(o.shape[0], dtype=np.bool_)
    for x in o:
        if x < 0 or x >= o.shape[0] or seen[x]:
            return False
        seen[x] = True
    return True


@numba.njit(cache=True)
def _assign_slots(seq, hosts, arrival, free, first_free, n_free, host_of, arrival_of):  # pragma: no cover
    """The k-th placed arrival of app a takes a's k-th free container slot; -1: an app ran out."""
    taken = np.zeros(n_free.shape[0], dtype=np.int64)
    for t in range(seq.shape[0]):
        h = hosts[t]
        if h < 0:
            continue
        a = seq[t]
        if taken[a] >= n_free[a]:
            return a
        j = free[first_free[a] + taken[a]]
        taken[a] += 1
        host_of[j] = h
        arrival_of[j] = arrival[t]
    return -1


class _Slots:
    """Free container indices per app, lowest first (containers of an app are identical)."""

    def __init__(self, inst: Instance, host_of: np.ndarray) -> None:
        self.inst = inst
        free = np.flatnonzero(host_of == UNPLACED)
        cut = np.searchsorted(free, inst.offsets)
        self.free: list[list[int]] = [free[cut[i]:cut[i + 1]].tolist() for i in range(inst.n_apps)]

    def take(self, app: int) -> int:
        if not self.free[app]:
            raise _too_many(self.inst, app)
        return heapq.heappop(self.free[app])

    def give(self, app: int, j: int) -> None:
        heapq.heappush(self.free[app], j)


def _too_many(inst: Instance, app: int) -> InputError:
    return input_error(inst.name, "requests", f"more containers of app {inst.apps[app].name!r} are "
                       f"alive at once than its count ({inst.apps[app].count})")


# ------------------------------------------------------------------------------------------------
class Engine:
    """The stepwise event loop over one instance (see the module docstring).

    Typical use::

        eng = Engine(instance)
        d = eng.reset(order)
        while d is not None:
            d = eng.step(policy.act(eng.observation(), eng.mask()))
        placement = eng.placement()

    Args:
        instance: the instance (its snapshot and request stream).
        wait_when_full: a container that fits nowhere waits for a departure instead of being rejected.
        record: keep the per-decision :class:`Trajectory` (off: only counts and the final state).
        autoscale: run on an autoscaled pool (:mod:`packing.sim.autoscale`; ``None``: every host of
            the instance is there from the start).
    """

    def __init__(self, instance: Instance, *, wait_when_full: bool = False, record: bool = True,
                 autoscale: Autoscale | None = None) -> None:
        self.instance = instance
        self.wait_when_full = wait_when_full
        self.record = record
        self.autoscale = autoscale
        self.pool: Pool | None = None
        """The autoscaled pool of the episode (with ``autoscale``)."""
        self.arrivals = arrivals(instance)
        self._per_app, self._static = _ARRIVAL_FACTS.get(instance, _arrival_facts)
        self.decision: Decision | None = None
        self.last_cards: tuple[int, ...] = ()
        """GPU cards of the container placed last (``()``: none, or no GPU)."""

    # -- episode start ---------------------------------------------------------------------
    def reset(self, order: Sequence[int] | np.ndarray | None = None, *,
              arrange: Arranging | None = None, compiled: Any = None) -> Decision | None:
        """Start an episode from the snapshot and advance to the first decision.

        Args:
            order: a permutation of the arrivals, shape ``(n_arrivals,)`` (default: their own order).
            arrange: an offline policy that reorders the (ordered) arrivals before the episode.
            compiled: a policy; when it has a compiled fast path that applies here (see
                :meth:`can_run_compiled`), the whole episode runs in it and None is returned.

        Returns:
            The first :class:`Decision`, or None when nothing needs deciding.
        """
        inst = self.instance
        arr = self.arrivals
        n = len(arr.app)
        o = np.arange(n, dtype=np.int64) if order is None else np.array(order, dtype=np.int64)
        if not _is_permutation(o, n):
            raise ValueError(f"order must be a permutation of {n} arrivals")
        if arrange is not None:
            perm = np.asarray(arrange.arrange(inst, arr.app[o]), dtype=np.int64)
            if not _is_permutation(perm, n):
                raise PolicyError(f"arrange() of {type(arrange).__name__} did not return a permutation "
                                  f"of {n} arrivals")
            o = o[perm]
        self.order = o
        self.state, self._host_of, self.cards_of = initial_state(inst)
        self._pending_slots: tuple[Any, ...] | None = None
        self._step_cards: np.ndarray | None = None
        self._slots: _Slots | None = None
        self._arrival_of = np.full(inst.n_containers, -1, dtype=np.int64)
        self._alive = 0
        self._heap: list[tuple[float, int, int]] = []
        self._counter = 0
        self._waiting: deque[int] = deque()
        self._retry: deque[int] = deque()
        self._retry_time = 0.0
        self._pos = 0
        self._step = 0
        self.pending = self._per_app.copy()
        self.rejected: list[int] = []
        self.delayed: list[int] = []
        self.departed: list[int] = []
        used = self.state.used_hosts()
        self._n_used = int(used.sum())
        self.peak_hosts = self._n_used
        load, cap = state_loads(self.state, used)
        self._open_load: np.ndarray | None = load.sum(axis=0)
        self._open_cap: np.ndarray | None = cap.sum(axis=0)
        self._rows: list[tuple[float, int, int, int, int, int]] = []
        self._allocs: list[np.ndarray] = []
        self._compiled: Trajectory | None = None
        self._compiled_raw: tuple[Any, ...] = ()
        self._compiled_flag = False
        self._mask: np.ndarray | None = None
        self.decision = None
        if self.autoscale is not None:
            start = float(arr.time[0]) if n else 0.0
            self.pool = Pool(inst, self.autoscale, self.state, start)
        if compiled is not None and self.can_run_compiled(compiled):
            self._run_compiled(compiled)
            return None
        self._advance()
        return self.decision

    # -- reading the current decision -----------------------------------------------------------
    @property
    def done(self) -> bool:
        """Whether the episode has ended (no decision left)."""
        return self.decision is None

    @property
    def hosts_used(self) -> int:
        """Hosts running at least one container now."""
        return self._n_used

    @property
    def n_arrivals(self) -> int:
        """Number of arrivals in the episode."""
        return len(self.arrivals.app)

    @property
    def waiting(self) -> list[int]:
        """Arrival indices waiting for a departure now (FIFO order)."""
        return list(self._waiting) + list(self._retry)

    def mask(self) -> np.ndarray:
        """Hosts that can take the current decision's container, shape ``(n_hosts,)`` bool."""
        if self.decision is None:
            return np.zeros(self.instance.n_hosts, dtype=bool)
        if self._mask is None:
            self._mask = self._admits(self.decision)
        return self._mask

    def observation(self) -> Observation:
        """The :class:`~packing.sim.policy.Observation` of the current decision (for policies)."""
        d = self.decision
        if d is None:
            raise RuntimeError("the episode has ended: no decision to observe")
        return Observation(self.state, d.app, d.time, d.step, self.pending.copy())

    def allocation(self) -> np.ndarray:
        """Sigma allocation rate per metric resource now, shape ``(n_metric_resources,)``."""
        if self._open_load is None:
            load, cap = state_loads(self.state, self.state.n_on > 0)
            self._open_load, self._open_cap = load.sum(axis=0), cap.sum(axis=0)
        assert self._open_cap is not None
        return sigma_rate(self._open_load, self._open_cap)

    # -- acting ---------------------------------------------------------------------------------
    def step(self, action: int, cards: Sequence[int] | None = None) -> Decision | None:
        """Apply ``action`` to the current decision (see :meth:`apply`) and return the next decision."""
        self.apply(action, cards)
        return self.decision

    def apply(self, action: int, cards: Sequence[int] | None = None) -> int:
        """Apply an action to the current decision, then advance to the next one.

        Args:
            action: a host where :meth:`mask` is True, :data:`~packing.sim.policy.WAIT` or :data:`REJECT`.
            cards: GPU cards for a host action (default: the fullest fitting cards).

        Returns:
            The outcome: :data:`PLACED`, :data:`DELAYED` or :data:`REJECTED`.

        Raises:
            PolicyError: a host outside the mask, cards that do not fit, or an unknown action.
            RuntimeError: the episode has ended.
        """
        d = self.decision
        if d is None:
            raise RuntimeError("the episode has ended: call reset()")
        inst = self.instance
        try:
            h = int(action)
        except (TypeError, ValueError):
            raise PolicyError(f"action {action!r} is not a host index") from None
        if h >= 0:
            if h >= inst.n_hosts or not self.mask()[h]:
                raise PolicyError(f"host {h} was chosen for app {inst.apps[d.app].name!r}, which the "
                                  "mask forbids")
            self._place(d, h, self._cards(d.app, h, cards))
            outcome = PLACED
        elif h == WAIT:
            outcome = DELAYED
        elif h == REJECT:
            outcome = REJECTED
        else:
            raise PolicyError(f"action {h} is neither a host, WAIT ({WAIT}) nor REJECT ({REJECT})")
        self._resolve(d, outcome, h)
        self._advance()
        return outcome

    def _cards(self, app: int, host: int, cards: Sequence[int] | None) -> tuple[int, ...]:
        st = self.state
        if cards is None:
            return st.choose_cards(app, host)
        c = tuple(int(g) for g in cards)
        k = int(self.instance.gpu_cards[app])
        fitting = set(st.cards_fitting(app, host).tolist()) if k else set()
        if len(c) != k or len(set(c)) != k or not set(c) <= fitting:
            raise PolicyError(f"cards {c} for app {self.instance.apps[app].name!r} on host {host}: "
                              f"need {k} distinct cards among those that fit {sorted(fitting)}")
        return tuple(sorted(c))

    def _place(self, d: Decision, h: int, cards: tuple[int, ...]) -> None:
        st = self.state
        if self._slots is None:
            self._slots = _Slots(self.instance, self._host_of)
        was_open = st.n_on[h] > 0
        if was_open:
            load0 = state_loads(st, h)[0].copy()
        j = self._slots.take(d.app)
        st.place(d.app, h, cards)
        load1, cap1 = state_loads(st, h)
        if was_open:
            self._open_load += load1 - load0
        else:
            self._open_load += load1
            self._open_cap += cap1
            self._n_used += 1
            self.peak_hosts = max(self.peak_hosts, self._n_used)
        self._host_of[j] = h
        if self.pool is not None:
            self.pool.filled(h)
        self.cards_of[j] = cards
        self.last_cards = cards
        self._arrival_of[j] = d.arrival
        self._alive += 1
        dur = float(self.arrivals.duration[d.arrival])
        if np.isfinite(dur):
            heapq.heappush(self._heap, (d.time + dur, self._counter, j))
            self._counter += 1

    def _resolve(self, d: Decision, outcome: int, h: int) -> None:
        if outcome == DELAYED:
            if not d.retry:
                self.delayed.append(d.arrival)
            self._waiting.append(d.arrival)
        elif outcome == REJECTED:
            self.rejected.append(d.arrival)
        if self.record:
            self._rows.append((d.time, d.arrival, d.app, h if outcome == PLACED else -1, outcome,
                               self._n_used))
            self._allocs.append(self.allocation())
            if self.pool is not None:
                self.pool.sizes.append(self.pool.size)
        self._step += 1
        self.decision = None
        self._mask = None

    def _depart(self) -> None:
        t, _, j = heapq.heappop(self._heap)
        st = self.state
        if self.pool is not None:
            self.pool.advance(t)
        app = int(self.instance.container_app[j])
        h = int(self._host_of[j])
        load0, cap0 = (x.copy() for x in state_loads(st, h))
        st.remove(app, h, self.cards_of[j])
        if st.n_on[h] == 0:
            if self.pool is not None:
                self.pool.emptied(h, t)
            self._open_load -= load0
            self._open_cap -= cap0
            self._n_used -= 1
            if self._n_used == 0:  # clean float residue
                self._open_load[:] = 0.0
                self._open_cap[:] = 0.0
        else:
            self._open_load += state_loads(st, h)[0] - load0
        self._host_of[j] = UNPLACED
        self.cards_of[j] = ()
        self.departed.append(int(self._arrival_of[j]))
        self._arrival_of[j] = -1
        self._alive -= 1
        assert self._slots is not None
        self._slots.give(app, j)
        self._retry.extend(self._waiting)  # every waiting request is retried once, in FIFO order
        self._waiting.clear()
        self._retry_time = t

    def _advance(self) -> None:
        """Move to the next decision that needs an action (resolving empty-mask ones)."""
        arr = self.arrivals
        n = len(arr.app)
        while True:
            if self._retry:
                a = self._retry.popleft()
                d = Decision(a, int(arr.app[a]), self._retry_time, self._step, True)
            elif self._pos < n:
                now = float(arr.time[self._pos])
                if self._heap and self._heap[0][0] <= now:
                    self._depart()
                    continue
                a = int(self.order[self._pos])
                self._pos += 1
                app = int(arr.app[a])
                self.pending[app] -= 1
                d = Decision(a, app, now, self._step, False)
            elif self._waiting and self._heap:
                self._depart()
                continue
            else:
                self.decision = None
                return
            mask = self._admits(d)
            if mask.any():
                self.decision = d
                self._mask = mask
                return
            self._resolve(d, DELAYED if self.wait_when_full else REJECTED, -1)

    def _admits(self, d: Decision) -> np.ndarray:
        """The hosts that can take ``d``'s container: in the pool, else a node the pool opens for it."""
        fits = self.state.mask(d.app)
        pool = self.pool
        if pool is None:
            return fits
        pool.advance(d.time)
        mask = pool.mask(fits)
        if not mask.any():
            h = pool.scale_up(fits, d.app, d.time)
            if h is not None:
                mask[h] = True
        return mask

    # -- the compiled fast path -----------------------------------------------------------------
    def can_run_compiled(self, policy: Any) -> bool:
        """Whether the compiled fast path applies: a fresh episode without departures or waiting."""
        return (implements(policy, CompiledEpisode) and not self.wait_when_full and self.pool is None
                and self._slots is None and not self.departed
                and self._static
                and bool(policy.compiled_supports(self.state)))

    def _run_compiled(self, policy: CompiledEpisode) -> None:
        """Run the fresh episode in the policy's compiled kernel (see the module docstring)."""
        self._rewind()
        inst = self.instance
        arr = self.arrivals
        order = self.order
        seq = arr.app[order]
        start_n = self._n_used
        out = policy.compiled_episode(self.state, np.ascontiguousarray(seq))
        hosts, n_used = out[0], out[1]
        # GPU instances: the kernel also returns the cards per arrival, shape (n, G), -1 padded
        self._step_cards = out[2] if len(out) > 2 else None
        if inst.max_gpus and self._step_cards is None:
            raise PolicyError(f"{type(policy).__name__}.compiled_episode returned no GPU cards")
        if inst.initial is None:  # every container slot is free
            free, first_free, n_free = _all_free(inst)
        else:
            free = np.flatnonzero(self._host_of == UNPLACED)
            first_free = np.searchsorted(free, inst.offsets[:-1])
            n_free = np.searchsorted(free, inst.offsets[1:]) - first_free
        if np.any(self._per_app > n_free):  # more arrivals than slots: count the placed ones
            over = np.bincount(seq[hosts >= 0], minlength=inst.n_apps) > n_free
            if over.any():
                raise _too_many(inst, int(np.argmax(over)))
        # which container slot each placed arrival takes is settled when host_of is first read
        self._pending_slots = (seq, hosts, order, free, first_free, n_free)
        self.pending[:] = 0
        n = len(seq)
        self._pos = n
        self._step = n
        placed = hosts >= 0
        n_placed = int(np.count_nonzero(placed))
        self._alive = n_placed
        self.rejected = order[~placed].tolist() if n_placed < n else []
        self._n_used = int(n_used[-1]) if n else self._n_used
        self.peak_hosts = max(self.peak_hosts, self._n_used)
        self._compiled_raw = (seq, hosts, n_used, start_n, self._open_load, self._open_cap)
        self._open_load = self._open_cap = None  # recomputed on demand
        self._compiled_flag = True
        self.decision = None
        self._mask = None

    def _compiled_trajectory(self) -> Trajectory:
        """The record of a compiled episode, from its hosts.

        Loads only grow, and a host opens exactly when the count of hosts in use grows.
        """
        seq, hosts, n_used, start_n, start_load, start_cap = self._compiled_raw
        inst = self.instance
        placed = hosts >= 0
        dem = np.where(placed[:, None], inst.demand[seq], 0.0)
        opened = np.diff(n_used, prepend=start_n) > 0
        cap_add = np.where(opened[:, None], self.state.capacity[np.maximum(hosts, 0)], 0.0)
        if inst.gpu_resources:  # GPU metric columns: the load of the chosen cards, whole hosts' cards
            hh = np.maximum(hosts, 0)
            whole = np.array([a.gpu_whole for a in inst.apps], dtype=bool)[seq]
            per_card = np.where(whole[:, None], self.state.card_capacity[hh],
                                np.where(np.isfinite(inst.gpu_demand[seq]), inst.gpu_demand[seq], 0.0))
            n_cards = (self._step_cards >= 0).sum(axis=1) if self._step_cards is not None else 0
            dem = np.concatenate([dem, np.where(placed[:, None], per_card * np.reshape(n_cards, (-1, 1)),
                                                0.0)], axis=1)
            cap_add = np.concatenate([cap_add, np.where(
                opened[:, None], self.state.card_capacity[hh] * inst.host_gpus[hh][:, None], 0.0)], axis=1)
        alloc = sigma_rate(start_load + np.cumsum(dem, axis=0), start_cap + np.cumsum(cap_add, axis=0))
        return Trajectory(self.arrivals.time, _ro(self.order.copy()), _ro(seq), _ro(hosts),
                          _ro(np.where(placed, PLACED, REJECTED).astype(np.int8)), _ro(n_used), _ro(alloc))

    def _rewind(self) -> None:
        """Back to the episode's start (only valid while nothing was placed and nothing departed)."""
        self.pending = self._per_app.copy()
        self._pos = 0
        self._step = 0
        self.rejected, self.delayed = [], []
        self._waiting.clear()
        self._retry.clear()
        self._rows.clear()
        self._allocs.clear()
        self.decision = None
        self._mask = None

    # -- results --------------------------------------------------------------------------------
    @property
    def host_of(self) -> np.ndarray:
        """Host per container now, shape ``(n_containers,)`` (-1: not on a host)."""
        if self._pending_slots is not None:
            seq, hosts, order, free, first_free, n_free = self._pending_slots
            self._pending_slots = None
            _assign_slots(seq, hosts, order, free, first_free, n_free, self._host_of, self._arrival_of)
            if self._step_cards is not None:  # cards per container from the cards per arrival
                step_of = np.empty(len(order), dtype=np.int64)
                step_of[order] = np.arange(len(order))
                for j in np.flatnonzero(self._arrival_of >= 0):
                    row = self._step_cards[step_of[self._arrival_of[j]]]
                    self.cards_of[j] = tuple(int(c) for c in row if c >= 0)
        return self._host_of

    def placement(self) -> Placement:
        """Containers alive now, as a :class:`Placement` (for :func:`~packing.feasibility.checker.check`)."""
        inst = self.instance
        return Placement.from_arrays(inst, self.host_of, self.cards_of if inst.max_gpus else None)

    def trajectory(self) -> Trajectory:
        """The per-decision record so far (empty arrays when built with ``record=False``)."""
        if self._compiled_flag:
            if self._compiled is None:
                self._compiled = self._compiled_trajectory()
            return self._compiled
        rows = self._rows
        m = len(self.allocation())
        cols = list(zip(*rows, strict=True)) if rows else [()] * 6
        return Trajectory(
            _ro(np.array(cols[0], dtype=np.float64)), _ro(np.array(cols[1], dtype=np.int64)),
            _ro(np.array(cols[2], dtype=np.int64)), _ro(np.array(cols[3], dtype=np.int64)),
            _ro(np.array(cols[4], dtype=np.int8)), _ro(np.array(cols[5], dtype=np.int64)),
            _ro(np.array(self._allocs, dtype=np.float64).reshape(len(self._allocs), m)))

    @property
    def ran_compiled(self) -> bool:
        """Whether the compiled fast path ran this episode."""
        return self._compiled_flag

    def alive(self) -> int:
        """Containers placed by the episode that are still on a host."""
        return self._alive


__all__ = ["DELAYED", "PLACED", "REJECT", "REJECTED", "Arrivals", "Decision", "Engine", "Trajectory",
           "arrivals", "initial_state"]
