"""Rule-aware large-neighbourhood search: repack, with CP-SAT, the hosts where the rules bite.

Every constraint of the model is local to a host (capacities, caps, ``<A, B, k>`` rules,
exclusions), so the containers on a set of hosts can be repacked onto those same hosts without
looking at the rest, and repackings of *disjoint* host sets are independent. Each round builds
one or more disjoint neighbourhoods, solves them with :func:`solvers.exact.cpsat.solve_cpsat` (hinted
with the current packing, asked only for packings with fewer hosts, or a lower cost, than now)
on an executor (:mod:`packing.sim.evaluation`: serial, local processes, or Ray) and merges the
results that free a host.

Neighbourhoods (``neighbourhood=``):

* ``"rules"`` (the default): a *seed* host to empty (the hosts whose load takes the smallest
  share of the total room on some resource, in turn, skipping seeds that failed recently), then
  hosts ranked by their *room for the seed's load* (``min_r`` free capacity over the seed's load):
  up to half of them are *rule-tied* hosts among the roomiest, those holding a container of an
  app of the seed or of an app a rule ties to one (either side of a cross-app rule or exclusion,
  or the app itself when its per-host cap binds). The seed's containers may fit by capacity there
  but be barred by a rule partner or by their cap; repacking them together lets CP-SAT move the
  partners away. The rest are drawn among the roomiest hosts (destinations).
* ``"emptiest"``: the seed and hosts drawn among the roomiest (as :mod:`solvers.exact.lns`, with room
  measured for the seed's load).
* ``"mixed"``: the two in alternate rounds.

Every neighbourhood gets more of the roomiest hosts until their room covers the seed's load
(:data:`SLACK_MARGIN`) on every resource, else CP-SAT can only prove that it frees nothing.
The size of the neighbourhoods shrinks when the sub-solves run out of time (then their step
grows, up to :data:`STEP_GROWTH` times) and grows when CP-SAT proves that they cannot free a host
(or fails three times). Sub-instances keep only the apps
present on their hosts and the rules between them (:func:`solvers.exact.lns.sub_instance` with
``compact``), so they stay small on Tianchi 2018 (9,338 apps, 24k rules).

With the serial executor the search is deterministic for a seed when the sub-solves finish
within their step (small neighbourhoods) and ``max_rounds`` ends it rather than the clock; the
process executor then gives the same result as the serial one with the same ``workers``
(neighbourhoods are built in the parent, each task carries its own CP-SAT seed, results are
merged in order).

Instances with GPU cards or topology rules (domain caps and spread couple the hosts) are
returned unchanged (the host array does not carry cards).

Measured on Tianchi 2018 set B (``benchmarks/bench_rule_lns.py``, from ``auto``'s 60 s packing,
2 shared cores): on the uniform 64c128g fleet (memory-bound) 5,107 -> 5,101 hosts within 60 s
(plateau; ejection chains: 5,106 in 150 s); on the contest machines it frees nothing in 60-90 s
(sub-solves of 20-35 crowded hosts time out) where ejection chains free 4 (peaks) and 52 (full
view). The neighbourhoods that free hosts hold almost no rules between their apps there: the room
the seed's load needs decides, the rules rarely bite inside a neighbourhood.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from packing.feasibility.checker import check
from packing.model.instance import UNPLACED, Instance, Placement
from packing.sim.evaluation import Executor, SerialExecutor, make_executor
from solvers.base import EPS, Clock, SolveOptions, Stop, objective_value
from solvers.exact.lns import sub_instance
from solvers.result import Objective

NEIGHBOURHOODS = ("rules", "emptiest", "mixed")
"""The neighbourhood kinds (module docstring)."""

SIZE = 12
"""Hosts in the first neighbourhoods."""

SIZE_MIN = 6
"""Fewest hosts in a neighbourhood."""

SIZE_MAX = 60
"""Most hosts in a neighbourhood."""

STEP_SECONDS = 3.0
"""Most seconds of one sub-solve."""

STEP_GROWTH = 4.0
"""Sub-solves that keep running out of time on the smallest neighbourhoods get longer steps, up
to this many times ``step_seconds``."""

SLACK_MARGIN = 1.1
"""A neighbourhood gets hosts until their room is this many times the seed's load, resource by
resource (up to :data:`SIZE_MAX` hosts): with less, CP-SAT only proves that it cannot free one."""

RULE_POOL = 4
"""``"rules"`` takes its rule-tied hosts among the ``RULE_POOL * (size - 1)`` roomiest hosts (a
rule-tied host without room only makes the sub-problem larger)."""

SEED_TENURE = 8
"""Rounds a seed host that failed to empty is skipped."""

SEED_POOL = 64
"""Seeds are the emptiest hosts among this many (the others are rarely emptied by a repack)."""


@dataclass(frozen=True)
class _Task:
    """One neighbourhood to repack (picklable: it travels to worker processes).

    Attributes:
        sub: the sub-instance of the neighbourhood's containers and hosts.
        hint: the current sub-host of each sub-container, shape ``(n_sub,)``.
        before: the sub-packing's objective now.
        kind: ``"hosts"`` or ``"cost"``.
        seconds: CP-SAT's time limit.
        seed: CP-SAT's seed.
        workers: CP-SAT's workers.
    """

    sub: Instance
    hint: np.ndarray
    before: float
    kind: Objective
    seconds: float
    seed: int
    workers: int


@dataclass(frozen=True)
class _Outcome:
    """What a sub-solve gave.

    Attributes:
        pos: the new sub-host of each sub-container, shape ``(n_sub,)`` (``None``: nothing better).
        value: its objective.
        proven: CP-SAT proved that nothing better exists on these hosts.
        seconds: the sub-solve's wall time.
    """

    pos: np.ndarray | None
    value: float
    proven: bool
    seconds: float


def _solve_task(task: _Task, stop: Stop | None = None) -> _Outcome:
    """Repack one neighbourhood (module-level, so process and Ray workers can import it).

    ``stop`` (in this process only: the serial executor) ends the sub-solve early.
    """
    from solvers.exact.cpsat import solve_cpsat

    start = Placement.from_arrays(task.sub, task.hint)
    res = solve_cpsat(task.sub, SolveOptions(time_limit=task.seconds, workers=task.workers,
                                             seed=task.seed, objective=task.kind, hint=start,
                                             stop=stop),
                      below=task.before)
    proven = res.bound >= task.before - EPS
    if res.placement is None or res.objective is None or res.objective >= task.before - EPS:
        return _Outcome(None, task.before, proven, res.seconds)
    if check(task.sub, res.placement, require_all=True):  # pragma: no cover - a bug in cpsat
        return _Outcome(None, task.before, proven, res.seconds)
    return _Outcome(res.placement.host_array(task.sub), float(res.objective), False, res.seconds)


def _loads(inst: Instance, host_of: np.ndarray) -> np.ndarray:
    """Load per host and resource, shape ``(n_hosts, n_resources)``."""
    load = np.zeros((inst.n_hosts, inst.n_resources))
    placed = host_of != UNPLACED
    np.add.at(load, host_of[placed], inst.demand[inst.container_app[placed]])
    return load


def _need(inst: Instance, load: np.ndarray, used: np.ndarray) -> np.ndarray:
    """How hard each used host is to empty, shape ``(n_used,)``.

    The largest share of the total room on a resource (over the used hosts) its load would take.

    On a memory-bound packing this ranks hosts by memory whatever their CPU; the container count
    breaks ties (so hosts of zero-demand apps rank as well).
    """
    cap = inst.host_capacity[used]
    room = np.maximum(cap - load[used], 0.0).sum(axis=0)
    share = load[used] / np.maximum(room, 1e-9)
    need = share.max(axis=1) if inst.n_resources else np.zeros(len(used))
    return need + 1e-9 * (load[used] > 0).sum(axis=1)


def _room(inst: Instance, load: np.ndarray, hosts: np.ndarray, seed_host: int) -> np.ndarray:
    """Share of the seed's load each host could take on its own, shape ``(len(hosts),)``.

    ``min_r (capacity - load)[h, r] / load[seed, r]`` over the resources the seed uses, in
    ``[0, 1]``: a host with room on every resource the seed loads scores high, one full on a
    single resource the seed needs scores 0.
    """
    need = load[seed_host]
    on = need > 0
    if not on.any():
        return np.ones(len(hosts))
    slack = np.maximum(inst.host_capacity[hosts][:, on] - load[hosts][:, on], 0.0)
    return np.clip((slack / need[on]).min(axis=1), 0.0, 1.0)


def _links(inst: Instance) -> tuple[np.ndarray, np.ndarray]:
    """Rule partners of every app as CSR arrays ``(indptr (n_apps + 1,), partners (n_links,))``.

    Both sides of every cross-app rule and exclusion; each app is also its own partner when its
    per-host cap binds (cap below its count), since its other containers then bar it from hosts.
    """
    a, b, _ = inst.rule_arrays
    capped = np.flatnonzero(inst.cap < inst.counts)
    src = np.concatenate([a, b, capped])
    dst = np.concatenate([b, a, capped])
    order = np.lexsort((dst, src))
    src, dst = src[order], dst[order]
    indptr = np.zeros(inst.n_apps + 1, dtype=np.int64)
    np.add.at(indptr, src + 1, 1)
    return np.cumsum(indptr), dst.astype(np.int64)


def _choose(inst: Instance, host_of: np.ndarray, load: np.ndarray, used: np.ndarray,
            taken: np.ndarray, seed_host: int, size: int, kind: str,
            links: tuple[np.ndarray, np.ndarray], rng: np.random.Generator) -> np.ndarray:
    """The hosts of one neighbourhood around ``seed_host``, shape ``(<= size,)``.

    Args:
        inst: the instance.
        host_of: host per container, shape ``(n_containers,)``.
        load: load per host and resource, shape ``(n_hosts, n_resources)``.
        used: hosts in use, shape ``(n_used,)``.
        taken: hosts already in a neighbourhood of this round, shape ``(n_hosts,)`` (bool).
        seed_host: the host to empty.
        size: hosts wanted.
        kind: ``"rules"`` or ``"emptiest"``.
        links: :func:`_links`.
        rng: the search's generator.
    """
    free = used[~taken[used]]
    free = free[free != seed_host]
    free = free[np.argsort(-_room(inst, load, free, seed_host), kind="stable")]  # roomiest first
    chosen = [seed_host]
    want = size - 1
    if kind == "rules" and want > 0:
        placed = host_of != UNPLACED
        apps = np.unique(inst.container_app[host_of == seed_host])
        indptr, partners = links
        mark = np.zeros(inst.n_apps, dtype=bool)
        mark[apps] = True  # the seed's own apps: a host holding one may be at the cap or full
        for a in apps.tolist():
            mark[partners[indptr[a]: indptr[a + 1]]] = True
        hits = placed & mark[inst.container_app]
        linked = np.bincount(host_of[hits], minlength=inst.n_hosts)
        roomy = free[: RULE_POOL * want]  # rule-tied hosts among the roomy ones only
        cand = roomy[linked[roomy] > 0]  # the roomiest first
        n_link = min(len(cand), (want + 1) // 2)
        if n_link:
            pool = cand[: max(n_link, 2 * n_link)]
            chosen += rng.choice(pool, size=n_link, replace=False).tolist()
            want -= n_link
    rest = free[~np.isin(free, chosen)]
    if want > 0:
        pool = rest[: max(want, 2 * want)]
        chosen += rng.choice(pool, size=min(want, len(pool)), replace=False).tolist()
        rest = rest[~np.isin(rest, chosen)]
    # too little room for the seed's load: add the roomiest hosts left until there is enough
    cap = inst.host_capacity
    short = SLACK_MARGIN * load[seed_host] - np.maximum(cap[chosen[1:]] - load[chosen[1:]],
                                                         0.0).sum(axis=0)
    if (short > 0).any() and len(rest) and len(chosen) < SIZE_MAX:
        more = np.cumsum(np.maximum(cap[rest] - load[rest], 0.0), axis=0)
        enough = np.flatnonzero((more >= short).all(axis=1))
        m = int(enough[0]) + 1 if len(enough) else len(rest)
        chosen += rest[: min(m, SIZE_MAX - len(chosen))].tolist()
    return np.array(chosen, dtype=np.int64)


def improve(
    instance: Instance,
    host_of: np.ndarray,
    *,
    time_limit: float,
    kind: Objective = "hosts",
    seed: int = 0,
    workers: int = 1,
    executor: str | Executor | None = None,
    neighbourhood: str = "rules",
    size: int = SIZE,
    step_seconds: float = STEP_SECONDS,
    cpsat_workers: int = 1,
    lower_bound: float = 0.0,
    max_rounds: int | None = None,
    callback: Callable[[float], None] | None = None,
    stop: Stop | None = None,
    stats: dict[str, float] | None = None,
) -> np.ndarray:
    """Free hosts of a complete packing by repacking rule-tied neighbourhoods (module docstring).

    Args:
        instance: the instance.
        host_of: a complete, feasible packing, host per container, shape ``(n_containers,)``.
        time_limit: seconds (executor start-up included).
        kind: ``"hosts"`` or ``"cost"`` (``"deployed"`` returns ``host_of`` unchanged).
        seed: seed of the neighbourhood choice and of the sub-solves.
        workers: neighbourhoods solved at once per round (one task each).
        executor: ``"serial"``, ``"process"``, ``"ray"`` or an open :class:`Executor` (not
            closed here); default: serial for one worker, processes otherwise.
        neighbourhood: ``"rules"``, ``"emptiest"`` or ``"mixed"`` (:data:`NEIGHBOURHOODS`).
        size: hosts in the first neighbourhoods (adapted as the search goes).
        step_seconds: most seconds of one sub-solve (raised, up to :data:`STEP_GROWTH` times,
            when the smallest neighbourhoods keep running out of time).
        cpsat_workers: CP-SAT workers per sub-solve.
        lower_bound: a proven bound; the search stops when it is reached.
        max_rounds: stop after this many rounds (``None``: only the clock).
        callback: called as ``callback(objective)`` after every round that improved.
        stop: a stop request (:class:`solvers.base.StopFlag`), looked at between rounds.
        stats: if given, receives counts: ``rounds``, ``tasks`` (sub-solves), ``freed``
            (sub-solves that freed a host or cut the cost), ``proven`` (proved that nothing
            better exists on their hosts), ``timeouts``, ``solve_seconds`` (summed over the
            sub-solves) and ``size`` (the last neighbourhood size).

    Returns:
        The best packing found, shape ``(n_containers,)`` (a copy; ``host_of`` itself if the
        search did not run).

    Raises:
        InputError: an unknown neighbourhood or executor, or fewer than one worker.
    """
    from packing.errors import input_error

    if neighbourhood not in NEIGHBOURHOODS:
        raise input_error("neighbourhood", neighbourhood,
                          f"unknown neighbourhood; use {', '.join(NEIGHBOURHOODS)}")
    if workers < 1:
        raise input_error("workers", str(workers), "must be at least 1")
    inst = instance
    if (kind == "deployed" or inst.n_hosts == 0 or inst.max_gpus or inst.has_topology
            or (host_of == UNPLACED).any()):
        return host_of
    clock = Clock(time_limit, stop)
    rng = np.random.default_rng(seed)
    own = not isinstance(executor, Executor)
    ex = (executor if isinstance(executor, Executor)
          else make_executor(executor or ("serial" if workers == 1 else "process"), workers))
    step_base = step_seconds
    # a stop request reaches the sub-solves run in this process; workers see their step's end
    solve_one = (functools.partial(_solve_task, stop=stop) if isinstance(ex, SerialExecutor)
                 else _solve_task)
    links = _links(inst)
    host_of = np.array(host_of, dtype=np.int64, copy=True)
    value = objective_value(inst, host_of, kind)
    load = _loads(inst, host_of)
    n_on = np.bincount(host_of, minlength=inst.n_hosts)
    tabu = np.zeros(inst.n_hosts, dtype=np.int64)  # round until which a seed is skipped
    fails = 0
    rounds = 0
    count = {"rounds": 0.0, "tasks": 0.0, "freed": 0.0, "proven": 0.0, "timeouts": 0.0,
             "solve_seconds": 0.0, "size": float(size)}
    try:
        while (clock.left(0.0) > 0.3 and value > lower_bound + EPS * max(1.0, lower_bound)
               and (max_rounds is None or rounds < max_rounds)):
            step = min(step_seconds, clock.left(0.0) - 0.2)
            if step <= 0.1:
                break
            rounds += 1
            kind_now = ("rules" if rounds % 2 else "emptiest") if neighbourhood == "mixed" \
                else neighbourhood
            used = np.flatnonzero(n_on)
            if len(used) < 2:
                break
            used = used[np.argsort(_need(inst, load, used), kind="stable")]  # easiest first
            seeds = [int(h) for h in used[:SEED_POOL] if tabu[h] < rounds]
            if not seeds:
                tabu[:] = 0
                seeds = [int(h) for h in used[:SEED_POOL]]
            k = min(size, len(used))
            taken = np.zeros(inst.n_hosts, dtype=bool)
            tasks: list[_Task] = []
            groups: list[tuple[np.ndarray, np.ndarray, int]] = []
            for s in seeds:
                if len(tasks) == workers:
                    break
                if taken[s]:
                    continue
                hosts = _choose(inst, host_of, load, used, taken, s, k, kind_now, links, rng)
                if len(hosts) < 2:
                    continue
                taken[hosts] = True
                sub, hosts, members = sub_instance(inst, hosts, host_of, compact=True)
                pos = np.searchsorted(hosts, host_of[members])
                tasks.append(_Task(sub, pos, objective_value(sub, pos, kind), kind, step,
                                   int(rng.integers(2**31 - 1)), cpsat_workers))
                groups.append((hosts, members, s))
            if not tasks:
                break
            outs = ex.map(solve_one, tasks)
            improved = False
            timeouts = 0
            proven = 0
            count["rounds"] = rounds
            count["tasks"] += len(tasks)
            count["solve_seconds"] += sum(o.seconds for o in outs)
            for (hosts, members, s), out, task in zip(groups, outs, tasks, strict=True):
                if out.pos is None:
                    tabu[s] = rounds + SEED_TENURE
                    proven += out.proven
                    timeouts += out.seconds >= task.seconds - 0.05
                    continue
                d = inst.demand[inst.container_app[members]]
                np.subtract.at(load, host_of[members], d)
                np.subtract.at(n_on, host_of[members], 1)
                host_of[members] = hosts[out.pos]
                np.add.at(load, host_of[members], d)
                np.add.at(n_on, host_of[members], 1)
                load[hosts[n_on[hosts] == 0]] = 0.0  # no rounding residue on freed hosts
                improved = True
                count["freed"] += 1
            count["proven"] += proven
            count["timeouts"] += timeouts
            if improved:
                value = objective_value(inst, host_of, kind)
                fails = 0
                if callback is not None:
                    callback(value)
                continue
            fails += 1
            if timeouts * 2 >= len(tasks):  # too hard to solve in a step: shrink, then wait
                if size > SIZE_MIN:  # longer (the room the seed needs sets a floor on the size)
                    size = max(SIZE_MIN, int(size * 0.8))
                else:
                    step_seconds = min(STEP_GROWTH * step_base, step_seconds * 1.5)
            elif proven * 2 >= len(tasks) or fails >= 3:  # this size cannot free a host: grow
                size = min(SIZE_MAX, int(size * 1.5) + 1)
                fails = 0
    finally:
        if own:
            ex.close()
        count["size"] = size
        if stats is not None:
            stats.update(count)
    return host_of


__all__ = ["NEIGHBOURHOODS", "SIZE", "SIZE_MAX", "SIZE_MIN", "STEP_SECONDS", "improve"]
