"""A Cerebro-style scheduler simulator: replay arrivals, ask a policy for a host, record what happens.

The simulator starts from a snapshot (empty hosts, or ``instance.initial``) and replays a stream of
*arrivals*, one container each:

* from ``instance.requests`` (each request of ``count`` containers gives ``count`` arrivals at its
  time, leaving at ``end``), sorted by time with ties kept in stream order; or
* when the instance has no requests, one arrival per container not in the snapshot, in app order, at
  times ``0, 1, 2, ...``.

An *order* is a permutation of the arrivals. Arrival slots keep their times; the order decides which
container arrives in which slot, and a container keeps its own duration (``end - time``). So a shuffled
order replays the same timeline with the requests permuted (see :func:`sample_orders`).

For each arrival the simulator builds the feasibility mask with :meth:`ClusterState.mask` (the one
feasibility logic, shared with :func:`packing.checker.check`) and asks the policy. Outcomes:

* **placed** on the chosen host (GPU cards from the policy's ``choose_cards(obs, host)`` if it has one,
  else :meth:`ClusterState.choose_cards`), with a departure pushed on a heap keyed by
  ``(time, insertion counter, container)`` so that ties break deterministically;
* **rejected** when no host can take it (unless the policy sets ``wait_when_full``);
* **delayed** when the policy returns :data:`policies.base.WAIT` (or nothing fits and it waits): the request
  is retried, in FIFO order, after each later departure. Departures at a time ``<=`` an arrival's time
  happen before it. After the last arrival, departures keep being processed while requests wait; the
  requests still waiting after that are reported in :attr:`SimulationResult.waiting`.

The final placement (containers alive at the end) is passed through :func:`packing.checker.check`.

Scoring policies with a compiled kernel (:mod:`policies.kernels`) run the whole episode in one compiled
loop when the instance has no GPU demand, no departures, and the policy does not wait; that loop applies the
same predicates. Results are identical to the general path (tested).
"""

from __future__ import annotations

import dataclasses
import heapq
import weakref
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from packing.checker import check
from packing.errors import Problem, input_error
from packing.feasibility import ClusterState
from packing.model import UNPLACED, Instance, Placement, Request

PLACED, REJECTED, DELAYED = 0, 1, 2
"""Outcome codes of a decision in :attr:`Trajectory.outcome`."""


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
        allocation: load over capacity of the hosts in use, per resource, after the decision,
            shape ``(n_steps, n_resources)`` (0 while no host is used).
    """

    time: np.ndarray
    arrival: np.ndarray
    app: np.ndarray
    host: np.ndarray
    outcome: np.ndarray
    hosts_used: np.ndarray
    allocation: np.ndarray


@dataclass(frozen=True)
class SimulationResult:
    """What one simulated run returns (arrays are read-only).

    Attributes:
        policy: the policy's name.
        placement: containers alive at the end, accepted by :func:`packing.checker.check`.
        hosts_used: hosts in use at the end.
        peak_hosts: most hosts in use at any time.
        cost: total cost of the hosts in use at the end.
        order: the arrival order actually replayed (after the policy's ``arrange``), shape ``(n,)``.
        rejected: arrival indices rejected, shape ``(n_rejected,)``.
        delayed: arrival indices delayed at least once, shape ``(n_delayed,)``.
        waiting: arrival indices still waiting at the end (never placed), shape ``(n_waiting,)``.
        departed: arrival indices whose container left, shape ``(n_departed,)``.
        trajectory: per-decision records.
        arrivals: the arrival slots.
        compiled: whether the compiled kernel ran the episode.
    """

    policy: str
    placement: Placement
    hosts_used: int
    peak_hosts: int
    cost: float
    order: np.ndarray
    rejected: np.ndarray
    delayed: np.ndarray
    waiting: np.ndarray
    departed: np.ndarray
    trajectory: Trajectory
    arrivals: Arrivals
    compiled: bool = False

    @property
    def n_rejected(self) -> int:
        """Number of rejected arrivals."""
        return len(self.rejected)

    @property
    def n_delayed(self) -> int:
        """Number of arrivals delayed at least once."""
        return len(self.delayed)

    def rejected_by_app(self, instance: Instance) -> dict[str, int]:
        """Rejected arrivals per app name (apps with none are left out)."""
        counts = np.bincount(self.arrivals.app[self.rejected], minlength=instance.n_apps)
        return {instance.apps[i].name: int(counts[i]) for i in np.flatnonzero(counts)}

    def summary(self) -> dict[str, Any]:
        """Plain numbers for JSON output."""
        return {"policy": self.policy, "hosts_used": self.hosts_used, "peak_hosts": self.peak_hosts,
                "cost": self.cost, "placed": self.placement.n_placed, "rejected": self.n_rejected,
                "delayed": self.n_delayed, "waiting": len(self.waiting), "departed": len(self.departed)}


# ------------------------------------------------------------------------------------------------
def arrivals(instance: Instance) -> Arrivals:
    """The arrival slots of ``instance`` (see the module docstring)."""
    inst = instance
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
            from packing.errors import InputError

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


def sample_orders(instance: Instance, k: int, seed: int = 0, *, include_own: bool = True,
                  unit: str = "request") -> list[np.ndarray]:
    """``k`` arrival orders: the instance's own order first (if ``include_own``), then seeded shuffles.

    With ``unit="request"`` (default) whole requests are shuffled — a deployment of ``count`` containers
    stays together, as deployments arrive in a real cluster; with ``unit="container"`` single containers
    are. Without requests both are the same. The same ``(instance, k, seed, unit)`` always gives the same
    orders, so every policy is evaluated on the same orders (common random numbers).

    Returns:
        ``k`` permutations of the arrivals, each of shape ``(n_arrivals,)``.
    """
    if k < 1:
        raise ValueError("k must be at least 1")
    if unit not in ("request", "container"):
        raise ValueError(f"unit must be 'request' or 'container', got {unit!r}")
    arr = arrivals(instance)
    n = len(arr.app)
    rng = np.random.default_rng(seed)
    out: list[np.ndarray] = []
    if include_own:
        out.append(np.arange(n, dtype=np.int64))
    blocks = arr.request if unit == "request" else np.arange(n)
    ids, first = np.unique(blocks, return_index=True)
    ids = ids[np.argsort(first)]  # blocks in their own order
    members = [np.flatnonzero(blocks == b) for b in ids] if unit == "request" else None
    while len(out) < k:
        if members is None:
            out.append(rng.permutation(n).astype(np.int64))
        else:
            perm = rng.permutation(len(members))
            out.append(np.concatenate([members[i] for i in perm] or [np.zeros(0, np.int64)]).astype(
                np.int64))
    return out


_SNAPSHOTS_OK: dict[int, weakref.ref[Instance]] = {}
"""Instances whose snapshot was already checked, by ``id`` (the weak reference guards reused ids)."""


def _check_snapshot(inst: Instance) -> None:
    assert inst.initial is not None
    ref = _SNAPSHOTS_OK.get(id(inst))
    if ref is not None and ref() is inst:
        return
    viol = check(inst, inst.initial)
    if viol:
        raise input_error(inst.name, "initial", f"the snapshot is infeasible ({len(viol)} violations; "
                          f"first: {viol[0]}); start from a repaired one: "
                          "packing.simulator.repair_snapshot(instance) or --repair-snapshot")
    if len(_SNAPSHOTS_OK) > 64:
        _SNAPSHOTS_OK.clear()
    _SNAPSHOTS_OK[id(inst)] = weakref.ref(inst)


def repair_snapshot(instance: Instance) -> tuple[Instance, int]:
    """A copy of ``instance`` whose snapshot is feasible: containers that break it become arrivals.

    Real snapshots may break constraints (Tianchi 2018's deployment overloads some hosts). Containers on
    hosts without violations stay. On each host with a violation, containers are put back one by one in
    container order while :meth:`ClusterState.mask` allows it; the others leave the snapshot (they then
    arrive first in the simulator, in app order). Containers on unknown hosts leave it too.

    Returns:
        ``(instance, moved)``: the repaired instance (``meta["snapshot_repaired"]`` = moved) and the number
        of containers taken out of the snapshot.
    """
    inst = instance
    if inst.initial is None:
        return inst, 0
    viol = check(inst, inst.initial)
    if not viol:
        return inst, 0
    bad = {v.host for v in viol if v.host is not None}
    host_of = inst.initial.host_array(inst).copy()
    host_of[(host_of < 0) | (host_of >= inst.n_hosts)] = UNPLACED
    apps = inst.container_app
    on_bad = np.isin(host_of, np.array(sorted(bad), dtype=np.int64))
    keep = (host_of != UNPLACED) & ~on_bad
    cards_all = [tuple(inst.initial.cards_of(inst.apps[int(apps[j])].name,
                                             j - int(inst.offsets[int(apps[j])]))) for j in range(
        inst.n_containers)] if inst.max_gpus else None
    st = ClusterState.from_placement(inst, np.where(keep, host_of, UNPLACED), cards_all)
    from policies.kernels import host_checker

    can_place = host_checker(st)
    moved = 0
    for j in np.flatnonzero(on_bad):
        a, h = int(apps[j]), int(host_of[j])
        c = cards_all[j] if cards_all is not None else ()
        ok = can_place(a, h)
        if ok and inst.gpu_cards[a]:
            ok = len(c) == inst.gpu_cards[a] and all(g in st.cards_fitting(a, h) for g in c)
        if ok:
            st.place(a, h, c)
        else:
            host_of[j] = UNPLACED
            moved += 1
    initial = Placement.from_arrays(inst, host_of, cards_all)
    meta = {**inst.meta, "snapshot_repaired": moved}
    return inst.replace(initial=initial, meta=meta), moved


def resample_snapshot(instance: Instance, keep: float = 0.9, seed: int = 0) -> Instance:
    """A copy of ``instance`` whose snapshot keeps each placed container with probability ``keep``.

    The containers taken out arrive first (before the request stream, in app order; without a
    request stream they simply join the arrivals), so the same containers are placed in every
    resampled copy, from a different starting state. Seeded: the same ``(keep, seed)`` gives the
    same copy. An instance without a snapshot is returned unchanged.

    Args:
        instance: the instance; its snapshot must be feasible (see :func:`repair_snapshot`).
        keep: probability that a placed container stays in the snapshot, in ``[0, 1]``.
        seed: seed of the owned generator.
    """
    if not 0.0 <= keep <= 1.0:
        raise ValueError(f"keep must be in [0, 1], got {keep}")
    inst = instance
    if inst.initial is None:
        return inst
    host_of = inst.initial.host_array(inst).copy()
    placed = np.flatnonzero(host_of != UNPLACED)
    rng = np.random.default_rng(seed)
    out = placed[rng.random(len(placed)) >= keep]
    host_of[out] = UNPLACED
    cards = ([tuple(inst.initial.cards_of(inst.apps[int(a)].name, j - int(inst.offsets[int(a)])))
              for j, a in enumerate(inst.container_app)] if inst.max_gpus else None)
    initial = Placement.from_arrays(inst, host_of, cards)
    requests = inst.requests
    if requests:
        t0 = min(q.time for q in requests)
        moved = np.bincount(inst.container_app[out], minlength=inst.n_apps)
        first = tuple(Request(t0, inst.apps[a].name, int(moved[a])) for a in np.flatnonzero(moved))
        requests = first + requests
    meta = {**inst.meta, "snapshot_resampled": {"keep": keep, "seed": seed, "moved": len(out)}}
    return inst.replace(initial=initial, requests=requests, meta=meta)


def evaluate_snapshots(policy: Any, instance: Instance, k: int, *, keep: float = 0.9, seed: int = 0,
                       check_result: bool = True, progress: Callable[[], None] | None = None
                       ) -> Samples:
    """Run ``policy`` on ``k`` resampled snapshots (see :func:`resample_snapshot`), each in its own order.

    Snapshot ``i`` uses seed ``run_seed(seed, i)`` for the resampling and the policy, so every policy
    meets the same snapshots (common random numbers).
    """
    results = []
    for i in range(k):
        s = run_seed(seed, i)
        results.append(simulate(resample_snapshot(instance, keep, s), policy, seed=s,
                                check_result=check_result))
        if progress is not None:
            progress()
    hosts = np.array([r.hosts_used for r in results], dtype=np.int64)
    return Samples(results[0].policy if results else str(getattr(policy, "name", "?")),
                   tuple(results), _ro(hosts))


def static_view(instance: Instance) -> Instance:
    """A copy of ``instance`` whose requests never leave (``end`` dropped).

    Every container then arrives and stays: the problem the offline solvers solve. Returns ``instance``
    itself when nothing departs.
    """
    if all(q.end is None for q in instance.requests):
        return instance
    reqs = tuple(dataclasses.replace(q, end=None) for q in instance.requests)
    return instance.replace(requests=reqs, meta={**instance.meta, "departures_dropped": True})


def _initial_state(inst: Instance) -> tuple[ClusterState, np.ndarray, list[tuple[int, ...]]]:
    """The snapshot state, host per container ``(n_containers,)`` and cards per container."""
    st = ClusterState(inst)
    host_of = np.full(inst.n_containers, UNPLACED, dtype=np.int64)
    cards: list[tuple[int, ...]] = [()] * inst.n_containers
    if inst.initial is not None:
        host_of = inst.initial.host_array(inst).copy()
        _check_snapshot(inst)
        apps = inst.container_app
        for i, app in enumerate(inst.apps):
            lo = int(inst.offsets[i])
            for j in range(app.count):
                h = int(host_of[lo + j])
                if h != UNPLACED:
                    c = inst.initial.cards_of(app.name, j)
                    cards[lo + j] = tuple(c)
                    st.place(int(apps[lo + j]), h, c)
    return st, host_of, cards


def _allocation(st: ClusterState) -> np.ndarray:
    on = st.n_on > 0
    cap = st.capacity[on].sum(axis=0)
    return np.where(cap > 0, st.used[on].sum(axis=0) / np.where(cap > 0, cap, 1.0), 0.0)


class _Slots:
    """Free container indices per app, lowest first (containers of an app are identical)."""

    def __init__(self, inst: Instance, host_of: np.ndarray) -> None:
        self.inst = inst
        self.free: list[list[int]] = []
        for i in range(inst.n_apps):
            lo, hi = int(inst.offsets[i]), int(inst.offsets[i + 1])
            self.free.append([j for j in range(lo, hi) if host_of[j] == UNPLACED])
            heapq.heapify(self.free[-1])

    def take(self, app: int) -> int:
        if not self.free[app]:
            raise input_error(self.inst.name, "requests", f"more containers of app "
                              f"{self.inst.apps[app].name!r} are alive at once than its count "
                              f"({self.inst.apps[app].count})")
        return heapq.heappop(self.free[app])

    def give(self, app: int, j: int) -> None:
        heapq.heappush(self.free[app], j)


def simulate(instance: Instance, policy: Any, order: Sequence[int] | np.ndarray | None = None, *,
             seed: int | None = 0, check_result: bool = True, compiled: bool = True) -> SimulationResult:
    """Replay the arrivals of ``instance`` in ``order`` with ``policy``.

    Args:
        instance: the instance (its snapshot and request stream).
        policy: any :class:`policies.base.Policy`.
        order: a permutation of the arrivals, shape ``(n_arrivals,)`` (default: their own order).
        seed: passed to ``policy.reset``.
        check_result: pass the final placement through :func:`packing.checker.check` and raise
            ``RuntimeError`` on any violation (a bug, never a user error).
        compiled: allow the compiled kernel when it applies.

    Returns:
        The :class:`SimulationResult`.
    """
    from policies import kernels
    from policies.base import WAIT, Observation, ScoringPolicy

    inst = instance
    arr = arrivals(inst)
    n = len(arr.app)
    order = np.arange(n, dtype=np.int64) if order is None else np.asarray(order, dtype=np.int64)
    if order.shape != (n,) or not np.array_equal(np.sort(order), np.arange(n)):
        raise ValueError(f"order must be a permutation of {n} arrivals")
    policy.reset(inst, seed)
    arrange = getattr(policy, "arrange", None)
    if arrange is not None:
        order = order[np.asarray(arrange(inst, arr.app[order]), dtype=np.int64)]
    name = str(getattr(policy, "name", type(policy).__name__))
    st, host_of, cards_of = _initial_state(inst)
    slots = _Slots(inst, host_of)
    wait_when_full = bool(getattr(policy, "wait_when_full", False))

    use_kernel = (compiled and isinstance(policy, ScoringPolicy) and policy.kernel is not None
                  and type(policy).act is ScoringPolicy.act and not wait_when_full
                  and bool(np.all(np.isinf(arr.duration))) and kernels.supports(st))
    if use_kernel:
        return _run_compiled(inst, policy, name, arr, order, st, host_of, slots, check_result)

    times, arrs, apps, hosts, outcomes, n_used, allocs = [], [], [], [], [], [], []
    arrival_of = np.full(inst.n_containers, -1, dtype=np.int64)
    rejected: list[int] = []
    delayed: list[int] = []
    departed: list[int] = []
    waiting: deque[int] = deque()
    heap: list[tuple[float, int, int]] = []
    counter = 0
    pending = np.bincount(arr.app, minlength=inst.n_apps).astype(np.int64)
    peak = int(st.used_hosts().sum())
    step = 0
    choose_cards = getattr(policy, "choose_cards", None)

    def decide(a_idx: int, now: float, retry: bool) -> bool:
        nonlocal counter, peak, step
        app = int(arr.app[a_idx])
        mask = st.mask(app)
        obs = Observation(st, app, now, step, pending.copy())
        if mask.any():
            h = int(policy.act(obs, mask))
            if h != WAIT and not (0 <= h < inst.n_hosts and mask[h]):
                raise ValueError(f"policy {name!r} chose host {h} for app {inst.apps[app].name!r}, "
                                 "which the mask forbids")
        else:
            h = WAIT if wait_when_full else -2
        if h >= 0:
            cards = tuple(choose_cards(obs, h)) if choose_cards is not None else st.choose_cards(app, h)
            j = slots.take(app)
            st.place(app, h, cards)
            host_of[j] = h
            cards_of[j] = cards
            arrival_of[j] = a_idx
            if np.isfinite(arr.duration[a_idx]):
                heapq.heappush(heap, (now + float(arr.duration[a_idx]), counter, j))
                counter += 1
            outcome = PLACED
        elif h == WAIT:
            outcome = DELAYED
            if not retry:
                delayed.append(a_idx)
        else:
            outcome = REJECTED
            rejected.append(a_idx)
        n_on = int(st.used_hosts().sum())
        peak = max(peak, n_on)
        times.append(now)
        arrs.append(a_idx)
        apps.append(app)
        hosts.append(max(h, -1))
        outcomes.append(outcome)
        n_used.append(n_on)
        allocs.append(_allocation(st))
        step += 1
        return outcome == PLACED

    def depart() -> float:
        t, _, j = heapq.heappop(heap)
        app = int(inst.container_app[j])
        st.remove(app, int(host_of[j]), cards_of[j])
        host_of[j] = UNPLACED
        cards_of[j] = ()
        departed.append(int(arrival_of[j]))
        arrival_of[j] = -1
        slots.give(app, j)
        for _ in range(len(waiting)):  # retry each waiting request once, in FIFO order
            w = waiting.popleft()
            if not decide(w, t, retry=True):
                waiting.append(w)
        return t

    for t_slot, a_idx in enumerate(order):
        now = float(arr.time[t_slot])
        while heap and heap[0][0] <= now:
            depart()
        pending[arr.app[a_idx]] -= 1
        if not decide(int(a_idx), now, retry=False) and outcomes[-1] == DELAYED:
            waiting.append(int(a_idx))
    while waiting and heap:
        depart()

    placement = Placement.from_arrays(inst, host_of, cards_of if inst.max_gpus else None)
    if check_result:
        _check(inst, placement, name)
    alive = int(np.sum(arrival_of >= 0))
    if alive + len(rejected) + len(waiting) + len(departed) != n:  # pragma: no cover - invariant
        raise RuntimeError("simulator lost track of an arrival")
    used_mask = st.used_hosts()
    n_res = inst.n_resources
    traj = Trajectory(
        _ro(np.array(times, dtype=np.float64)), _ro(np.array(arrs, dtype=np.int64)),
        _ro(np.array(apps, dtype=np.int64)), _ro(np.array(hosts, dtype=np.int64)),
        _ro(np.array(outcomes, dtype=np.int8)), _ro(np.array(n_used, dtype=np.int64)),
        _ro(np.array(allocs, dtype=np.float64).reshape(len(allocs), n_res)))
    return SimulationResult(
        name, placement, int(used_mask.sum()), peak, float(inst.host_cost[used_mask].sum()), _ro(order),
        _ro(np.array(rejected, dtype=np.int64)), _ro(np.array(sorted(delayed), dtype=np.int64)),
        _ro(np.array(sorted(waiting), dtype=np.int64)), _ro(np.array(sorted(departed), dtype=np.int64)),
        traj, arr, compiled=False)


def _check(inst: Instance, placement: Placement, name: str) -> None:
    viol = check(inst, placement)
    if viol:
        raise RuntimeError(f"policy {name!r} produced an infeasible placement (simulator bug): {viol[0]}")


def _run_compiled(inst: Instance, policy: Any, name: str, arr: Arrivals, order: np.ndarray,
                  st: ClusterState, host_of: np.ndarray, slots: _Slots, check_result: bool
                  ) -> SimulationResult:
    from policies import kernels

    seq = arr.app[order]
    start_used = st.used_hosts().copy()
    start_load = st.used[start_used].sum(axis=0)
    start_cap = st.capacity[start_used].sum(axis=0)
    hosts, n_used = kernels.episode(st, seq, int(policy.kernel), policy.kernel_params(inst),
                                    bool(policy.open_first))
    placed = hosts >= 0
    for a, h in zip(seq[placed], hosts[placed], strict=True):
        host_of[slots.take(int(a))] = h
    placement = Placement.from_arrays(inst, host_of)
    if check_result:
        _check(inst, placement, name)
    # allocation after each step: loads only grow, hosts only open
    load = start_load + np.cumsum(np.where(placed[:, None], inst.demand[seq], 0.0), axis=0)
    first = np.zeros(len(seq), dtype=bool)
    opened = start_used.copy()
    for t in np.flatnonzero(placed):
        h = hosts[t]
        if not opened[h]:
            opened[h] = True
            first[t] = True
    cap = start_cap + np.cumsum(np.where(first[:, None], st.capacity[np.maximum(hosts, 0)], 0.0), axis=0)
    alloc = np.where(cap > 0, load / np.where(cap > 0, cap, 1.0), 0.0)
    n = len(seq)
    traj = Trajectory(_ro(arr.time.copy()), _ro(order.copy()), _ro(seq.copy()),
                      _ro(hosts.copy()), _ro(np.where(placed, PLACED, REJECTED).astype(np.int8)),
                      _ro(n_used), _ro(alloc.reshape(n, inst.n_resources)))
    used_mask = st.used_hosts()
    peak = int(max(int(start_used.sum()), int(n_used.max()) if n else 0))
    empty = _ro(np.zeros(0, dtype=np.int64))
    return SimulationResult(
        name, placement, int(used_mask.sum()), peak, float(inst.host_cost[used_mask].sum()), _ro(order),
        _ro(order[~placed].copy()), empty, empty, empty, traj, arr, compiled=True)


# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Samples:
    """A policy evaluated on several orders.

    Attributes:
        policy: the policy's name.
        results: one :class:`SimulationResult` per order.
        hosts: hosts used at the end per order, shape ``(n_orders,)``.
    """

    policy: str
    results: tuple[SimulationResult, ...]
    hosts: np.ndarray

    @property
    def mean(self) -> float:
        """Mean hosts used."""
        return float(self.hosts.mean())

    @property
    def min(self) -> int:
        """Fewest hosts used."""
        return int(self.hosts.min())

    @property
    def max(self) -> int:
        """Most hosts used."""
        return int(self.hosts.max())

    @property
    def range(self) -> int:
        """``max - min``."""
        return self.max - self.min

    @property
    def rejected(self) -> np.ndarray:
        """Rejected arrivals per order, shape ``(n_orders,)``."""
        return np.array([r.n_rejected for r in self.results], dtype=np.int64)


def run_seed(seed: int, i: int) -> int:
    """The policy seed of the ``i``-th order under ``seed`` (the same for every policy)."""
    return int(np.random.SeedSequence([seed, i]).generate_state(1)[0])


def evaluate(policy: Any, instance: Instance, orders: Sequence[np.ndarray], *, seed: int = 0,
             check_result: bool = True, progress: Callable[[], None] | None = None) -> Samples:
    """Run ``policy`` on every order (common random numbers: same orders and run seeds for all policies).

    Args:
        policy: any policy.
        instance: the instance.
        orders: arrival orders, e.g. from :func:`sample_orders`.
        seed: base seed; order ``i`` runs with ``policy.reset(instance, run_seed(seed, i))``.
        check_result: check every final placement.
        progress: called after each run (e.g. a tqdm ``update``).
    """
    results = []
    for i, o in enumerate(orders):
        results.append(simulate(instance, policy, o, seed=run_seed(seed, i), check_result=check_result))
        if progress is not None:
            progress()
    hosts = np.array([r.hosts_used for r in results], dtype=np.int64)
    return Samples(results[0].policy if results else str(getattr(policy, "name", "?")),
                   tuple(results), _ro(hosts))


def evaluate_batch(make_policy: Callable[[np.ndarray], Any], thetas: np.ndarray, instance: Instance,
                   orders: Sequence[np.ndarray], *, seed: int = 0, check_result: bool = False
                   ) -> np.ndarray:
    """Hosts used for many parameter vectors on the same orders (for swarm tuning).

    Args:
        make_policy: builds a policy from one parameter vector, shape ``(n_dims,)``.
        thetas: parameter vectors, shape ``(n_params, n_dims)``.
        instance: the instance.
        orders: arrival orders (the same for every vector).
        seed: base seed (see :func:`evaluate`).
        check_result: check every final placement (slower; tests do).

    Returns:
        Hosts used, shape ``(n_params, n_orders)``; add rejected arrivals times a penalty yourself if
        the instance may not fit.
    """
    thetas = np.atleast_2d(np.asarray(thetas, dtype=np.float64))
    out = np.empty((len(thetas), len(orders)), dtype=np.int64)
    for p, theta in enumerate(thetas):
        pol = make_policy(theta)
        for i, o in enumerate(orders):
            out[p, i] = simulate(instance, pol, o, seed=run_seed(seed, i),
                                 check_result=check_result).hosts_used
    return out


__all__ = ["DELAYED", "PLACED", "REJECTED", "Arrivals", "Samples", "SimulationResult", "Trajectory",
           "arrivals", "evaluate", "evaluate_batch", "evaluate_snapshots", "repair_snapshot",
           "resample_snapshot", "run_seed", "sample_orders", "simulate", "static_view"]
