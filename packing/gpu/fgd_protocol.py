"""The FGD paper's evaluation protocol on openb: workloads, their replay, and the per-level records.

Weng et al., "Beware of Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation Gradient
Descent", USENIX ATC '23, Sec. 6 and Fig. 7. The protocol is read from the authors' simulator
(github.com/hkust-adsl/kubernetes-scheduler-simulator @ 8f3d641: ``pkg/simulator/core.go``,
``simulator.go`` ``SortClusterPods`` / ``TunePodsByNodeTotalResource``, ``analysis.go``
``ClusterGpuFragReport``, ``experiments/analysis/merge_*_discrete.py``):

1. **Workload** (:func:`build_workload`): the pods of a pod list arrive in a seeded random order and
   never leave; when their GPU demand is below ``until`` (1.3) x the cluster's GPU capacity, pods
   drawn uniformly from the list are appended until the next one would pass it (the simulator's
   test compares the demand plus the drawn pod's *per-card* share, kept here); when above, random
   pods are removed until it is not. The shape distribution that FGD and the fragmentation measure
   use is that of the pod list itself, before resampling (as the simulator's ``SetTypicalPods``).
2. **Replay** (:func:`run_policy`): every arrival goes through :class:`packing.sim.engine.Engine` (the
   one engine, driven by the one decision loop :func:`packing.sim.simulator.drive`; a pod that fits
   nowhere is rejected and never retried) and the final placement goes through
   :func:`packing.feasibility.checker.check`. After every arrival: arrived GPU demand, allocated GPU, cluster
   fragmentation (:mod:`packing.gpu.fragmentation`) and idle GPU. Policies with a compiled GPU kernel
   (``policies.gpu_kernels``: all of the paper's but Random, and FGD-Pack) run the whole episode
   in it, cards included, with the same decisions as step by step (tested); the records are then
   replayed from the hosts and cards chosen (:func:`packing.gpu.fragmentation.placement_record`).
3. **Levels** (:meth:`Run.levels`): as ``merge_alloc_discrete.py``: each record's arrived demand is
   rounded to a whole percent of capacity (half to even); the value at level ``L`` is the mean over
   the records at ``L`` (or at ``L-1..L+1`` when there is none). Unallocated GPU % = 100 - allocated %.
   The paper's figures take the median over seeds (Fig. 7) and the mean at 100% (bar plots).

The published numbers are in ``packing.gpu.fgd_paper``, the comparison of policies in
``policies.fgd_eval``; the offline bound of the same workloads in ``solvers.bounds.gpu_bound``; the tuning
of FGD+ and FGD-Pack in ``policies.swarm.gpu_train``.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

import numpy as np

from packing.errors import PolicyError
from packing.feasibility.checker import check
from packing.feasibility.predicates import ClusterState
from packing.gpu.fragmentation import (
    ShapeDistribution,
    node_fragmentation,
    placement_record,
    shape_distribution,
)
from packing.model.instance import Instance, Request
from packing.sim.engine import PLACED, Engine
from packing.sim.policy import Policy
from packing.sim.simulator import Step, drive, policy_decide

FIT_RESOURCES = ("cpu_milli",)
"""Resources a task shape must fit on in the fragmentation measure (the simulator: CPU only)."""


def gpu_capacity(instance: Instance) -> float:
    """Total GPU capacity of the cluster (first GPU resource, e.g. gpu_milli)."""
    inst = instance
    if not inst.gpu_resources or not inst.max_gpus:
        return 0.0
    return float((inst.card_capacity[inst.host_type_of, 0] * inst.host_gpus).sum())


def task_gpu(instance: Instance) -> tuple[np.ndarray, np.ndarray]:
    """Nominal GPU demand of one task per app: ``(total, per_card)``, each shape ``(n_apps,)``.

    A whole card counts as the largest card capacity (1000 gpu_milli in openb).
    """
    inst = instance
    n = inst.n_apps
    if not inst.gpu_resources or not inst.max_gpus:
        return np.zeros(n), np.zeros(n)
    card = float(inst.card_capacity[:, 0].max())
    per = np.array([card if a.gpu_whole else (float(inst.gpu_demand[i, 0]) if a.gpu_cards else 0.0)
                    for i, a in enumerate(inst.apps)])
    return inst.gpu_cards * per, per


def pod_sequence(instance: Instance) -> np.ndarray:
    """App index of each pod of the pod list in its own order, shape ``(n_pods,)``."""
    from packing.sim.engine import arrivals

    return np.asarray(arrivals(instance).app, dtype=np.int64).copy()


@dataclass(frozen=True)
class Workload:
    """One seed's arrivals (see the module docstring, step 1).

    Attributes:
        instance: the pod list's cluster with one request per arriving pod, in arrival order, none
            leaving (apps keep their shapes; counts are the arrivals per app).
        dist: the pod list's shape distribution (before resampling).
        seed: the seed.
        n_listed: pods of the pod list that arrive (after removals).
        n_resampled: pods drawn from the list and appended.
        capacity: cluster GPU capacity.
    """

    instance: Instance
    dist: ShapeDistribution
    seed: int
    n_listed: int
    n_resampled: int
    capacity: float
    pod_counts: np.ndarray | None = None
    """Pods per app in the pod list, shape ``(n_apps,)`` (policies build other shape distributions
    from it, e.g. FGD-Pack's on every resource)."""


def build_workload(instance: Instance, seed: int, until: float = 1.3,
                   dist: ShapeDistribution | None = None) -> Workload:
    """The arrivals of one seed: the pod list shuffled, then resampled or cut to ``until`` x capacity.

    Args:
        instance: the cluster and the pod list (e.g. ``load_openb(path, nodes="gpu")``).
        seed: seed of the owned Generator.
        until: target GPU demand as a multiple of the cluster's GPU capacity (> 0).
        dist: the shape distribution (default: the pod list's, fit on :data:`FIT_RESOURCES` when the
            instance has them).

    Raises:
        ValueError: no GPU in the cluster, no GPU demand in the pod list, or ``until <= 0``.
    """
    if not until > 0:
        raise ValueError(f"until must be positive, got {until}")
    inst = instance
    cap = gpu_capacity(inst)
    if cap <= 0:
        raise ValueError(f"{inst.name}: the cluster has no GPU")
    total_app, per_card = task_gpu(inst)
    pods = pod_sequence(inst)
    if total_app[pods].sum() <= 0:
        raise ValueError(f"{inst.name}: the pod list asks for no GPU")
    if dist is None:
        fit = FIT_RESOURCES if all(r in inst.resources for r in FIT_RESOURCES) else None
        dist = shape_distribution(inst, np.bincount(pods, minlength=inst.n_apps), fit_resources=fit)
    rng = np.random.default_rng(seed)
    seq = list(pods[rng.permutation(len(pods))])
    target = until * cap
    demand = float(total_app[pods].sum())
    n_res = 0
    if demand > target:
        while demand > target and seq:
            a = seq.pop(int(rng.integers(len(seq))))
            demand -= float(total_app[a])
    elif demand < target:
        while True:
            a = int(pods[rng.integers(len(pods))])
            if demand + float(per_card[a]) > target:
                break
            seq.append(a)
            demand += float(total_app[a])
            n_res += 1
    n_listed = len(seq) - n_res
    arr = np.array(seq, dtype=np.int64)
    counts = np.bincount(arr, minlength=inst.n_apps)
    apps = tuple(dataclasses.replace(a, count=int(c)) for a, c in zip(inst.apps, counts, strict=True))
    requests = tuple(Request(float(i), inst.apps[int(a)].name, 1) for i, a in enumerate(arr))
    meta = {**inst.meta, "gpufrag": {"seed": seed, "until": until, "listed": n_listed,
                                     "resampled": n_res}}
    tuned = inst.replace(apps=apps, requests=requests, initial=None, meta=meta)
    return Workload(tuned, dist, seed, n_listed, n_res, cap, np.bincount(pods, minlength=inst.n_apps))


def level_bins(ratio: np.ndarray, until: int) -> list[tuple[int, int]]:
    """Per level ``0..until``, the slice ``[lo, hi)`` of the sorted ``ratio`` that the level averages.

    ``ratio`` is the records' arrived demand in whole percent. A level takes the records at it, or at
    ``L-1..L+1`` when there is none (``hi == lo``: no record), as ``merge_alloc_discrete.py``.
    """
    out = []
    for lvl in range(until + 1):
        lo, hi = int(np.searchsorted(ratio, lvl, "left")), int(np.searchsorted(ratio, lvl, "right"))
        if hi == lo:
            lo = int(np.searchsorted(ratio, lvl - 1, "left"))
            hi = int(np.searchsorted(ratio, lvl + 1, "right"))
        out.append((lo, hi))
    return out


@dataclass(frozen=True)
class Run:
    """One policy on one workload: a record after every arrival (see the module docstring, step 2).

    Attributes:
        policy: the policy's name.
        seed: the workload's seed.
        seconds: wall time of the replay.
        capacity: cluster GPU capacity.
        arrived: GPU demand arrived so far, shape ``(n_records,)`` (the first record is the empty
            cluster, then one per arrival).
        allocated: GPU allocated, shape ``(n_records,)``.
        frag: cluster fragmentation, shape ``(n_records,)``.
        idle: idle GPU, shape ``(n_records,)``.
        placed: pods placed.
        rejected: pods that fit nowhere.
    """

    policy: str
    seed: int
    seconds: float
    capacity: float
    arrived: np.ndarray
    allocated: np.ndarray
    frag: np.ndarray
    idle: np.ndarray
    placed: int
    rejected: int

    def levels(self, what: str = "unallocated", until: int = 130) -> np.ndarray:
        """A metric per whole arrival level ``0..until`` %, shape ``(until + 1,)`` (NaN: no record).

        Args:
            what: ``"unallocated"`` (100 - allocated % of capacity), ``"allocated"``, ``"frag"``
                (fragmented GPU % of capacity) or ``"frag_rate"`` (fragmented % of idle GPU).
            until: last level.
        """
        ratio = np.round(self.arrived / self.capacity * 100.0)
        if what in ("unallocated", "allocated"):
            val = np.round(self.allocated / self.capacity * 100.0, 2)
        elif what == "frag":
            val = self.frag / self.capacity * 100.0
        elif what == "frag_rate":
            val = np.where(self.idle > 0, self.frag / np.maximum(self.idle, 1e-300), 0.0) * 100.0
        else:
            raise ValueError(f"unknown metric {what!r}")
        out = np.full(until + 1, np.nan)
        order = np.argsort(ratio, kind="stable")
        csum = np.concatenate([[0.0], np.cumsum(val[order])])
        for lvl, (lo, hi) in enumerate(level_bins(ratio[order], until)):
            if hi > lo:
                out[lvl] = (csum[hi] - csum[lo]) / (hi - lo)
        return 100.0 - out if what == "unallocated" else out


def run_policy(workload: Workload, policy: Policy, *, check_result: bool = True,
               compiled: bool = True) -> Run:
    """Replay ``workload`` with ``policy`` on the engine, recording after every arrival.

    The engine runs the policy's compiled kernel when it has one (``compiled=False``: decision by
    decision, the numpy path; both make the same decisions). The records (allocated GPU, cluster
    fragmentation after each arrival) are computed from the hosts and cards chosen
    (:func:`packing.gpu.fragmentation.placement_record`).

    Raises:
        PolicyError: the policy chose a host outside the mask (or cards that do not fit).
        RuntimeError: the final placement breaks a constraint (a bug).
    """
    inst = workload.instance
    dist = workload.dist
    name = str(getattr(policy, "name", type(policy).__name__))
    t0 = time.perf_counter()
    policy.reset(inst, workload.seed)
    eng = Engine(inst, record=False)
    seq = pod_sequence(inst)
    n = len(seq)
    g = max(inst.max_gpus, 1)
    eng.reset(compiled=policy if compiled else None)
    st0 = ClusterState(inst)
    if eng.ran_compiled:
        hosts = np.asarray(eng.trajectory().host, dtype=np.int64)
        cards = np.asarray(policy.last_cards, dtype=np.int64)  # type: ignore[attr-defined]
    else:
        hosts = np.full(n, -1, dtype=np.int64)
        cards = np.full((n, g), -1, dtype=np.int64)

        def record(step: Step) -> None:
            if step.outcome != PLACED:
                raise PolicyError(f"policy {name!r} returned {step.action} for app "
                                  f"{inst.apps[step.decision.app].name!r}; expected a host of the mask")
            hosts[step.decision.arrival] = step.action
            cards[step.decision.arrival, :len(step.cards)] = step.cards

        drive([eng], policy_decide(policy, name), record, name=name)
    if check_result:
        bad = check(inst, eng.placement())
        if bad:
            raise RuntimeError(f"{name}: the final placement breaks {len(bad)} constraint(s): {bad[0]}")
    alloc, frag = placement_record(st0, seq, hosts, cards, dist)
    seconds = time.perf_counter() - t0
    f0 = float(node_fragmentation(st0, dist).sum())
    arrived = np.concatenate([[0.0], np.cumsum(task_gpu(inst)[0][seq])])
    allocated = np.concatenate([[0.0], alloc])
    fr = np.concatenate([[f0], frag])
    n_placed = int(np.count_nonzero(hosts >= 0))
    return Run(name, workload.seed, seconds, workload.capacity, arrived, allocated, fr,
               workload.capacity - allocated, n_placed, n - n_placed)


__all__ = ["FIT_RESOURCES", "Run", "Workload", "build_workload", "gpu_capacity", "level_bins",
           "pod_sequence", "run_policy", "task_gpu"]
