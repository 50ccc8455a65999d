"""A Cerebro-style scheduler simulator: replay arrivals with a policy on the one engine, and evaluate.

:func:`simulate` is a loop over :class:`packing.sim.engine.Engine` (the one event loop: arrivals,
departures, waiting requests; see :mod:`packing.sim.engine` for the semantics): for each decision it asks
the policy (``policy.act(obs, mask)``, with the mask of :meth:`ClusterState.mask`, the one feasibility
logic shared with :func:`packing.feasibility.checker.check`), and applies its answer. The optional protocols
of
:mod:`packing.sim.policy` are honoured explicitly: :class:`~packing.sim.policy.Arranging` reorders the
arrivals,
:class:`~packing.sim.policy.Waiting` keeps containers that fit nowhere waiting,
:class:`~packing.sim.policy.ChoosingCards` picks the GPU cards, and
:class:`~packing.sim.policy.CompiledEpisode`
runs the whole episode in one compiled loop when it applies (no GPU cards, no departures, no waiting;
the same decisions, tested).

The final placement (containers alive at the end) is passed through :func:`packing.feasibility.checker.check`.
This module also holds the evaluation helpers built on :func:`simulate` (orders with common random
numbers, :func:`evaluate`, :func:`evaluate_batch`) and the snapshot tools (repair, resample).
"""

from __future__ import annotations

import dataclasses
import functools
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from packing.errors import InputError, PolicyError, Problem
from packing.feasibility.checker import check
from packing.feasibility.kernels import host_checker
from packing.feasibility.predicates import ClusterState
from packing.model.instance import UNPLACED, Instance, Placement, Request
from packing.sim.autoscale import Autoscale, PoolStats
from packing.sim.engine import (
    DELAYED,
    PLACED,
    REJECTED,
    Arrivals,
    Decision,
    Engine,
    Trajectory,
    arrivals,
)
from packing.sim.policy import (
    WAIT,
    Arranging,
    ChoosingCards,
    Observation,
    Policy,
    implements,
    waits_when_full,
)


def _ro(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


@dataclass(frozen=True)
class SimulationResult:
    """What one simulated run returns (arrays are read-only).

    Attributes:
        policy: the policy's name.
        placement: containers alive at the end, accepted by :func:`packing.feasibility.checker.check` (built
            on first access from ``host_of``).
        hosts: hosts in use at the end (``hosts_used`` is a deprecated alias).
        hosts_peak: most hosts in use at any time (``peak_hosts`` is a deprecated alias).
        cost: total cost of the hosts in use at the end.
        order: the arrival order actually replayed (after the policy's ``arrange``), shape ``(n,)``.
        rejected: arrival indices rejected, shape ``(n_rejected,)``.
        delayed: arrival indices delayed at least once, shape ``(n_delayed,)``.
        waiting: arrival indices still waiting at the end (never placed), shape ``(n_waiting,)``.
        departed: arrival indices whose container left, shape ``(n_departed,)``.
        trajectory: per-decision records (computed on first access).
        arrivals: the arrival slots.
        compiled: whether the compiled kernel ran the episode.
        engine: the engine that ran the episode (its final state).
        instance: the instance that was simulated.
        pool: what the autoscaled pool measured (runs with ``autoscale`` only; see
            :mod:`packing.sim.autoscale`).
    """

    policy: str
    engine: Engine = dataclasses.field(repr=False, compare=False)
    hosts: int
    hosts_peak: int
    cost: float
    order: np.ndarray
    rejected: np.ndarray
    delayed: np.ndarray
    waiting: np.ndarray
    departed: np.ndarray
    arrivals: Arrivals
    compiled: bool
    instance: Instance = dataclasses.field(repr=False, compare=False)
    cards_of: list[tuple[int, ...]] | None = dataclasses.field(default=None, repr=False, compare=False)
    pool: PoolStats | None = None

    @functools.cached_property
    def host_of(self) -> np.ndarray:
        """Host per container at the end, shape ``(n_containers,)`` (-1: not on a host)."""
        return _ro(self.engine.host_of)

    @functools.cached_property
    def placement(self) -> Placement:
        """Containers alive at the end (see the class docstring)."""
        return Placement.from_arrays(self.instance, self.host_of, self.cards_of)

    @functools.cached_property
    def trajectory(self) -> Trajectory:
        """Per-decision records (see :class:`packing.sim.engine.Trajectory`)."""
        return self.engine.trajectory()

    @property
    def hosts_used(self) -> int:
        """Deprecated name of :attr:`hosts`."""
        warnings.warn("SimulationResult.hosts_used is deprecated; read SimulationResult.hosts",
                      DeprecationWarning, stacklevel=2)
        return self.hosts

    @property
    def peak_hosts(self) -> int:
        """Deprecated name of :attr:`hosts_peak`."""
        warnings.warn("SimulationResult.peak_hosts is deprecated; read SimulationResult.hosts_peak",
                      DeprecationWarning, stacklevel=2)
        return self.hosts_peak

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
        """Plain numbers for JSON output, named as in ``docs/outputs.md`` (``hosts``, ``deployed``...).

        An autoscaled run adds its pool's ``nodes``, ``nodes_peak``, ``node_hours`` and ``node_cost``.
        """
        return {"policy": self.policy, "hosts": self.hosts, "hosts_peak": self.hosts_peak,
                "cost": self.cost, "deployed": self.placement.n_placed, "rejected": self.n_rejected,
                "delayed": self.n_delayed, "waiting": len(self.waiting), "departed": len(self.departed),
                **(self.pool.to_dict() if self.pool is not None else {})}


MAX_ORDER_VALUES = 20_000_000
"""Most container positions (orders x instances x containers) the arrival orders of one run may hold."""


def check_order_budget(option: str, orders: int, n_containers: int, instances: int = 1) -> None:
    """Refuse more arrival orders than :data:`MAX_ORDER_VALUES` container positions hold.

    Args:
        option: the option(s) to name, e.g. ``"--orders"``.
        orders: orders per instance.
        n_containers: containers of the (largest) instance.
        instances: instances the orders are drawn for.

    Raises:
        InputError: naming the option, the product and the limit.
    """
    positions = orders * instances * max(n_containers, 1)
    if positions > MAX_ORDER_VALUES:
        raise InputError([Problem(option, str(orders), f"{orders:,} orders x {instances} instance(s) x "
                                  f"{n_containers:,} containers = {positions:,} positions; at most "
                                  f"{MAX_ORDER_VALUES:,}")])


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
    hosts = np.array([r.hosts for r in results], dtype=np.int64)
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


class Step(NamedTuple):
    """One applied decision, as the per-decision hook of :func:`drive` (and :func:`simulate`) sees it.

    Attributes:
        episode: index of the engine in the list given to :func:`drive` (0 in :func:`simulate`).
        decision: the decision answered (app, arrival, time, retry).
        observation: what the policy saw.
        mask: the hosts the container could go to, shape ``(n_hosts,)``.
        action: the host chosen, :data:`~packing.sim.policy.WAIT` or :data:`~packing.sim.engine.REJECT`.
        cards: GPU cards of the container placed (``()``: not placed, or no GPU).
        outcome: :data:`PLACED`, :data:`DELAYED` or :data:`REJECTED`.
        engine: the engine, after the step (its next decision already drawn).
        auto_rejected: arrivals the engine rejected on its own while advancing to the next
            decision (containers that fit nowhere, without ``wait_when_full``).
    """

    episode: int
    decision: Decision
    observation: Observation
    mask: np.ndarray
    action: int
    cards: tuple[int, ...]
    outcome: int
    engine: Engine
    auto_rejected: int = 0


class Stepper:
    """One engine, one decision at a time: observe, mask, apply one action, return its :class:`Step`.

    The one place that applies a decision to an engine: :func:`drive` loops over steppers (one per
    engine) and :class:`packing.env.placement_env.PlacementEnv` calls :meth:`apply` once per Gymnasium step,
    so a
    policy acting through either makes the same decisions with the same outcomes.

    Args:
        engine: the engine (reset before the first :meth:`observe`).
        episode: the engine's index, copied into every :class:`Step`.
        name: the policy's name, put in front of the engine's :class:`PolicyError` (``None``: the
            error as the engine raises it).
    """

    def __init__(self, engine: Engine, episode: int = 0, *, name: str | None = None) -> None:
        self.engine = engine
        self.episode = episode
        self.name = name
        self._decision: Decision | None = None
        self._seen: tuple[Observation, np.ndarray] | None = None

    @property
    def done(self) -> bool:
        """Whether the engine's episode has ended."""
        return self.engine.decision is None

    def observe(self) -> tuple[Observation, np.ndarray]:
        """The observation and host mask (shape ``(n_hosts,)`` bool) of the current decision.

        Computed once per decision (asking again returns the same objects).

        Raises:
            RuntimeError: the episode has ended.
        """
        d = self.engine.decision
        if self._seen is None or d is not self._decision:
            self._decision = d
            self._seen = (self.engine.observation(), self.engine.mask())
        return self._seen

    def apply(self, action: int, cards: Sequence[int] | None = None) -> Step:
        """Apply ``action`` to the current decision and advance the engine to the next one.

        Args:
            action: a host where the mask is True, :data:`~packing.sim.policy.WAIT` or
                :data:`~packing.sim.engine.REJECT`.
            cards: GPU cards for a host action (``None``: the fullest fitting cards).

        Returns:
            The :class:`Step` of this decision.

        Raises:
            PolicyError: an action the engine refuses (a host outside the mask, cards that do not fit).
            RuntimeError: the episode has ended.
        """
        e = self.engine
        d = e.decision
        if d is None:
            raise RuntimeError("the episode has ended: call reset()")
        obs, mask = self.observe()
        rejected_before = len(e.rejected)
        try:
            outcome = e.apply(action, cards)
        except PolicyError as err:
            if self.name is None:
                raise
            raise PolicyError(f"policy {self.name!r}: {err}") from None
        self._seen = self._decision = None
        auto = len(e.rejected) - rejected_before - (1 if outcome == REJECTED else 0)
        return Step(self.episode, d, obs, mask, int(action), e.last_cards if outcome == PLACED else (),
                    outcome, e, auto)


Decide = Callable[[list[int], list[Observation], list[np.ndarray]],
                  Sequence[tuple[int, Sequence[int] | None]]]
"""Chooses the actions of the live engines: ``decide(live, observations, masks)`` gets the indices
of the engines with a decision and, for each, its observation and mask (shape ``(n_hosts,)``), and
returns one ``(action, cards)`` per live engine (``cards`` ``None``: the engine picks the fullest
fitting cards)."""


def drive(engines: Sequence[Engine], decide: Decide, on_step: Callable[[Step], None] | None = None,
          *, name: str | None = None) -> None:
    """The one decision loop: observe, mask, act, apply (a :class:`Stepper` each) until every episode ends.

    The engines (each already :meth:`~packing.sim.engine.Engine.reset`) advance in lock step: every
    round asks ``decide`` once for all the engines that still have a decision, in index order,
    then applies the actions in that order. :func:`simulate` is this loop on one engine with one
    policy; trainers give several engines (a batch of episodes sampled from one network) and
    record what they learn from through ``on_step``.

    Args:
        engines: the engines, reset.
        decide: the actions (see :data:`Decide`).
        on_step: called after each applied action with its :class:`Step` (e.g. to record
            log-probabilities, rewards, the records of a protocol).
        name: the policy's name, put in front of the engine's :class:`PolicyError` (``None``: the
            error as the engine raises it).

    Raises:
        PolicyError: an action the engine refuses (a host outside the mask, cards that do not fit).
    """
    steppers = [Stepper(e, i, name=name) for i, e in enumerate(engines)]
    while True:
        live = [s for s in steppers if not s.done]
        if not live:
            return
        seen = [s.observe() for s in live]
        actions = decide([s.episode for s in live], [o for o, _ in seen], [m for _, m in seen])
        for s, (h, cards) in zip(live, actions, strict=True):
            step = s.apply(h, cards)
            if on_step is not None:
                on_step(step)


def policy_decide(policy: Policy, name: str | None = None) -> Decide:
    """``decide`` for :func:`drive` from one policy: ``policy.act(obs, mask)`` for each live engine.

    A :class:`~packing.sim.policy.ChoosingCards` policy also picks the GPU cards of a host action. A
    policy keeps state per episode, so one policy drives one engine at a time.

    Raises:
        PolicyError: (when ``decide`` runs) an action that is not an integer, or a negative one
            other than :data:`~packing.sim.policy.WAIT`.
    """
    label = name if name is not None else str(getattr(policy, "name", type(policy).__name__))
    cards_by_policy = implements(policy, ChoosingCards)

    def one(obs: Observation, mask: np.ndarray) -> tuple[int, Sequence[int] | None]:
        try:
            h = int(policy.act(obs, mask))
        except (TypeError, ValueError) as e:
            raise PolicyError(f"policy {label!r} returned a non-integer action: {e}") from None
        if h != WAIT and h < 0:
            raise PolicyError(f"policy {label!r} returned {h}: neither a host nor WAIT ({WAIT})")
        return h, (policy.choose_cards(obs, h) if cards_by_policy and h >= 0  # type: ignore[attr-defined]
                   else None)

    def decide(live: list[int], obs: list[Observation], masks: list[np.ndarray]
               ) -> list[tuple[int, Sequence[int] | None]]:
        return [one(o, m) for o, m in zip(obs, masks, strict=True)]

    return decide


def simulate(instance: Instance, policy: Policy, order: Sequence[int] | np.ndarray | None = None, *,
             seed: int | None = 0, check_result: bool = True, compiled: bool = True,
             record: bool = True, on_step: Callable[[Step], None] | None = None,
             autoscale: Autoscale | None = None) -> SimulationResult:
    """Replay the arrivals of ``instance`` in ``order`` with ``policy``, on the one engine.

    Args:
        instance: the instance (its snapshot and request stream).
        policy: any :class:`packing.sim.policy.Policy`.
        order: a permutation of the arrivals, shape ``(n_arrivals,)`` (default: their own order).
        seed: passed to ``policy.reset``.
        check_result: pass the final placement through :func:`packing.feasibility.checker.check` and raise
            ``RuntimeError`` on any violation (a bug, never a user error).
        compiled: allow the compiled fast path when it applies.
        record: keep the per-decision trajectory (off: empty trajectory arrays, a little faster).
        on_step: called after every decision of the policy with its :class:`Step` (see
            :func:`drive`; a container that fits nowhere is resolved by the engine, without the
            policy, and is not one); a compiled episode makes no single decisions and calls it
            never (``result.compiled`` tells; pass ``compiled=False`` to see every decision).
        autoscale: run on an autoscaled pool (:mod:`packing.sim.autoscale`; the result's ``pool``
            holds its measures).

    Returns:
        The :class:`SimulationResult`.

    Raises:
        PolicyError: the policy chose a host outside the mask (or cards that do not fit).
    """
    inst = instance
    policy.reset(inst, seed)
    name = str(getattr(policy, "name", type(policy).__name__))
    eng = Engine(inst, wait_when_full=waits_when_full(policy), record=record, autoscale=autoscale)
    eng.reset(order, arrange=policy if implements(policy, Arranging) else None,  # type: ignore[arg-type]
              compiled=policy if compiled else None)
    drive([eng], policy_decide(policy, name), on_step, name=name)
    return _result(eng, name, check_result)


def _result(eng: Engine, name: str, check_result: bool) -> SimulationResult:
    inst = eng.instance
    waiting = eng.waiting
    n = eng.n_arrivals
    if eng.alive() + len(eng.rejected) + len(waiting) + len(eng.departed) != n:  # pragma: no cover
        raise RuntimeError("simulator lost track of an arrival")
    used_mask = eng.state.n_on > 0
    empty = np.zeros(0, dtype=np.int64)
    res = SimulationResult(
        name, eng, eng.hosts_used, eng.peak_hosts, float(inst.host_cost[used_mask].sum()),
        _ro(eng.order), _ro(np.array(eng.rejected, dtype=np.int64) if eng.rejected else empty),
        _ro(np.array(sorted(eng.delayed), dtype=np.int64)) if eng.delayed else empty,
        _ro(np.array(sorted(waiting), dtype=np.int64)) if waiting else empty,
        _ro(np.array(sorted(eng.departed), dtype=np.int64)) if eng.departed else empty,
        eng.arrivals, eng.ran_compiled, inst, eng.cards_of if inst.max_gpus else None,
        eng.pool.stats() if eng.pool is not None else None)
    if check_result:
        _check(inst, res.placement, name, departures=bool(eng.departed))
    return res


def _check(inst: Instance, placement: Placement, name: str, departures: bool = False) -> None:
    """Raise on a violation of the final placement (a simulator bug).

    After departures a spread may be broken without any fault: the filter keeps the skew when a
    container is placed, and a departure can lower the smallest count later, as in a cluster
    (:mod:`packing.model.topology`). Those ``spread`` violations are then not raised.
    """
    viol = [v for v in check(inst, placement) if not (departures and v.kind == "spread")]
    if viol:
        raise RuntimeError(f"policy {name!r} produced an infeasible placement (simulator bug): {viol[0]}")


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
             check_result: bool = True, progress: Callable[[], None] | None = None,
             autoscale: Autoscale | None = None) -> Samples:
    """Run ``policy`` on every order (common random numbers: same orders and run seeds for all policies).

    Args:
        policy: any policy.
        instance: the instance.
        orders: arrival orders, e.g. from :func:`sample_orders`.
        seed: base seed; order ``i`` runs with ``policy.reset(instance, run_seed(seed, i))``.
        check_result: check every final placement.
        progress: called after each run (e.g. a tqdm ``update``).
        autoscale: run every order on an autoscaled pool (see :func:`simulate`).
    """
    results = []
    for i, o in enumerate(orders):
        results.append(simulate(instance, policy, o, seed=run_seed(seed, i), check_result=check_result,
                                autoscale=autoscale))
        if progress is not None:
            progress()
    hosts = np.array([r.hosts for r in results], dtype=np.int64)
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
                                 check_result=check_result).hosts
    return out


__all__ = ["DELAYED", "MAX_ORDER_VALUES", "PLACED", "REJECTED", "Arrivals", "Decide", "Samples",
           "SimulationResult", "Step", "Stepper", "Trajectory", "arrivals", "check_order_budget", "drive",
           "evaluate", "evaluate_batch", "evaluate_snapshots", "policy_decide", "repair_snapshot",
           "resample_snapshot", "run_seed", "sample_orders", "simulate", "static_view"]
