"""DAG baseline policies for :class:`packing.dag.engine.DagEngine`.

FIFO, shortest job first (by remaining task-seconds; SJF-CP: the longest path first within the job;
SJF-reserve: SJF-CP keeping a share of the containers some stages need exclusively away from long
tasks that fit elsewhere; SJF-headroom: SJF-CP whose giant jobs leave a share of every type free),
critical path first, random and a Decima-like slot (one container type, heuristic stage choice).

Each picks a runnable stage by its own priority, then the smallest container type (by size relative
to the largest type) the mask allows for it, and launches as many tasks as are pending and free
(JobFusion's action triple). A learned agent plugs into the same contract
(:class:`packing.dag.policy.DagPolicy`): ``name``, ``partition``, ``reset(engine)``, ``act(obs, mask)``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from packing.dag.engine import WAIT, DagAction, DagEngine, DagObservation
from packing.dag.policy import DagPolicy, drive_dag
from packing.errors import input_error


class StagePriority:
    """Base: lowest :meth:`keys` wins among the stages the mask allows; smallest allowed type; all tasks.

    Args:
        partition: the partition the policy runs on (``"constrained"`` by default).
    """

    name = "stage-priority"
    partition = "constrained"

    def __init__(self, partition: str | None = None) -> None:
        if partition is not None:
            self.partition = partition
        self.engine: DagEngine | None = None

    def reset(self, engine: DagEngine) -> None:
        """Read the static tables of the episode."""
        self.engine = engine
        types = engine.cluster.types
        self.type_size = (types / np.maximum(types.max(axis=0), 1e-12)).sum(axis=1)
        self.job_arrival = np.array([j.arrival for j in engine.workload.jobs])
        self.down = np.concatenate([j.downward_path for j in engine.workload.jobs]) \
            if engine.workload.jobs else np.zeros(0)
        self.task_seconds = engine.stage_tasks * engine.stage_duration

    def keys(self, obs: DagObservation, stages: np.ndarray) -> np.ndarray:
        """Priority of each candidate stage, shape ``(K',)`` (lower first); ties by stage id."""
        return stages.astype(np.float64)

    def choose(self, obs: DagObservation, stages: np.ndarray) -> int:
        """Index into ``stages`` of the stage to run."""
        return int(np.lexsort((stages, self.keys(obs, stages)))[0])

    def act(self, obs: DagObservation, mask: np.ndarray) -> DagAction:
        """Best stage, smallest allowed type, as many tasks as fit."""
        rows = np.flatnonzero(mask.any(axis=1))
        stages = obs.runnable[rows]
        k = self.choose(obs, stages)
        allowed = np.flatnonzero(mask[rows[k]])
        q = int(allowed[np.argmin(self.type_size[allowed])])
        s = int(stages[k])
        return DagAction(s, q, int(min(obs.pending[s], obs.free[q])))


class Fifo(StagePriority):
    """First in, first out: the earliest-arrived job's stages first."""

    name = "fifo"

    def keys(self, obs: DagObservation, stages: np.ndarray) -> np.ndarray:  # noqa: D102
        assert self.engine is not None
        return self.job_arrival[self.engine.stage_job[stages]]


class ShortestJobFirst(StagePriority):
    """The job with the least remaining task-seconds first."""

    name = "sjf"

    def keys(self, obs: DagObservation, stages: np.ndarray) -> np.ndarray:  # noqa: D102
        assert self.engine is not None
        eng = self.engine
        left = (eng.stage_tasks - obs.finished) * eng.stage_duration
        per_job = np.bincount(eng.stage_job, weights=left, minlength=len(self.job_arrival))
        return per_job[eng.stage_job[stages]]


class SjfCriticalPath(ShortestJobFirst):
    """Shortest job first; within the job, the stage with the longest duration path to its end first.

    (SJF itself takes the job's runnable stage with the lowest id.)
    """

    name = "sjf-cp"

    def choose(self, obs: DagObservation, stages: np.ndarray) -> int:  # noqa: D102
        return int(np.lexsort((stages, -self.down[stages], self.keys(obs, stages)))[0])


class CriticalPathFirst(StagePriority):
    """The stage with the longest duration path to the end of its job first."""

    name = "cpf"

    def keys(self, obs: DagObservation, stages: np.ndarray) -> np.ndarray:  # noqa: D102
        return -self.down[stages]


class SjfReserve(SjfCriticalPath):
    """SJF-CP that keeps a share of the containers other stages can use only away from long tasks.

    A container type is *protected* while some unfinished stage of an arrived job fits only that
    type. A stage whose tasks last ``long_s`` seconds or more and that fits other types too leaves
    ``ceil(reserve * containers of the type)`` containers of a protected type free; so one long
    stage that could run elsewhere does not fill the only type a short job needs, for its whole
    duration, just before that job's stage becomes runnable. Otherwise it acts as SJF-CP: stages by
    the job's remaining task-seconds (then the longest path to the job's end), the smallest allowed
    type first, as many tasks as are pending and free; when the first stage cannot launch in any
    allowed type, the next one is tried. When nothing may launch, it waits for the next event
    (:data:`~packing.dag.engine.WAIT`), unless no task is running: then SJF-CP's action.

    With ``headroom > 0`` a *giant* job (see :meth:`giants`: its unfinished tasks keep the
    containers its stages fit busy ``giant_s`` seconds or more) leaves ``ceil(headroom * containers)``
    of every type free, so jobs arriving while it runs find containers at once instead of waiting
    for one of its tasks to end. With ``spare > 0`` a giant's long stage leaves a protected type alone
    when that type holds fewer than ``spare`` times the containers the stage fits: a few containers
    matter to the jobs that can use only them and little to a giant that can use many others. With a
    finite ``stagger_s`` a giant's stage whose tasks last ``stagger_s`` or more ramps up over one task
    duration: ``t`` seconds after its first launch it runs at most ``ceil(containers it fits * t /
    duration)`` tasks (checked at each decision), so its tasks end spread out instead of in rounds
    that hold every container for a whole task.

    What it knows is what SJF knows (the arrived jobs' DAGs, task counts and durations, their
    arrival times) and the cluster's container types; not the future arrivals.

    Args:
        partition: the partition the policy runs on.
        long_s: tasks of at least this many seconds are long.
        reserve: share of a protected type's containers long flexible tasks leave free.
        giant_s: a job is a giant from this many seconds of work per container it fits (``inf``: none).
        headroom: share of every type's containers a giant's tasks leave free.
        quiet_s: no headroom once the giants are the only unfinished jobs and no job has arrived
            for this many seconds (``inf``: always headroom).
        spare: a giant's long stage skips a protected type with fewer containers than this share of
            the containers the stage fits (0: never).
        stagger_s: a giant's stage of tasks this long or longer ramps up over one task duration
            (``inf``: never).
    """

    name = "sjf-reserve"

    def __init__(self, partition: str | None = None, *, long_s: float = 100.0, reserve: float = 0.1,
                 giant_s: float = float("inf"), headroom: float = 0.0, quiet_s: float = float("inf"),
                 spare: float = 0.0, stagger_s: float = float("inf")) -> None:
        super().__init__(partition)
        if not (long_s >= 0 and 0 <= reserve <= 1 and giant_s >= 0 and 0 <= headroom <= 1 and quiet_s >= 0
                and 0 <= spare <= 1 and stagger_s > 0):
            raise ValueError("need long_s, giant_s, quiet_s >= 0, stagger_s > 0 and 0 <= reserve, headroom, "
                             f"spare <= 1, got {long_s}, {giant_s}, {quiet_s}, {stagger_s}, {reserve}, "
                             f"{headroom}, {spare}")
        self.long_s, self.reserve = float(long_s), float(reserve)
        self.giant_s, self.headroom, self.quiet_s = float(giant_s), float(headroom), float(quiet_s)
        self.spare, self.stagger_s = float(spare), float(stagger_s)

    def reset(self, engine: DagEngine) -> None:  # noqa: D102
        super().reset(engine)
        counts = engine.cluster.counts
        fit = engine.stage_fits & (counts > 0)[None, :]  # (S, Q)
        self.kept = np.ceil(self.reserve * counts).astype(np.int64)  # (Q,) containers kept free
        self.sole = np.where(fit.sum(axis=1) == 1, np.argmax(fit, axis=1), -1)  # (S,) the only type or -1
        self.guarded = (engine.stage_duration >= self.long_s) & (fit.sum(axis=1) > 1)  # (S,)
        self.room = np.ceil(self.headroom * counts).astype(np.int64)  # (Q,) headroom of a giant job
        self.pool = np.maximum(fit @ counts, 1).astype(np.float64)  # (S,) containers a stage fits
        self.few = counts[None, :] < self.spare * self.pool[:, None]  # (S, Q) types a giant's stage spares
        self.first_launch: dict[int, float] = {}  # stage -> time of its first launch

    def giants(self, obs: DagObservation) -> np.ndarray:
        """Whether each job is a giant now, shape ``(J,)``.

        A job is a giant when its tasks not yet finished, spread over all the containers each stage
        fits, keep them busy ``giant_s`` seconds or more; a giant's stages leave ``headroom`` of
        every type free, unless no other arrived job is unfinished and the last arrival is
        ``quiet_s`` seconds ago or more.
        """
        assert self.engine is not None
        eng = self.engine
        J = len(self.job_arrival)
        if not self.room.any() or not np.isfinite(self.giant_s):
            return np.zeros(J, dtype=bool)
        left = (eng.stage_tasks - obs.finished) * eng.stage_duration / self.pool
        busy = np.bincount(eng.stage_job, weights=left, minlength=J)  # (J,) seconds of the job's pools
        giant = obs.arrived & ~obs.done & (busy >= self.giant_s)
        if giant.any():
            others = obs.arrived & ~obs.done & ~giant
            last = float(self.job_arrival[obs.arrived].max())
            if not others.any() and obs.time - last >= self.quiet_s:
                giant[:] = False
        return giant

    def ramp(self, obs: DagObservation, s: int) -> int | None:
        """How many more tasks giant stage ``s`` may launch now while it ramps up (None: no limit)."""
        assert self.engine is not None
        d = float(self.engine.stage_duration[s])
        if d < self.stagger_s:
            return None
        since = max(obs.time - self.first_launch.get(s, obs.time), 1.0)
        return int(np.ceil(self.pool[s] * since / d)) - int(obs.running[s])

    def act(self, obs: DagObservation, mask: np.ndarray) -> DagAction:
        """SJF-CP's order; long flexible stages keep protected types' reserve, giants' the headroom."""
        assert self.engine is not None
        eng = self.engine
        rows = np.flatnonzero(mask.any(axis=1))
        stages = obs.runnable[rows]
        order = np.lexsort((stages, -self.down[stages], self.keys(obs, stages)))
        live = obs.arrived[eng.stage_job] & (obs.finished < eng.stage_tasks)
        only = self.sole[live]
        protected = np.zeros(len(self.kept), dtype=bool)
        protected[only[only >= 0]] = True
        giant = self.giants(obs)
        for k in order:
            s = int(stages[k])
            allowed = np.flatnonzero(mask[rows[k]])
            big = bool(giant[eng.stage_job[s]])
            ramp = self.ramp(obs, s) if big else None
            if ramp is not None and ramp < 1:
                continue
            for q in allowed[np.argsort(self.type_size[allowed], kind="stable")]:
                if big and self.guarded[s] and protected[q] and self.few[s, q]:
                    continue  # a giant's long tasks leave a small protected type to others
                keep = int(self.kept[q]) if self.guarded[s] and protected[q] else 0
                if big:
                    keep = max(keep, int(self.room[q]))
                n = int(min(obs.pending[s], obs.free[q] - keep))
                if ramp is not None:
                    n = min(n, ramp)
                if n >= 1:
                    self.first_launch.setdefault(s, obs.time)
                    return DagAction(s, int(q), n)
        if obs.running.sum() > 0:
            return WAIT
        act = super().act(obs, mask)
        if act.stage >= 0:
            self.first_launch.setdefault(int(act.stage), obs.time)
        return act


class SjfHeadroom(SjfReserve):
    """SJF-CP with a giant job's headroom, spare types and ramp (see :class:`SjfReserve`).

    ``SjfReserve(reserve=0, giant_s=1000, headroom=0.1, quiet_s=100, spare=0.5, stagger_s=100)``: a
    job whose unfinished tasks keep the containers its stages fit busy 1,000 s or more (spread over all
    of them) leaves 10 % of every type's containers free, so a job arriving while it runs finds some at
    once instead of waiting for a giant's task to end; the giant is one job of many and runs many rounds
    anyway, so it loses little. Its long stages leave alone a protected type with fewer than half the
    containers they fit, and ramp up over one task duration so that their tasks end spread out. When
    the giant is the only unfinished job and no job has arrived for 100 s, it may take every container.
    Other jobs keep no reserve. The six values were chosen on design samples (``docs/dag-bounds.md``).

    Args:
        partition: the partition the policy runs on.
    """

    name = "sjf-headroom"

    def __init__(self, partition: str | None = None) -> None:
        super().__init__(partition, reserve=0.0, giant_s=1000.0, headroom=0.1, quiet_s=100.0, spare=0.5,
                         stagger_s=100.0)


class RandomDag(StagePriority):
    """A seeded random allowed stage and type, all tasks that fit."""

    name = "random"

    def __init__(self, seed: int = 0, partition: str | None = None) -> None:
        super().__init__(partition)
        self.seed = seed

    def reset(self, engine: DagEngine) -> None:  # noqa: D102
        super().reset(engine)
        self.rng = np.random.default_rng(self.seed)

    def act(self, obs: DagObservation, mask: np.ndarray) -> DagAction:  # noqa: D102
        rows = np.flatnonzero(mask.any(axis=1))
        r = int(self.rng.choice(rows))
        q = int(self.rng.choice(np.flatnonzero(mask[r])))
        s = int(obs.runnable[r])
        return DagAction(s, q, int(min(obs.pending[s], obs.free[q])))


class CpfSingleType(CriticalPathFirst):
    """Critical-path-first on one container type (no clustering).

    The slot a Decima-like learned agent (``vbp train gcn --single``) fills; this heuristic is not that
    agent, and is named for what it is.
    """

    name = "cpf-single"
    partition = "single"


class RolloutExpert(StagePriority):
    """Look-ahead expert: compare a few candidate actions by simulating the rest of the episode with SJF.

    At each decision the candidates are SJF's action, the best stage of each of the next ``jobs``
    shortest jobs (smallest allowed type, all tasks), SJF's stage in each other allowed container type,
    and (with ``half``) SJF's stage and type with half the tasks. Each candidate is applied to a copy of
    the engine (:meth:`packing.dag.engine.DagEngine.clone` with ``known_only=True``) that is then run
    to the end with :class:`ShortestJobFirst`; the candidate with the least total completion time of the
    jobs in the system wins (ties: the earlier candidate, SJF's action first).

    What a rollout may see: only what an online scheduler knows at the decision -- the jobs already
    arrived (their full DAGs, task counts and durations, as SJF itself uses), the tasks running and
    their finish events. Future arrivals and online surges are removed from the copy, and the copy's
    overheads are drawn from the expert's own seeded generator (the same draws for every candidate of
    a decision: common random numbers), not from the engine's. So the expert is an online heuristic and
    may run at test time (slowly: ``rollouts`` x candidates simulations per decision).

    Args:
        partition: the partition the policy runs on.
        jobs: other shortest jobs whose stage is a candidate (besides SJF's job).
        rollouts: simulations per candidate (averaged; different overhead draws).
        horizon: SJF decisions per rollout (``None``: to the end of the jobs in the system). A truncated
            rollout charges each unfinished job the time the rollout stopped plus its remaining
            task-seconds spread over all containers (an estimate; a full rollout costs ~50 ms on 10
            Alibaba jobs, ~1,400 decisions per episode).
        half: also try launching half of SJF's tasks (off by default: on held-out Alibaba samples it
            split launches into many more decisions and was no better).
        seed: seeds the rollouts' overheads.
        base: the rollout policy and first candidate: ``"sjf"`` or ``"sjf-cp"``
            (:class:`SjfCriticalPath`).
        within: also try every other allowed stage of the base policy's job.
    """

    name = "rollout"

    def __init__(self, partition: str | None = None, *, jobs: int = 2, rollouts: int = 1,
                 horizon: int | None = 60, half: bool = False, seed: int = 0, base: str = "sjf",
                 within: bool = False) -> None:
        super().__init__(partition)
        self.jobs, self.rollouts, self.horizon, self.half, self.seed = jobs, rollouts, horizon, half, seed
        if base not in ("sjf", "sjf-cp"):
            raise ValueError(f"unknown rollout base {base!r}; known: sjf, sjf-cp")
        self.base = ShortestJobFirst(partition) if base == "sjf" else SjfCriticalPath(partition)
        self.within = within
        self.stats = {"decisions": 0, "changed": 0, "rollouts": 0}

    def reset(self, engine: DagEngine) -> None:  # noqa: D102
        super().reset(engine)
        self.base.reset(engine)  # static tables only: it acts on the copies' observations too
        self.rng = np.random.default_rng(self.seed)

    def candidates(self, obs: DagObservation, mask: np.ndarray) -> list[DagAction]:
        """SJF's action first, then the alternatives (see the class docstring), without repeats."""
        rows = np.flatnonzero(mask.any(axis=1))
        stages = obs.runnable[rows]
        keys = self.base.keys(obs, stages)
        order = np.lexsort((stages, keys))
        out: list[DagAction] = []

        def add(r: int, q: int, k: int | None = None) -> None:
            s = int(obs.runnable[r])
            most = int(min(obs.pending[s], obs.free[q]))
            a = DagAction(s, q, most if k is None else max(1, min(most, k)))
            if a not in out:
                out.append(a)

        def smallest(r: int) -> int:
            allowed = np.flatnonzero(mask[r])
            return int(allowed[np.argmin(self.type_size[allowed])])

        r0 = int(rows[self.base.choose(obs, stages)])
        q0 = smallest(r0)
        add(r0, q0)
        assert self.engine is not None
        job0 = int(self.engine.stage_job[obs.runnable[r0]])
        if self.within:
            for r in rows[self.engine.stage_job[stages] == job0]:
                add(int(r), smallest(int(r)))
        seen = {job0}
        for i in order[1:]:
            if len(seen) > self.jobs:
                break
            r = int(rows[i])
            j = int(self.engine.stage_job[obs.runnable[r]])
            if j not in seen:
                seen.add(j)
                add(r, smallest(r))
        for q in np.flatnonzero(mask[r0]):
            add(r0, int(q))
        if self.half:
            s0 = int(obs.runnable[r0])
            add(r0, q0, (int(min(obs.pending[s0], obs.free[q0])) + 1) // 2)
        return out

    def cost(self, action: DagAction, seed: int) -> float:
        """Total completion time of the jobs in the system after ``action`` then SJF (one rollout)."""
        assert self.engine is not None
        eng = self.engine.clone(known_only=True)
        eng.reseed(seed)
        here = eng.arrived.copy()
        eng.step(action)
        drive_dag(eng, self.base.act, limit=self.horizon)
        self.stats["rollouts"] += 1
        fin = eng.finish[here]
        open_ = np.isnan(fin)
        if open_.any():
            left = (eng.stage_tasks - eng.finished) * eng.stage_duration
            per_job = np.bincount(eng.stage_job, weights=left, minlength=len(eng.done))[here]
            fin = np.where(open_, eng.time + per_job / max(len(eng.cluster.slot_type), 1), fin)
        return float(fin.sum())

    def act(self, obs: DagObservation, mask: np.ndarray) -> DagAction:
        """The candidate with the least simulated total completion time."""
        cands = self.candidates(obs, mask)
        self.stats["decisions"] += 1
        if len(cands) == 1:
            return cands[0]
        seeds = self.rng.integers(2**31, size=self.rollouts)
        costs = np.array([np.mean([self.cost(a, int(sd)) for sd in seeds]) for a in cands])
        best = int(np.flatnonzero(costs <= costs.min() + 1e-6)[0])
        self.stats["changed"] += best > 0
        return cands[best]


DAG_POLICIES: dict[str, type[StagePriority]] = {
    "fifo": Fifo, "sjf": ShortestJobFirst, "cpf": CriticalPathFirst, "random": RandomDag,
    "cpf-single": CpfSingleType, "sjf-cp": SjfCriticalPath, "sjf-reserve": SjfReserve,
    "sjf-headroom": SjfHeadroom,
}
"""Name -> class of the DAG baselines."""

DEFAULT_DAG_POLICIES = tuple(DAG_POLICIES)
"""What ``vbp jobs compare`` runs without ``--policies``: every baseline."""


def make_dag_policy(name: str, seed: int = 0) -> StagePriority:
    """A DAG baseline by name (``random`` takes the seed).

    Raises:
        ValueError: an unknown name.
    """
    if name not in DAG_POLICIES:
        raise ValueError(f"unknown DAG policy {name!r}; known: {', '.join(DAG_POLICIES)}")
    return RandomDag(seed) if name == "random" else DAG_POLICIES[name]()


def resolve_dag_policy(name: str, seed: int = 0) -> DagPolicy:
    """A DAG baseline by name, or a trained DAG agent from a model file (``*.pt``, weights-only read).

    Raises:
        InputError: an unknown name, an unreadable file, or an agent file that is not a DAG policy.
    """
    if name in DAG_POLICIES:
        return make_dag_policy(name, seed)
    if name.lower().endswith(".pt"):
        if not os.path.isfile(name):
            raise input_error("--policies", name, "no such model file")
        from policies.agents.files import load_agent

        pol: Any = load_agent(name)
        if not isinstance(pol, DagPolicy):
            raise input_error("--policies", name, "not a DAG scheduling agent (train one with "
                              "`vbp train gcn DATA --out MODEL.pt`)")
        return pol
    raise input_error("--policies", name, f"unknown DAG policy; known: {', '.join(DAG_POLICIES)} "
                      "or a model file (.pt)")


def parse_dag_policies(text: str | None, seed: int = 0) -> tuple[list[str], list[DagPolicy]]:
    """The row labels and policies of a list of DAG baselines and agent files, e.g. ``"fifo,a=m.pt"``.

    An entry is a baseline name (labelled by its name), a model file (labelled by its stem) or
    ``NAME=SPEC`` (labelled ``NAME``); labels are unique within the list.

    Args:
        text: the comma-separated list (``None``: :data:`DEFAULT_DAG_POLICIES`).
        seed: the seed of ``random``.

    Returns:
        ``(labels, policies)``, in the order given.

    Raises:
        InputError: an empty list, an unknown name, an unreadable or wrong model file, or two
            entries with the same label.
    """
    from packing.io import escape_control
    from policies.registry import unique_labels

    names = ([n.strip() for n in text.split(",") if n.strip()] if text is not None
             else list(DEFAULT_DAG_POLICIES))
    if not names:
        raise input_error("--policies", escape_control(text or ""), "no policy named")
    named = [n.split("=", 1) if "=" in n and n not in DAG_POLICIES else ["", n] for n in names]
    names = [spec.strip() for _, spec in named]
    labels = [label.strip() or (n if n in DAG_POLICIES else Path(n).stem)
              for (label, _), n in zip(named, names, strict=True)]
    unique_labels(labels, names)
    bad = [n for n in names if n not in DAG_POLICIES and not n.lower().endswith(".pt")]
    if bad:
        raise input_error("--policies", escape_control(",".join(bad)), "unknown DAG policy; known: "
                          f"{', '.join(DAG_POLICIES)} or a model file (.pt)")
    return labels, [resolve_dag_policy(n, seed) for n in names]


__all__ = ["DAG_POLICIES", "DEFAULT_DAG_POLICIES", "CpfSingleType", "CriticalPathFirst", "Fifo", "RandomDag",
           "RolloutExpert", "ShortestJobFirst", "SjfCriticalPath", "SjfHeadroom", "SjfReserve",
           "StagePriority", "make_dag_policy", "parse_dag_policies", "resolve_dag_policy"]
