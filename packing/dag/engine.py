"""The stepwise DAG engine: stages' tasks run in carved containers over time, one decision at a time.

Why a second event loop (and not :class:`packing.sim.engine.Engine`)? That engine's decision is *one
container -> one host* under vector-packing constraints; here the hosts are already carved into
containers (by the one feasibility/checker, see :mod:`solvers.dag.carving`), so a decision is *which stage
runs next, in which container type, how many tasks* (JobFusion's action triple), and what happens over
time is DAG bookkeeping (a stage becomes runnable when all tasks of all its parents finished), which
the placement engine has no notion of. Anything that puts containers on hosts (the carving, the online
snapshot) goes through :mod:`packing.model.instance`, :mod:`packing.feasibility.predicates` and
:func:`packing.feasibility.checker.check`;
this loop only hands out free container slots. Its interface mirrors the placement engine's::

    eng = DagEngine(workload, cluster, seed=0)
    d = eng.reset()
    while d is not None:
        d = eng.step(policy.act(eng.observation(), eng.mask()))
    result = eng.result()

Time and overheads (seeded, :class:`Overheads`; the JobFusion paper's values by default)
    A decision at time ``t`` that launches ``count`` tasks of a stage takes ``count`` free containers of
    the chosen type at once; the tasks start running at ``t + sched + start`` (a scheduling delay
    ``sched ~ U(0.4, 1.0)`` s and a container start ``start ~ U(1, 10)`` s, drawn once per decision) and
    all finish ``duration`` later, when their containers become free. The ``k``-th decision of a stage
    draws the ``k``-th delay of that stage's own seeded stream (:mod:`packing.dag.delays`), so every
    policy run with the same seed meets the same delays, and the bounds can charge them. Several
    decisions may happen at the same time ``t``; :data:`WAIT` defers until the next event.

Online containers
    The cluster's containers are what the online snapshot left (see :class:`Cluster`). An online *surge*
    ``(time, host, duration)`` reclaims every container slot of a host for ``duration`` seconds. With
    ``preempt=True`` the offline tasks running there are killed and become pending again after a
    preemption overhead ``~ U(5, 25)`` s; otherwise online waits until each busy slot frees
    (``Result.online_wait`` sums those waits).

Decisions
    A decision exists when some *runnable* stage (job arrived, all parents finished, tasks not yet
    launched) fits a free container. :meth:`DagEngine.mask` is ``(K, Q)`` bool over the runnable stages
    ``observation().runnable`` (K) and the container types (Q): the type runs the stage's tasks and has a
    free container. An action is a :class:`DagAction` ``(stage, ctype, count)`` with ``mask[k, ctype]``
    for ``stage == runnable[k]`` and ``1 <= count <= min(pending tasks, free containers)``; or
    :data:`WAIT`. Anything else raises :class:`packing.errors.PolicyError`.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from packing.dag.delays import launch_delays
from packing.dag.model import Workload
from packing.errors import PolicyError, input_error
from packing.feasibility.predicates import fits


@dataclass(frozen=True)
class Overheads:
    """Uniform ranges ``(low, high)`` in seconds of the three overheads."""

    sched: tuple[float, float] = (0.4, 1.0)
    start: tuple[float, float] = (1.0, 10.0)
    preempt: tuple[float, float] = (5.0, 25.0)

    @property
    def min_per_stage(self) -> float:
        """Least overhead every stage pays before its tasks run (one decision and one start)."""
        return self.sched[0] + self.start[0]


NO_OVERHEADS = Overheads((0.0, 0.0), (0.0, 0.0), (0.0, 0.0))
"""No overheads (for hand-checked tests and bounds)."""


@dataclass(frozen=True)
class Surge:
    """Online containers on ``host`` reclaim all its offline slots from ``time`` for ``duration`` s."""

    time: float
    host: int
    duration: float


@dataclass(frozen=True)
class Cluster:
    """Carved offline containers.

    Attributes:
        types: container shapes, shape ``(Q, R)``.
        slot_type: type of each container slot, shape ``(N,)``.
        slot_host: host of each slot, shape ``(N,)`` (only surges use it).
        capacity: offline capacity per resource (host capacity left after online containers), shape
            ``(R,)``; utilisation and idle share are measured against it.
        surges: online surges (see the module docstring).
    """

    types: np.ndarray
    slot_type: np.ndarray
    slot_host: np.ndarray
    capacity: np.ndarray
    surges: tuple[Surge, ...] = ()

    @classmethod
    def from_counts(cls, types: np.ndarray, counts: np.ndarray,
                    capacity: np.ndarray | None = None) -> Cluster:
        """``counts[q]`` containers of type ``q``, each on its own notional host.

        The capacity defaults to the containers' total size.
        """
        types = np.asarray(types, dtype=np.float64).reshape(len(counts), -1)
        st = np.repeat(np.arange(len(counts)), np.asarray(counts, dtype=np.int64))
        cap = (types * np.asarray(counts)[:, None]).sum(axis=0) if capacity is None else np.asarray(capacity)
        return cls(types, st, np.arange(len(st)), np.asarray(cap, dtype=np.float64))

    @property
    def n_types(self) -> int:
        """Container types ``Q``."""
        return int(self.types.shape[0])

    @property
    def counts(self) -> np.ndarray:
        """Containers per type, shape ``(Q,)``."""
        return np.bincount(self.slot_type, minlength=self.n_types)


class DagAction(NamedTuple):
    """JobFusion's action: run ``count`` tasks of global stage ``stage`` in containers of ``ctype``."""

    stage: int
    ctype: int
    count: int  # type: ignore[assignment]


WAIT = DagAction(-1, -1, 0)
"""Launch nothing now; the next decision comes after the next event."""


class DagDecision(NamedTuple):
    """The decision the engine waits for: its time and number (0-based)."""

    time: float
    number: int


class DagObservation(NamedTuple):
    """What a policy sees at a decision (arrays are copies; ``S`` stages, ``J`` jobs, ``Q`` types).

    Attributes:
        time: now.
        step: decision number.
        runnable: global ids of the runnable stages, shape ``(K,)`` (ascending).
        free: free containers per type, shape ``(Q,)``.
        pending: tasks not launched per stage, shape ``(S,)``.
        finished: tasks finished per stage, shape ``(S,)``.
        running: tasks launched and not finished per stage, shape ``(S,)``.
        arrived: whether each job has arrived, shape ``(J,)``.
        done: whether each job has finished, shape ``(J,)``.
    """

    time: float
    step: int
    runnable: np.ndarray
    free: np.ndarray
    pending: np.ndarray
    finished: np.ndarray
    running: np.ndarray
    arrived: np.ndarray
    done: np.ndarray


@dataclass
class DagResult:
    """What an episode measured.

    Attributes:
        jct: completion time of each job (finish - arrival), shape ``(J,)``.
        finish: finish time of each job, shape ``(J,)``.
        makespan: last finish - first arrival.
        utilisation: time-averaged task demand running / offline capacity, mean over resources.
        idle_share: time-averaged capacity carved into containers but not used by task demand (idle
            containers plus the unused part of busy ones) / offline capacity, mean over resources.
        curve: ``(times (T,), utilisation (T,))``, the utilisation after each event.
        decisions: actions applied (WAIT included).
        preempted: tasks killed by surges.
        online_wait: seconds online surges waited for busy slots (without preemption).
    """

    jct: np.ndarray
    finish: np.ndarray
    makespan: float
    utilisation: float
    idle_share: float
    curve: tuple[np.ndarray, np.ndarray]
    decisions: int
    preempted: int = 0
    online_wait: float = 0.0
    meta: dict[str, float] = field(default_factory=dict)

    @property
    def mean_jct(self) -> float:
        """Average job completion time."""
        return float(self.jct.mean()) if len(self.jct) else 0.0


_ARRIVE, _FINISH, _SURGE, _SURGE_END, _REQUEUE = 0, 1, 2, 3, 4


class DagEngine:
    """The stepwise DAG event loop (see the module docstring).

    Args:
        workload: the jobs.
        cluster: the carved containers.
        overheads: overhead ranges (default: the paper's).
        seed: seeds the launch delays (:mod:`packing.dag.delays`) and the preemption overheads.
        preempt: kill offline tasks when an online surge reclaims their slot.
    """

    def __init__(self, workload: Workload, cluster: Cluster, *, overheads: Overheads | None = None,
                 seed: int = 0, preempt: bool = False) -> None:
        self.workload = workload
        self.cluster = cluster
        self.overheads = Overheads() if overheads is None else overheads
        self.seed = seed
        self.preempt = preempt
        job, dem, nt, dur = workload.stage_table()
        self.stage_job, self.stage_demand, self.stage_tasks, self.stage_duration = job, dem, nt, dur
        self.job_first = workload.stage_offsets()
        types = cluster.types
        ok: np.ndarray = np.asarray(fits(dem[:, None, :], types[None, :, :]))
        self.stage_fits: np.ndarray = np.asarray(ok.all(axis=2))  # (S, Q)
        has = cluster.counts > 0
        bad = np.flatnonzero(~(self.stage_fits & has[None, :]).any(axis=1))
        if len(bad):
            s = int(bad[0])
            jb = workload.jobs[int(job[s])]
            st = jb.stages[s - int(self.job_first[job[s]])]
            raise input_error(workload.name, f"job {jb.name}, stage {st.name}",
                              f"no container type runs a task of demand {dem[s].tolist()} "
                              f"(types: {types.tolist()}, containers per type: {cluster.counts.tolist()})")
        self.parents = [np.asarray(self.job_first[j] + np.array(st.parents, dtype=np.int64), dtype=np.int64)
                        for j, jb in enumerate(workload.jobs) for st in jb.stages]
        kids: list[list[int]] = [[] for _ in range(len(nt))]
        for s, ps in enumerate(self.parents):
            for p in ps:
                kids[int(p)].append(s)
        self.children = [np.array(k, dtype=np.int64) for k in kids]
        self.decision: DagDecision | None = None

    # -- episode start ------------------------------------------------------------------------
    def reset(self) -> DagDecision | None:
        """Start the episode (all slots free, jobs arriving at their times) and advance."""
        S, J = len(self.stage_tasks), self.workload.n_jobs
        self.rng = np.random.default_rng(self.seed)
        self._delay_seed = self.seed
        self._delays: dict[int, np.ndarray] = {}
        self.launches = np.zeros(S, dtype=np.int64)  # decisions that launched tasks, per stage
        self.time = 0.0 if J == 0 else float(self.workload.jobs[0].arrival)
        self.t0 = self.time
        self.pending = self.stage_tasks.copy()
        self.finished = np.zeros(S, dtype=np.int64)
        self.running = np.zeros(S, dtype=np.int64)
        self.waiting_parents = np.array([len(p) for p in self.parents], dtype=np.int64)
        self.arrived = np.zeros(J, dtype=bool)
        self.done = np.zeros(J, dtype=bool)
        self.stages_left = np.diff(self.job_first).copy()
        self.finish = np.full(J, np.nan)
        self.runnable: set[int] = set()
        Q = self.cluster.n_types
        self.free: list[list[int]] = [
            sorted(np.flatnonzero(self.cluster.slot_type == q).tolist(), reverse=True) for q in range(Q)]
        self.slot_batch = np.full(len(self.cluster.slot_type), -1, dtype=np.int64)
        self.reclaimed = np.zeros(len(self.cluster.slot_type), dtype=bool)
        self.reclaim_since = np.zeros(len(self.cluster.slot_type))
        self.batches: dict[int, tuple[int, list[int]]] = {}
        self._n_batches = 0
        self._heap: list[tuple[float, int, int, int]] = []
        self._seq = 0
        for j, jb in enumerate(self.workload.jobs):
            self._push(float(jb.arrival), _ARRIVE, j)
        for i, sg in enumerate(self.cluster.surges):
            self._push(float(sg.time), _SURGE, i)
        self.step_no = 0
        self.decisions = 0
        self.preempted = 0
        self.online_wait = 0.0
        self._waited = False
        self._used = np.zeros(self.cluster.types.shape[1])  # task demand in busy slots
        self._held = np.zeros(self.cluster.types.shape[1])  # container size of busy slots
        self._carved = (self.cluster.types[self.cluster.slot_type]).sum(axis=0)
        self._curve_t: list[float] = [self.time]
        self._curve_used: list[np.ndarray] = [self._used.copy()]
        self._curve_held: list[np.ndarray] = [self._held.copy()]
        self._curve_avail: list[np.ndarray] = [self._carved.copy()]
        self._avail = self._carved.copy()
        self._mask: np.ndarray | None = None
        self._runnable_arr: np.ndarray | None = None
        self._advance()
        return self.decision

    def clone(self, *, known_only: bool = False) -> DagEngine:
        """A copy of the engine mid-episode, cheap: static tables shared, episode state copied.

        The copy steps independently of the original (same pending events, same overhead draws to
        come; :meth:`reseed` it for fresh ones). Used by look-ahead experts
        (:class:`policies.dag.RolloutExpert`) to simulate the rest of an episode from the current
        decision.

        Args:
            known_only: drop the future job arrivals and online surges from the copy's event queue, so
                that it simulates only what an online scheduler knows now (the jobs already arrived,
                the tasks running); its episode then ends when those jobs finish (their ``finish``
                times are set; the others stay unfinished, so :meth:`result` is not for such copies).

        Raises:
            RuntimeError: before :meth:`reset`.
        """
        if not hasattr(self, "pending"):
            raise RuntimeError("clone() needs a started episode: call reset() first")
        c = object.__new__(DagEngine)
        c.__dict__.update(self.__dict__)  # static tables (workload, cluster, stage arrays) are shared
        c.rng = np.random.default_rng()
        c.rng.bit_generator.state = self.rng.bit_generator.state
        c._delays = dict(self._delays)  # the arrays are never changed in place
        for name in ("launches", "pending", "finished", "running", "waiting_parents", "arrived", "done",
                     "stages_left", "finish", "slot_batch", "reclaimed", "reclaim_since"):
            setattr(c, name, getattr(self, name).copy())
        c.runnable = set(self.runnable)
        c.free = [list(f) for f in self.free]
        c.batches = {b: (s, list(sl)) for b, (s, sl) in self.batches.items()}
        c._heap = list(self._heap)
        if known_only:
            c._heap = [e for e in c._heap if e[2] not in (_ARRIVE, _SURGE)]
            heapq.heapify(c._heap)
        c._curve_t = list(self._curve_t)
        c._curve_used = list(self._curve_used)  # elements are replaced, never changed in place
        c._curve_held = list(self._curve_held)
        c._curve_avail = list(self._curve_avail)
        return c

    def reseed(self, seed: int) -> None:
        """Draw the overheads still to come from fresh streams seeded by ``seed`` (for look-ahead copies)."""
        self.rng = np.random.default_rng(seed)
        self._delay_seed = seed
        self._delays = {}

    def _delay(self, s: int) -> float:
        """The launch delay of stage ``s``'s next decision (its own stream; see :mod:`packing.dag.delays`)."""
        k = int(self.launches[s])
        self.launches[s] += 1
        n = int(self.stage_tasks[s])
        if k >= n:  # only after a preemption: beyond the stage's own draws
            oh = self.overheads
            return float(self.rng.uniform(*oh.sched)) + float(self.rng.uniform(*oh.start))
        d = self._delays.get(s)
        if d is None:
            oh = self.overheads
            d = self._delays[s] = launch_delays(oh.sched, oh.start, self._delay_seed, s, n)
        return float(d[k])

    def _push(self, t: float, kind: int, payload: int) -> None:
        heapq.heappush(self._heap, (t, self._seq, kind, payload))
        self._seq += 1

    # -- reading -------------------------------------------------------------------------------
    @property
    def done_all(self) -> bool:
        """Whether the episode has ended."""
        return self.decision is None

    def runnable_stages(self) -> np.ndarray:
        """Global ids of the runnable stages, shape ``(K,)`` ascending."""
        if self._runnable_arr is None:
            self._runnable_arr = np.array(sorted(self.runnable), dtype=np.int64)
        return self._runnable_arr

    def free_counts(self) -> np.ndarray:
        """Free containers per type, shape ``(Q,)``."""
        return np.array([len(f) for f in self.free], dtype=np.int64)

    def mask(self) -> np.ndarray:
        """``(K, Q)`` bool: runnable stage ``k`` can start in a free container of type ``q``."""
        if self.decision is None:
            return np.zeros((0, self.cluster.n_types), dtype=bool)
        if self._mask is None:
            r = self.runnable_stages()
            self._mask = self.stage_fits[r] & (self.free_counts() > 0)[None, :]
        return self._mask

    def observation(self) -> DagObservation:
        """The current decision's :class:`DagObservation`."""
        d = self.decision
        if d is None:
            raise RuntimeError("the episode has ended: no decision to observe")
        return DagObservation(d.time, d.number, self.runnable_stages().copy(), self.free_counts(),
                              self.pending.copy(), self.finished.copy(), self.running.copy(),
                              self.arrived.copy(), self.done.copy())

    # -- acting --------------------------------------------------------------------------------
    def step(self, action: DagAction | tuple[int, int, int]) -> DagDecision | None:
        """Apply ``action`` (see :meth:`apply`) and return the next decision."""
        self.apply(action)
        return self.decision

    def apply(self, action: DagAction | tuple[int, int, int]) -> None:
        """Apply an action to the current decision and advance to the next one.

        Raises:
            PolicyError: a stage not runnable, a type the mask forbids, a count out of range.
            RuntimeError: the episode has ended.
        """
        if self.decision is None:
            raise RuntimeError("the episode has ended: call reset()")
        try:
            s, q, k = (int(x) for x in action)
        except (TypeError, ValueError):
            raise PolicyError(f"action {action!r} is not a (stage, ctype, count) triple") from None
        self.decisions += 1
        if (s, q, k) == tuple(WAIT):
            if not self._heap:
                raise PolicyError("WAIT with no event left to wait for (the episode would never end)")
            self._waited = True
        else:
            if s not in self.runnable:
                raise PolicyError(f"stage {s} is not runnable now")
            if not (0 <= q < self.cluster.n_types) or not self.stage_fits[s, q] or not self.free[q]:
                raise PolicyError(f"container type {q} cannot take stage {s} now (the mask forbids it)")
            most = min(int(self.pending[s]), len(self.free[q]))
            if not 1 <= k <= most:
                raise PolicyError(f"count {k} for stage {s} is outside 1..{most}")
            self._launch(s, q, k)
        self.step_no += 1
        self.decision = None
        self._mask = None
        self._runnable_arr = None
        self._advance()

    def _launch(self, s: int, q: int, k: int) -> None:
        delay = self._delay(s)
        slots = [self.free[q].pop() for _ in range(k)]
        b = self._n_batches
        self._n_batches += 1
        self.batches[b] = (s, slots)
        self.slot_batch[slots] = b
        self.pending[s] -= k
        self.running[s] += k
        if self.pending[s] == 0:
            self.runnable.discard(s)
        self._account(self.stage_demand[s] * k, self.cluster.types[q] * k)
        self._push(self.time + delay + float(self.stage_duration[s]), _FINISH, b)

    def _account(self, used: np.ndarray, held: np.ndarray) -> None:
        self._used = self._used + used
        self._held = self._held + held
        self._record()

    def _record(self) -> None:
        if self._curve_t and self._curve_t[-1] == self.time:
            self._curve_used[-1] = self._used.copy()
            self._curve_held[-1] = self._held.copy()
            self._curve_avail[-1] = self._avail.copy()
            return
        self._curve_t.append(self.time)
        self._curve_used.append(self._used.copy())
        self._curve_held.append(self._held.copy())
        self._curve_avail.append(self._avail.copy())

    # -- events --------------------------------------------------------------------------------
    def _free_slot(self, j: int) -> None:
        self.slot_batch[j] = -1
        if self.reclaimed[j]:
            if not self.preempt:
                self.online_wait += self.time - self.reclaim_since[j]
            return
        self.free[int(self.cluster.slot_type[j])].append(j)

    def _event(self, kind: int, x: int) -> None:
        if kind == _ARRIVE:
            self.arrived[x] = True
            for s in range(self.job_first[x], self.job_first[x + 1]):
                if self.waiting_parents[s] == 0:
                    self.runnable.add(s)
        elif kind == _FINISH:
            s, slots = self.batches.pop(x)
            k = len(slots)
            q = int(self.cluster.slot_type[slots[0]]) if slots else 0
            for j in slots:
                self._free_slot(j)
            self.running[s] -= k
            self.finished[s] += k
            self._account(-self.stage_demand[s] * k, -self.cluster.types[q] * k)
            if self.finished[s] == self.stage_tasks[s]:
                self._stage_done(s)
        elif kind == _SURGE:
            self._surge(x)
        elif kind == _SURGE_END:
            sg = self.cluster.surges[x]
            for jj in np.flatnonzero((self.cluster.slot_host == sg.host) & self.reclaimed):
                j = int(jj)
                self.reclaimed[j] = False
                self._avail = self._avail + self.cluster.types[self.cluster.slot_type[j]]
                if self.slot_batch[j] < 0:
                    self.free[int(self.cluster.slot_type[j])].append(j)
            self._record()
        elif kind == _REQUEUE:
            self.pending[x] += 1
            self.runnable.add(x)

    def _surge(self, i: int) -> None:
        sg = self.cluster.surges[i]
        on = np.flatnonzero((self.cluster.slot_host == sg.host) & ~self.reclaimed)
        for jj in on:
            j = int(jj)
            q = int(self.cluster.slot_type[j])
            self.reclaimed[j] = True
            self.reclaim_since[j] = self.time
            self._avail = self._avail - self.cluster.types[q]
            b = int(self.slot_batch[j])
            if b < 0:
                self.free[q].remove(j)
            elif self.preempt:
                s, slots = self.batches[b]
                slots.remove(j)
                self.slot_batch[j] = -1
                self.running[s] -= 1
                self.preempted += 1
                self._account(-self.stage_demand[s], -self.cluster.types[q])
                self._push(self.time + float(self.rng.uniform(*self.overheads.preempt)), _REQUEUE, s)
        self._push(self.time + sg.duration, _SURGE_END, i)
        self._record()

    def _stage_done(self, s: int) -> None:
        j = int(self.stage_job[s])
        for cc in self.children[s]:
            c = int(cc)
            self.waiting_parents[c] -= 1
            if self.waiting_parents[c] == 0 and self.pending[c] > 0:
                self.runnable.add(c)
        self.stages_left[j] -= 1
        if self.stages_left[j] == 0:
            self.done[j] = True
            self.finish[j] = self.time

    def _can_decide(self) -> bool:
        if self._waited or not self.runnable:
            return False
        free = self.free_counts() > 0
        if not free.any():
            return False
        r = self.runnable_stages()
        return bool((self.stage_fits[r] & free[None, :]).any())

    def _advance(self) -> None:
        while True:
            if self._can_decide():
                self.decision = DagDecision(self.time, self.step_no)
                return
            if not self._heap:
                self.decision = None
                return
            t = self._heap[0][0]
            self.time = t
            while self._heap and self._heap[0][0] == t:
                _, _, kind, x = heapq.heappop(self._heap)
                self._event(kind, x)
            self._waited = False
            self._runnable_arr = None
            self._mask = None

    # -- results -------------------------------------------------------------------------------
    def result(self) -> DagResult:
        """The episode's metrics (call after the last decision)."""
        if self.decision is not None:
            raise RuntimeError("the episode is still running")
        if not self.done.all():
            raise RuntimeError("the episode ended with unfinished jobs")
        arr = np.array([j.arrival for j in self.workload.jobs])
        jct = self.finish - arr
        end = float(np.max(self.finish)) if len(self.finish) else self.t0
        t = np.array(self._curve_t + [end])
        dt = np.diff(t)
        cap = np.maximum(self.cluster.capacity, 1e-12)
        used = np.array(self._curve_used) / cap
        avail = np.array(self._curve_avail) / cap
        span = end - self.t0
        if span > 0:
            util = float((used.mean(axis=1) * dt).sum() / span)
            idle = float(((avail - used).mean(axis=1) * dt).sum() / span)
        else:
            util, idle = 0.0, 0.0
        return DagResult(jct, self.finish.copy(), span, util, idle, (t[:-1], used.mean(axis=1)),
                         self.decisions, self.preempted, self.online_wait)


__all__ = ["NO_OVERHEADS", "WAIT", "Cluster", "DagAction", "DagDecision", "DagEngine", "DagObservation",
           "DagResult", "Overheads", "Surge"]
