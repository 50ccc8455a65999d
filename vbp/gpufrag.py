"""The FGD paper's evaluation protocol on openb: GPU allocation and fragmentation as demand arrives.

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
2. **Replay** (:func:`run_policy`): every arrival goes through :class:`packing.engine.Engine` (the
   one engine; a pod that fits nowhere is rejected and never retried) and the final placement goes
   through :func:`packing.checker.check`. After every arrival: arrived GPU demand, allocated GPU,
   cluster fragmentation (:mod:`packing.fragmentation`) and idle GPU. Policies with a compiled GPU
   kernel (:mod:`policies.gpu_kernels`: all of the paper's but Random, and FGD-Pack) run the whole
   episode in it, cards included, with the same decisions as step by step (tested); the records are
   then replayed from the hosts and cards chosen (:func:`packing.fragmentation.placement_record`).
3. **Levels** (:meth:`Run.levels`): as ``merge_alloc_discrete.py``: each record's arrived demand is
   rounded to a whole percent of capacity (half to even); the value at level ``L`` is the mean over
   the records at ``L`` (or at ``L-1..L+1`` when there is none). Unallocated GPU % = 100 - allocated %.
   The paper's figures take the median over seeds (Fig. 7) and the mean at 100% (bar plots).

Published numbers (:data:`PUBLISHED`): the authors' cached results, 6 policies x 17 pod lists x 10
seeds (``experiments/analysis/expected_results/analysis_allo_discrete.csv`` of the simulator), as
unallocated GPU %: the median over seeds at 90/95/100/130% arrived, and the mean at 100%. They apply
only to the paper's cluster (:data:`PAPER_CLUSTER`, the 1,213 GPU nodes of openb).
"""

from __future__ import annotations

import dataclasses
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from packing.checker import check
from packing.engine import PLACED, Engine
from packing.errors import PolicyError
from packing.feasibility import ClusterState
from packing.fragmentation import ShapeDistribution, node_fragmentation, placement_record, shape_distribution
from packing.model import Instance, Request
from packing.policy import WAIT, ChoosingCards, Policy, implements
from policies.gpu import FGD, FGDPack, FGDPlus
from policies.registry import get_policy

PAPER_NAMES = {"gpu-random": "01-Random", "gpu-dotprod": "02-DotProd", "gpu-clustering": "03-GpuClustering",
               "gpu-packing": "04-GpuPacking", "gpu-bestfit": "05-BestFit", "fgd": "06-FGD"}
"""vbp policy name -> the paper's (simulator's) policy name."""

DEFAULT_POLICIES = tuple(PAPER_NAMES)
"""The six policies of the paper, in its order."""

LEVELS = (90, 95, 100, 130)
"""Arrival levels (% of cluster GPU capacity) the tables report."""

FIT_RESOURCES = ("cpu_milli",)
"""Resources a task shape must fit on in the fragmentation measure (the simulator: CPU only)."""

PUBLISHED: dict[str, dict[str, tuple[float, float, float, float, float]]] = {
    "cpu050": {
        "01-Random": (12.59, 11.72, 11.02, 8.84, 10.98),
        "02-DotProd": (10.0, 6.97, 6.94, 6.71, 6.97),
        "03-GpuClustering": (10.0, 6.56, 6.52, 6.21, 6.48),
        "04-GpuPacking": (10.0, 6.51, 6.47, 6.21, 6.54),
        "05-BestFit": (10.0, 6.45, 6.42, 6.18, 6.44),
        "06-FGD": (10.0, 5.2, 5.0, 4.8, 5.0),
    },
    "cpu100": {
        "01-Random": (13.91, 13.13, 12.56, 10.83, 12.56),
        "02-DotProd": (10.0, 8.27, 8.22, 7.98, 8.27),
        "03-GpuClustering": (10.0, 7.5, 7.46, 7.19, 7.59),
        "04-GpuPacking": (10.0, 7.48, 7.44, 7.19, 7.51),
        "05-BestFit": (10.0, 6.75, 6.72, 6.53, 6.74),
        "06-FGD": (10.0, 5.09, 4.79, 4.66, 4.79),
    },
    "cpu200": {
        "01-Random": (17.67, 17.35, 17.0, 16.3, 16.97),
        "02-DotProd": (12.33, 12.28, 12.24, 12.0, 12.54),
        "03-GpuClustering": (10.34, 10.29, 10.25, 9.98, 10.33),
        "04-GpuPacking": (10.1, 9.93, 9.87, 9.62, 10.02),
        "05-BestFit": (10.0, 7.91, 7.85, 7.58, 7.85),
        "06-FGD": (10.0, 5.31, 5.18, 4.92, 5.18),
    },
    "cpu250": {
        "01-Random": (20.57, 20.28, 20.06, 19.69, 20.0),
        "02-DotProd": (16.32, 16.27, 16.22, 15.96, 16.43),
        "03-GpuClustering": (12.58, 12.55, 12.48, 12.26, 12.25),
        "04-GpuPacking": (12.0, 11.97, 11.92, 11.69, 11.95),
        "05-BestFit": (10.01, 8.77, 8.7, 8.5, 8.79),
        "06-FGD": (10.02, 6.84, 6.8, 6.59, 6.8),
    },
    "default": {
        "01-Random": (14.97, 14.32, 13.75, 12.62, 13.7),
        "02-DotProd": (10.02, 9.47, 9.44, 9.2, 9.38),
        "03-GpuClustering": (10.0, 8.47, 8.42, 8.21, 8.35),
        "04-GpuPacking": (10.0, 8.23, 8.19, 7.94, 8.22),
        "05-BestFit": (9.99, 7.14, 7.09, 6.89, 7.14),
        "06-FGD": (10.0, 5.09, 4.77, 4.6, 4.77),
    },
    "gpushare100": {
        "01-Random": (21.75, 21.3, 21.07, 20.53, 21.1),
        "02-DotProd": (18.1, 18.01, 17.93, 17.53, 18.02),
        "03-GpuClustering": (17.85, 17.77, 17.7, 17.3, 17.78),
        "04-GpuPacking": (17.93, 17.86, 17.78, 17.36, 17.87),
        "05-BestFit": (15.56, 15.48, 15.4, 15.0, 15.38),
        "06-FGD": (13.46, 13.41, 13.36, 13.09, 13.36),
    },
    "gpushare40": {
        "01-Random": (16.44, 15.53, 15.04, 13.97, 15.14),
        "02-DotProd": (10.78, 10.72, 10.66, 10.42, 10.7),
        "03-GpuClustering": (10.37, 10.22, 10.18, 9.94, 10.24),
        "04-GpuPacking": (10.35, 10.24, 10.19, 9.93, 10.23),
        "05-BestFit": (10.01, 8.57, 8.53, 8.27, 8.56),
        "06-FGD": (10.01, 6.09, 6.05, 5.86, 6.04),
    },
    "gpushare60": {
        "01-Random": (18.15, 17.62, 17.22, 16.35, 17.19),
        "02-DotProd": (13.25, 13.22, 13.17, 12.83, 13.18),
        "03-GpuClustering": (13.13, 13.07, 13.03, 12.77, 13.1),
        "04-GpuPacking": (12.88, 12.82, 12.75, 12.48, 12.85),
        "05-BestFit": (11.02, 10.97, 10.91, 10.65, 10.94),
        "06-FGD": (10.0, 8.73, 8.7, 8.59, 8.74),
    },
    "gpushare80": {
        "01-Random": (20.31, 19.84, 19.35, 18.75, 19.38),
        "02-DotProd": (16.02, 15.96, 15.89, 15.53, 15.86),
        "03-GpuClustering": (15.59, 15.53, 15.45, 15.08, 15.5),
        "04-GpuPacking": (15.42, 15.36, 15.28, 14.94, 15.35),
        "05-BestFit": (13.4, 13.33, 13.27, 12.94, 13.34),
        "06-FGD": (11.03, 10.98, 10.91, 10.69, 10.92),
    },
    "gpuspec10": {
        "01-Random": (15.1, 14.3, 13.69, 12.49, 13.74),
        "02-DotProd": (15.16, 10.53, 9.75, 9.56, 9.83),
        "03-GpuClustering": (14.62, 10.0, 8.06, 7.81, 8.04),
        "04-GpuPacking": (14.62, 9.99, 7.77, 7.56, 7.76),
        "05-BestFit": (15.06, 10.44, 6.88, 6.67, 6.9),
        "06-FGD": (14.18, 9.62, 5.3, 5.06, 5.34),
    },
    "gpuspec20": {
        "01-Random": (16.56, 14.66, 13.91, 12.6, 14.1),
        "02-DotProd": (20.14, 15.97, 11.68, 10.03, 11.71),
        "03-GpuClustering": (19.22, 15.1, 10.87, 7.78, 10.89),
        "04-GpuPacking": (18.97, 14.83, 10.65, 6.95, 10.72),
        "05-BestFit": (19.97, 15.78, 11.53, 6.74, 11.54),
        "06-FGD": (13.79, 9.19, 5.31, 5.14, 5.34),
    },
    "gpuspec25": {
        "01-Random": (18.48, 15.63, 14.59, 13.12, 14.58),
        "02-DotProd": (22.56, 18.53, 14.55, 10.34, 14.56),
        "03-GpuClustering": (21.47, 17.56, 13.59, 8.0, 13.59),
        "04-GpuPacking": (21.09, 17.16, 13.22, 6.97, 13.23),
        "05-BestFit": (22.37, 18.35, 14.3, 6.78, 14.33),
        "06-FGD": (14.78, 10.18, 6.08, 5.19, 6.09),
    },
    "gpuspec33": {
        "01-Random": (22.6, 19.19, 16.19, 13.57, 16.13),
        "02-DotProd": (27.38, 23.73, 20.17, 10.89, 20.18),
        "03-GpuClustering": (26.2, 22.54, 18.96, 7.97, 18.91),
        "04-GpuPacking": (24.89, 21.28, 17.67, 6.77, 17.78),
        "05-BestFit": (26.87, 23.18, 19.59, 6.91, 19.6),
        "06-FGD": (19.34, 15.73, 12.12, 5.44, 12.16),
    },
    "multigpu20": {
        "01-Random": (16.02, 14.07, 13.16, 11.34, 13.08),
        "02-DotProd": (10.0, 8.21, 8.19, 7.98, 8.15),
        "03-GpuClustering": (10.0, 6.65, 6.62, 6.41, 6.66),
        "04-GpuPacking": (10.0, 6.55, 6.49, 6.25, 6.5),
        "05-BestFit": (10.0, 6.31, 6.27, 6.1, 6.27),
        "06-FGD": (10.0, 5.06, 4.47, 4.35, 4.47),
    },
    "multigpu30": {
        "01-Random": (19.38, 15.93, 13.43, 10.8, 13.37),
        "02-DotProd": (9.98, 7.01, 6.98, 6.77, 6.89),
        "03-GpuClustering": (10.0, 5.55, 5.45, 5.27, 5.45),
        "04-GpuPacking": (10.0, 5.32, 5.23, 5.04, 5.3),
        "05-BestFit": (9.98, 5.52, 5.47, 5.36, 5.43),
        "06-FGD": (9.98, 5.0, 3.61, 3.52, 3.64),
    },
    "multigpu40": {
        "01-Random": (21.43, 17.91, 14.77, 9.98, 14.62),
        "02-DotProd": (10.02, 5.94, 5.91, 5.78, 5.96),
        "03-GpuClustering": (10.02, 5.19, 4.53, 4.37, 4.65),
        "04-GpuPacking": (10.02, 5.03, 4.44, 4.25, 4.41),
        "05-BestFit": (10.02, 5.1, 4.91, 4.78, 4.9),
        "06-FGD": (10.03, 5.04, 3.1, 3.0, 3.09),
    },
    "multigpu50": {
        "01-Random": (24.79, 21.78, 18.61, 9.77, 18.72),
        "02-DotProd": (10.07, 5.45, 5.25, 5.12, 5.27),
        "03-GpuClustering": (10.13, 5.27, 4.36, 4.22, 4.31),
        "04-GpuPacking": (10.07, 5.2, 3.93, 3.81, 3.94),
        "05-BestFit": (10.06, 4.98, 4.42, 4.3, 4.38),
        "06-FGD": (10.07, 5.07, 2.91, 2.83, 2.91),
    },
}
"""Published unallocated GPU % per pod list (``openb_pod_list_<name>``) and paper policy name:
``(median at 90, 95, 100, 130 % arrived, mean at 100 %)`` over the 10 seeds 42..51."""


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
    from packing.engine import arrivals

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


def _level_bins(ratio: np.ndarray, until: int) -> list[tuple[int, int]]:
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
        for lvl, (lo, hi) in enumerate(_level_bins(ratio[order], until)):
            if hi > lo:
                out[lvl] = (csum[hi] - csum[lo]) / (hi - lo)
        return 100.0 - out if what == "unallocated" else out


def make_policy(name: str, dist: ShapeDistribution, workload: Workload | None = None) -> Policy:
    """A fresh policy by registry name; FGD and FGD+ get the pod list's shape distribution.

    FGD-Pack gets the pod list's distribution on every resource at its own threshold (built from
    ``workload.pod_counts``; without a workload it builds its own from the instance at reset).
    """
    pol = get_policy(name)
    if isinstance(pol, FGDPack):
        shapes = None
        if workload is not None and workload.pod_counts is not None:
            shapes = shape_distribution(workload.instance, workload.pod_counts, threshold=pol.threshold)
        return FGDPack(lam=pol.lam, threshold=pol.threshold, shapes=shapes)
    if isinstance(pol, FGDPlus):
        pol = FGDPlus(shapes=dist, weights=pol.weights.tolist())
    elif isinstance(pol, FGD):
        pol = FGD(shapes=dist)
    return pol


def run_policy(workload: Workload, policy: Policy, *, check_result: bool = True,
               compiled: bool = True) -> Run:
    """Replay ``workload`` with ``policy`` on the engine, recording after every arrival.

    The engine runs the policy's compiled kernel when it has one (``compiled=False``: decision by
    decision, the numpy path; both make the same decisions). The records (allocated GPU, cluster
    fragmentation after each arrival) are computed from the hosts and cards chosen
    (:func:`packing.fragmentation.placement_record`).

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
    d = eng.reset(compiled=policy if compiled else None)
    st0 = ClusterState(inst)
    if eng.ran_compiled:
        hosts = np.asarray(eng.trajectory().host, dtype=np.int64)
        cards = np.asarray(policy.last_cards, dtype=np.int64)  # type: ignore[attr-defined]
    else:
        hosts = np.full(n, -1, dtype=np.int64)
        cards = np.full((n, g), -1, dtype=np.int64)
        cards_by = implements(policy, ChoosingCards)
        while d is not None:
            obs = eng.observation()
            mask = eng.mask()
            h = int(policy.act(obs, mask))
            if h == WAIT or h < 0 or not mask[h]:
                raise PolicyError(f"policy {name!r} returned {h} for app {inst.apps[d.app].name!r}; "
                                  "expected a host of the mask")
            ch = (policy.choose_cards(obs, h) if cards_by  # type: ignore[attr-defined]
                  else eng.state.choose_cards(d.app, h))
            arrival = d.arrival
            if eng.apply(h, ch) == PLACED:
                hosts[arrival] = h
                cards[arrival, :len(ch)] = sorted(ch)
            d = eng.decision
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


@dataclass
class PolicyResult:
    """All seeds of one policy.

    Attributes:
        name: vbp policy name.
        runs: one :class:`Run` per seed.
        published: the paper's numbers for this pod list, or None.
    """

    name: str
    runs: list[Run] = field(default_factory=list)
    published: tuple[float, float, float, float, float] | None = None

    def curve(self, what: str = "unallocated", until: int = 130, stat: str = "median") -> np.ndarray:
        """Median (or mean) over seeds of :meth:`Run.levels`, shape ``(until + 1,)``."""
        m = np.array([r.levels(what, until) for r in self.runs])
        with warnings.catch_warnings():  # levels without any record stay NaN
            warnings.simplefilter("ignore", RuntimeWarning)
            return np.nanmedian(m, axis=0) if stat == "median" else np.nanmean(m, axis=0)

    def at(self, levels: Sequence[int], until: int, what: str = "unallocated",
           stat: str = "median") -> dict[str, float | None]:
        """The curve at some levels (``None`` beyond ``until`` or without a record)."""
        c = self.curve(what, until, stat)
        return {str(lv): (None if lv > until or not np.isfinite(c[lv]) else round(float(c[lv]), 2))
                for lv in levels}

    @property
    def seconds(self) -> float:
        """Mean wall time per seed."""
        return float(np.mean([r.seconds for r in self.runs])) if self.runs else 0.0


PAPER_CLUSTER = (1213, 6212)
"""GPU nodes and GPUs of the paper's cluster (openb_node_list_gpu_node.csv)."""


def is_paper_cluster(instance: Instance) -> bool:
    """Whether the instance's cluster is the paper's (so its published numbers apply)."""
    return (instance.n_hosts, int(instance.host_gpus.sum())) == PAPER_CLUSTER


def pod_list_name(instance: Instance) -> str:
    """The pod list's short name (``default`` for ``openb_pod_list_default.csv``)."""
    pods = str(instance.meta.get("pods", instance.name))
    return Path(pods).stem.removeprefix("openb_pod_list_").removeprefix("openb-")


def evaluate(instance: Instance, policies: Sequence[str] = DEFAULT_POLICIES, seeds: Sequence[int] = (42,),
             until: float = 1.3, progress: Callable[[str, int, Run], None] | None = None
             ) -> list[PolicyResult]:
    """Every policy on every seed's workload (the same workloads for every policy).

    Args:
        instance: the cluster and pod list.
        policies: registry names.
        seeds: workload seeds (the paper: 42..51; vbp's Generators, not the simulator's).
        until: target demand as a multiple of capacity.
        progress: called after each run with (policy, seed, run).
    """
    pub = PUBLISHED.get(pod_list_name(instance), {}) if is_paper_cluster(instance) else {}
    results = [PolicyResult(p, [], pub.get(PAPER_NAMES.get(p, ""))) for p in policies]
    if not seeds:
        raise ValueError("no seed")
    for s in seeds:
        wl = build_workload(instance, int(s), until)
        for res in results:
            run = run_policy(wl, make_policy(res.name, wl.dist, wl))
            res.runs.append(run)
            if progress is not None:
                progress(res.name, int(s), run)
    return results


def plot_curves(path: str | Path, results: Sequence[PolicyResult], until: int, title: str = "",
                bound: BoundResult | None = None) -> Path:
    """The paper's Fig. 7: unallocated GPU % against arrived demand % (median over seeds).

    Left: the whole run; right: from 80% arrived on, with the published medians as markers. With
    ``bound``, the offline bound (no scheduler can leave less unallocated) as a dashed black line.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    x = np.arange(until + 1)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, res in enumerate(results):
        y = res.curve("unallocated", until)
        c = colors[i % len(colors)]
        for ax in axes:
            ax.plot(x, y, color=c, label=res.name)
        if res.published is not None:
            lv = [v for v in LEVELS if v <= until]
            axes[1].scatter(lv, [res.published[LEVELS.index(v)] for v in lv], color=c, marker="x")
    if bound is not None:
        yb = bound.curve()[: until + 1]
        for ax in axes:
            ax.plot(x[: len(yb)], yb, color="black", linestyle="--", label="offline bound")
    axes[0].set_xlabel("arrived GPU demand (% of capacity)")
    axes[0].set_ylabel("unallocated GPU (%)")
    axes[0].legend(fontsize=8)
    lo = min(80, until)
    axes[1].set_xlim(lo, until)
    vals = [res.curve("unallocated", until)[lo:] for res in results]
    finite = np.concatenate([v[np.isfinite(v)] for v in vals]) if vals else np.zeros(0)
    if len(finite):
        axes[1].set_ylim(0, float(finite.max()) * 1.1 + 1)
    axes[1].set_xlabel("arrived GPU demand (% of capacity)")
    axes[1].set_title("zoom; x = published median", fontsize=9)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    p = Path(path)
    from packing.atomic import write_with

    try:
        write_with(p, fig.savefig)
    finally:
        plt.close(fig)
    return p


# -- the offline bound ---------------------------------------------------------------------------

CONFIG_LEVELS = (90, 95, 100)
"""Levels where :class:`GpuBound` solves the configuration LP by default. Not 130%: there its master
LP already allocates 99.8% of openb's GPU (seed 42), so no bound from it can exceed 0.2% unallocated,
and column generation does not close in 8 minutes."""

BOUND_METHODS = ("config", "aggregate")
"""Offline bounds :class:`GpuBound` can compute: the configuration LP (per host) or the aggregated LP."""

BOUND_CLIQUES = (1, 2, 3)
"""``j`` of the card-count cuts of :class:`GpuBound`: a card holds at most ``j`` GPU-sharing tasks
whose share exceeds ``1/(j+1)`` of the card."""


class GpuBound:
    """Upper bound on the GPU that any placement of some pods can allocate (offline, cards respected).

    **The relaxation.** Hosts are grouped by host type ``t`` (``N_t`` hosts, each with capacity
    ``C_t`` on every host resource, ``G_t`` cards of share ``K_t``). Variable ``x[a, t] >= 0`` is the
    number of pods of app (shape) ``a`` placed on hosts of type ``t``; it exists only when one pod
    fits on an empty host of the type (resources, ``k_a <= G_t`` cards of enough share, accepted card
    model). With ``n_a`` pods of the app arrived and ``q[a, t] = k_a K_t`` (a whole-card pod) or
    ``k_a g_a`` (a GPU-sharing pod) the GPU one pod allocates there, the LP is::

        max  sum_{a,t} q[a,t] x[a,t]
        s.t. sum_t x[a,t]                          <= n_a                 (arrived pods)
             sum_a d[a,r] x[a,t]                   <= N_t C_t[r]          (every host resource r)
             sum_a q[a,t] x[a,t]                   <= N_t G_t K_t         (GPU share)
             sum_{a whole} k_a x[a,t]
               + sum_{a sharing, g_a > K_t/(j+1)} k_a x[a,t] / j  <= N_t G_t   (cards, j = 1, 2, 3)

    **Validity.** Take any placement of the arrived pods that the checker accepts, and let ``x[a,t]``
    count its pods of app ``a`` on type ``t``. Every constraint is the sum over the type's hosts of
    a constraint every single host satisfies: its resources and its cards' shares are not exceeded;
    a whole-card pod occupies ``k_a`` cards on which nothing else runs; a card holds at most ``j``
    sharing pods with share ``> K/(j+1)`` (``j+1`` of them would need more than ``K``), so such a pod
    uses at least ``1/j`` of a card that no whole-card pod uses. So ``x`` is feasible and its
    objective is exactly the GPU the placement allocates: the LP optimum is at least the allocated
    GPU of every placement, the exact offline optimum included. (The placement problem also needs
    the shares to pack into individual cards and hosts; dropping that only loosens the bound.)
    Capacities are taken with the checker's tolerance (:data:`packing.feasibility.TOL`).

    **Float safety.** The number returned is not the solver's objective but a *dual certificate*:
    with ``y >= 0`` the solver's duals of the inequalities and ``z = max(0, q - A^T y)``, weak duality
    gives ``opt <= b.y + n.z`` for any ``y >= 0``, whatever the solver's tolerances; it is computed in
    float64 and inflated by ``1e-9`` relative plus ``1e-6`` absolute, then capped by the trivial
    bounds (the arrived GPU and the capacity, which are valid too). Cost: one HiGHS solve of about
    ``apps x types`` variables (a few milliseconds at openb's size).

    **The configuration bound** (``method="config"``, the default for :meth:`levels`): at the
    arrival levels ``config_levels`` the per-host configuration LP of
    :class:`solvers.gpu_config.ConfigBound` is solved by column generation with exact CP-SAT pricing
    (cards, CPU, memory and card models of one host coupled exactly); its value is a Lagrangian
    certificate valid at every iteration, so a time limit only loosens it. Each level gets the least
    of the valid bounds it has: this LP's, the aggregated LP's, and the configuration bound of any
    later prefix (allocation only grows with the pods arrived).

    Args:
        instance: the cluster and the apps (pod shapes); rules and anti-affinity are ignored (openb has
            none; ignoring constraints keeps the bound valid).
        method: ``"config"`` (the configuration LP at ``config_levels`` on top of the aggregated LP)
            or ``"aggregate"`` (the aggregated LP only, about 1 s per seed).
        config_levels: arrival levels (%) where the configuration LP is solved.
        time_limit: seconds of column generation per level (the bound is valid when it stops).
    """

    def __init__(self, instance: Instance, method: str = "config",
                 config_levels: Sequence[int] = CONFIG_LEVELS, time_limit: float = 300.0) -> None:
        from scipy.sparse import csr_matrix

        if method not in BOUND_METHODS:
            raise ValueError(f"unknown bound method {method!r}; expected one of {', '.join(BOUND_METHODS)}")
        self.method = method
        self.config_levels = tuple(int(x) for x in config_levels)
        self.time_limit = float(time_limit)
        self._config: Any = None
        self.config_results: dict[int, Any] = {}
        """Per level where the configuration LP ran: its :class:`solvers.gpu_config.ConfigResult`."""

        from packing.feasibility import TOL

        inst = instance
        self.instance = inst
        n_types = len(inst.host_types)
        cap_r = inst.type_capacity * (1.0 + TOL) + TOL  # (T, R)
        count = inst.type_count.astype(np.float64)  # (T,)
        has_gpu = bool(inst.gpu_resources) and inst.max_gpus > 0
        gpus = np.array([t.gpus for t in inst.host_types], dtype=np.float64)
        kcap = inst.card_capacity[:, 0].astype(np.float64) if has_gpu else np.zeros(n_types)
        k = inst.gpu_cards.astype(np.float64)
        whole = np.array([a.gpu_whole for a in inst.apps], dtype=bool) & (k > 0)
        share = np.where(k > 0, np.where(whole, 0.0, inst.gpu_demand[:, 0] if has_gpu else 0.0), 0.0)
        share = np.nan_to_num(share, posinf=0.0)
        q = np.where(whole[:, None], k[:, None] * kcap[None, :], (k * share)[:, None] * np.ones(n_types))
        ok = (inst.demand[:, None, :] <= cap_r[None, :, :]).all(axis=2)  # (A, T)
        ok &= (k[:, None] <= gpus[None, :])
        ok &= ~((k[:, None] > 0) & (kcap[None, :] <= 0))
        ok &= ~((~whole & (k > 0))[:, None] & (share[:, None] > kcap[None, :] * (1.0 + TOL) + TOL))
        if inst.gpu_model_ok is not None:
            ok &= inst.gpu_model_ok
        self.var_app, self.var_type = np.nonzero(ok)
        a_, t_ = self.var_app, self.var_type
        self.q = q[a_, t_]
        nv = len(a_)
        rows: list[np.ndarray] = []
        rhs: list[float] = []
        for t in range(n_types):
            on = t_ == t
            for r in range(inst.n_resources):
                rows.append(np.where(on, inst.demand[a_, r], 0.0))
                rhs.append(float(count[t] * cap_r[t, r]))
            if gpus[t] > 0 and has_gpu:
                rows.append(np.where(on, self.q, 0.0))
                rhs.append(float(count[t] * gpus[t] * (kcap[t] * (1.0 + TOL) + TOL)))
                for j in BOUND_CLIQUES:
                    big = ~whole[a_] & (k[a_] > 0) & (share[a_] > kcap[t] * (1.0 + TOL) / (j + 1))
                    coef = np.where(whole[a_], k[a_], 0.0) + np.where(big, k[a_] / j, 0.0)
                    rows.append(np.where(on, coef, 0.0))
                    rhs.append(float(count[t] * gpus[t]))
        self.apps = np.unique(a_)  # one arrived-pod row per app with a variable (not variable
        # bounds, whose duals HiGHS reports separately)
        arr = (a_[None, :] == self.apps[:, None]).astype(np.float64)
        self.A = np.vstack([np.array(rows).reshape(len(rows), nv), arr])
        self.b = np.array(rhs, dtype=np.float64)
        self._sparse = csr_matrix(self.A)
        self.task_gpu = task_gpu(inst)[0]
        self.capacity = gpu_capacity(inst)

    def solve(self, counts: np.ndarray) -> float:
        """The bound on allocated GPU for ``counts[a]`` arrived pods per app, shape ``(n_apps,)``."""
        from scipy.optimize import linprog

        c = np.asarray(counts, dtype=np.float64)
        # pods of an app that fits no host type allocate nothing
        trivial = min(float(self.task_gpu[self.apps] @ c[self.apps]), self.capacity)
        if len(self.q) == 0 or trivial <= 0:
            return 0.0
        u = c[self.var_app]
        b = np.concatenate([self.b, c[self.apps]])
        res = linprog(-self.q, A_ub=self._sparse, b_ub=b, bounds=(0, None), method="highs")
        if res.status != 0 or res.ineqlin is None:
            return trivial
        y = np.maximum(-np.asarray(res.ineqlin.marginals, dtype=np.float64), 0.0)
        z = np.maximum(self.q - self.A.T @ y, 0.0)
        cert = float(b @ y + u @ z)
        cert = cert * (1.0 + 1e-9) + 1e-6
        return min(cert, trivial + 1e-6 * max(1.0, trivial))

    def levels(self, workload: Workload, until: int = 130,
               log: Callable[[str], None] | None = None) -> np.ndarray:
        """The bound per whole arrival level ``0..until`` %, as unallocated GPU %, shape ``(until + 1,)``.

        Level ``L`` of :meth:`Run.levels` averages the records whose arrived demand rounds to ``L`` (or
        to ``L-1..L+1``); allocation only grows with the pods arrived, so every one of them is below the
        bound of the *last* of those records, which is what is returned (as ``100 -`` the bound in % of
        capacity, rounded like :meth:`Run.levels`, a monotone map; NaN where no record exists). The
        median (or mean) over seeds of these lower bounds is below every policy's median (mean).

        Only levels where the LP can beat the trivial bound ``min(arrived, capacity)`` are solved: the
        prefixes whose arrived pods all fit fractionally are downward closed (scale a solution down
        app by app) and those whose LP reaches the capacity are upward closed (the LP grows with the
        pods), so two bisections find the levels in between; the others get the trivial bound, which
        is valid by itself. With ``method="config"`` the configuration LP then tightens the levels
        of ``config_levels`` and every level before them (:meth:`_config_levels`).
        """
        seq = pod_sequence(workload.instance)
        total = task_gpu(workload.instance)[0]
        arrived = np.concatenate([[0.0], np.cumsum(total[seq])])
        cap = workload.capacity
        ratio = np.round(arrived / cap * 100.0)
        last = np.full(until + 1, -1, dtype=np.int64)  # record index (= pods arrived) per level
        for lvl, (lo, hi) in enumerate(_level_bins(ratio, until)):  # ratio is sorted (a cumsum)
            if hi > lo:
                last[lvl] = hi - 1
        have = np.flatnonzero(last >= 0)
        cache: dict[int, float] = {}

        def bound(i: int) -> float:
            p = int(last[have[i]])
            if p not in cache:
                cache[p] = self.solve(np.bincount(seq[:p], minlength=workload.instance.n_apps))
            return cache[p]

        def trivial(i: int) -> float:
            return min(float(arrived[last[have[i]]]), cap)

        def all_fit(i: int) -> bool:
            return bool(arrived[last[have[i]]] < cap and bound(i) >= trivial(i) * (1 - 1e-9))

        def full(i: int) -> bool:
            return bound(i) >= cap * (1 - 1e-9)

        lo, hi = 0, len(have)  # first index where not all_fit
        while lo < hi:
            mid = (lo + hi) // 2
            lo, hi = (mid + 1, hi) if all_fit(mid) else (lo, mid)
        first = lo
        lo, hi = first, len(have)  # first index where full
        while lo < hi:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if full(mid) else (mid + 1, hi)
        out = np.full(until + 1, np.nan)
        for i, lvl in enumerate(have.tolist()):
            b = bound(i) if first <= i < lo else trivial(i)
            out[lvl] = 100.0 - np.round(b * (1.0 + 1e-9) / cap * 100.0, 2)
        if self.method == "config":
            self._config_levels(workload, seq, last, out, log)
        return out

    def solve_config(self, counts: np.ndarray, log: Callable[[str], None] | None = None) -> Any:
        """The configuration LP bound (:class:`solvers.gpu_config.ConfigResult`) for ``counts`` per app.

        Columns are kept between calls (warm start for the next level).
        """
        from solvers.gpu_config import ConfigBound

        if self._config is None:
            self._config = ConfigBound(self.instance)
        return self._config.solve(np.asarray(counts), time_limit=self.time_limit, log=log)

    def _config_levels(self, workload: Workload, seq: np.ndarray, last: np.ndarray, out: np.ndarray,
                       log: Callable[[str], None] | None) -> None:
        """Tighten ``out`` (unallocated %, shape ``(until + 1,)``) with the configuration LP.

        The bound of the prefix of ``p`` pods holds for every shorter prefix too, so each level takes the
        largest unallocated % of the configuration bounds at its own or any later solved prefix.
        """
        cap = workload.capacity
        n = workload.instance.n_apps
        todo = [x for x in self.config_levels if 0 <= x < len(out) and last[x] >= 0]
        for lvl in sorted(todo, key=lambda x: (abs(x - 100), -x)):  # 100% first (the paper's bars)
            p = int(last[lvl])
            if lvl in self.config_results:
                continue
            res = self.solve_config(np.bincount(seq[:p], minlength=n), log=log)
            self.config_results[lvl] = res
            un = 100.0 - np.round(res.bound * (1.0 + 1e-9) / cap * 100.0, 2)
            for other in np.flatnonzero((last >= 0) & (last <= p)).tolist():
                if np.isfinite(out[other]) and un > out[other]:
                    out[other] = un


@dataclass
class BoundResult:
    """The offline bound (:class:`GpuBound`) of every seed's workload, as unallocated GPU %.

    Attributes:
        seeds: the workload seeds.
        curves: per seed and level ``0..until``, shape ``(n_seeds, until + 1)``.
        seconds: wall time per seed.
    """

    seeds: list[int]
    curves: np.ndarray
    seconds: list[float]
    method: str = "aggregate"
    details: list[dict[int, Any]] = field(default_factory=list)
    """Per seed, per level where the configuration LP ran: its ``ConfigResult``."""

    def curve(self, stat: str = "median") -> np.ndarray:
        """Median (or mean) over seeds, shape ``(until + 1,)``: below every policy's median (mean)."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return np.nanmedian(self.curves, axis=0) if stat == "median" else np.nanmean(self.curves, axis=0)

    def at(self, levels: Sequence[int], stat: str = "median") -> dict[str, float | None]:
        """The curve at some levels (``None`` beyond ``until`` or without a record)."""
        c = self.curve(stat)
        return {str(lv): (None if lv >= len(c) or not np.isfinite(c[lv]) else round(float(c[lv]), 2))
                for lv in levels}


def evaluate_bound(instance: Instance, seeds: Sequence[int], until: float = 1.3, *, method: str = "config",
                   config_levels: Sequence[int] = CONFIG_LEVELS, time_limit: float = 300.0,
                   log: Callable[[str], None] | None = None) -> BoundResult:
    """:meth:`GpuBound.levels` on every seed's workload (the same workloads as :func:`evaluate`).

    Args:
        instance: the pod list's cluster.
        seeds: workload seeds.
        until: arrivals until this fraction of the GPU capacity.
        method: ``"config"`` or ``"aggregate"`` (see :class:`GpuBound`).
        config_levels: levels (%) where the configuration LP runs.
        time_limit: seconds of column generation per level and seed.
        log: progress lines.
    """
    top = int(round(until * 100))
    curves, secs, details = [], [], []
    for s in seeds:
        t0 = time.perf_counter()
        wl = build_workload(instance, int(s), until)
        gb = GpuBound(wl.instance, method=method, config_levels=config_levels, time_limit=time_limit)
        curves.append(gb.levels(wl, top, log=log))
        secs.append(time.perf_counter() - t0)
        details.append(dict(gb.config_results))
    return BoundResult([int(s) for s in seeds], np.array(curves).reshape(len(curves), top + 1), secs,
                       method, details)



# -- training FGD+ ------------------------------------------------------------------------------

_TRAIN: list[Workload] = []
"""The training workloads, set before the worker processes fork (read by :func:`_plus_cost`)."""


def _plus_cost(args: tuple[tuple[float, ...], int, int]) -> float:
    """Unallocated GPU % at ``level`` of FGD+ with ``weights`` on training workload ``i``."""
    weights, i, level = args
    wl = _TRAIN[i]
    run = run_policy(wl, FGDPlus(shapes=wl.dist, weights=list(weights)))  # checked: the check costs
    # nothing measurable next to the replay (about 7 s per openb run either way)
    return float(run.levels("unallocated", level + 1)[level])


def _pack_cost(args: tuple[tuple[float, ...], int, int]) -> float:
    """Unallocated GPU % at ``level`` of FGD-Pack with ``(lam, threshold)`` on training workload ``i``."""
    (lam, thr), i, level = args
    wl = _TRAIN[i]
    assert wl.pod_counts is not None
    shapes = shape_distribution(wl.instance, wl.pod_counts, threshold=thr)
    run = run_policy(wl, FGDPack(lam=lam, threshold=thr, shapes=shapes))
    return float(run.levels("unallocated", level + 1)[level])


def _train_pso(cost: Callable[[tuple[tuple[float, ...], int, int]], float], instance: Instance,
               seeds: Sequence[int], *, until: float, level: int, box: tuple[np.ndarray, np.ndarray],
               init: np.ndarray, settings: Any, workers: int, checkpoint: str | Path | None,
               log: Callable[[str], None] | None) -> tuple[np.ndarray, float, list[dict[str, Any]]]:
    """The PSO loop both trainers share: minimise the mean of ``cost`` over the training workloads.

    ``cost`` (a module-level function, so forked workers can run it) gets ``(position, workload
    index, level)``; every particle sees the same workloads (:data:`_TRAIN`, built here and cleared
    after). ``box`` is the ``(low, high)`` search box and ``init`` particle 0's position, both shape
    ``(dims,)``.

    Returns:
        ``(best position, its cost, history)`` (one record per iteration: best cost, mean cost, best).
    """
    import multiprocessing

    from policies.swarm.optimizer import PSO

    if level + 1 > round(until * 100):
        raise ValueError(f"until={until} stops before level {level} + 1")
    _TRAIN[:] = [build_workload(instance, int(s), until) for s in seeds]
    pool = multiprocessing.get_context("fork").Pool(workers) if workers > 1 else None

    def objective(pos: np.ndarray) -> np.ndarray:
        jobs = [(tuple(float(v) for v in p), i, level) for p in pos for i in range(len(_TRAIN))]
        costs = pool.map(cost, jobs) if pool is not None else [cost(j) for j in jobs]
        return np.array(costs).reshape(len(pos), len(_TRAIN)).mean(axis=1)

    history: list[dict[str, Any]] = []

    def cb(rec: Any) -> None:
        history.append({"iteration": rec.iteration, "best_cost": round(rec.best_cost, 4),
                        "mean_cost": round(rec.mean_cost, 4),
                        "best": [round(v, 4) for v in rec.best_position]})
        if log is not None:
            log(f"iter {rec.iteration}: best {rec.best_cost:.3f} mean {rec.mean_cost:.3f} "
                f"at {[round(v, 3) for v in rec.best_position]}")

    try:
        res = PSO(settings, checkpoint_path=checkpoint, resume=checkpoint is not None).minimize(
            objective, len(init), box, init=init, callback=cb)
    finally:
        if pool is not None:
            pool.close()
            pool.join()
        _TRAIN.clear()
    return np.asarray(res.best_position, dtype=np.float64), float(res.best_cost), history


def train_fgd_plus(instance: Instance, seeds: Sequence[int], *, until: float = 1.01, level: int = 100,
                   particles: int = 8, iters: int = 5, bound: float = 2.0, pso_seed: int = 0,
                   workers: int = 1, checkpoint: str | Path | None = None,
                   log: Callable[[str], None] | None = None
                   ) -> tuple[np.ndarray, float, list[dict[str, Any]]]:
    """Tune FGD+'s weights (:class:`policies.gpu.FGDPlus`) by PSO in this module's protocol.

    The cost of a weight vector is the mean over the training ``seeds`` of the unallocated GPU % at
    ``level`` (arrivals stop at ``until`` x capacity to keep runs short); every particle sees the same
    workloads. Particle 0 starts at ``theta = 0`` (exactly FGD), so the result is never worse than FGD
    on the training seeds. Keep the training seeds disjoint from the reported ones (42..51).

    Args:
        instance: the cluster and pod list.
        seeds: training workload seeds.
        until: arrivals stop here (x capacity); must reach ``level``.
        level: the arrival level (%) whose unallocated GPU is minimised.
        particles: swarm size.
        iters: PSO iterations.
        bound: weights live in ``[-bound, bound]``.
        pso_seed: the optimiser's seed.
        workers: processes (forked) that evaluate runs in parallel.
        checkpoint: PSO checkpoint file (resumed when it exists).
        log: called with one line per iteration.

    Returns:
        ``(weights, cost, history)``: the best weights, shape ``(len(PLUS_FEATURES),)``, their cost,
        and one record per iteration (best cost, mean cost, best weights).
    """
    from policies.gpu import PLUS_FEATURES
    from policies.swarm.optimizer import PSOSettings

    dims = len(PLUS_FEATURES)
    settings = PSOSettings(n_particles=particles, iters=iters, seed=pso_seed, patience=0, init_scale=0.3)
    return _train_pso(_plus_cost, instance, seeds, until=until, level=level,
                      box=(np.full(dims, -bound), np.full(dims, bound)), init=np.zeros(dims),
                      settings=settings, workers=workers, checkpoint=checkpoint, log=log)


def train_fgd_pack(instance: Instance, seeds: Sequence[int], *, until: float = 1.01, level: int = 100,
                   particles: int = 6, iters: int = 4, pso_seed: int = 0, workers: int = 1,
                   log: Callable[[str], None] | None = None
                   ) -> tuple[np.ndarray, float, list[dict[str, Any]]]:
    """Tune FGD-Pack's ``(lam, threshold)`` by PSO in this module's protocol (as :func:`train_fgd_plus`).

    ``lam`` in [0, 1], the shape-distribution threshold in [0.8, 1]; particle 0 starts at (0.4, 0.9).
    The cost is the mean unallocated GPU % at ``level`` over the training ``seeds`` (keep them
    disjoint from the reported 42..51).

    Returns:
        ``(best (lam, threshold), cost, history)``.
    """
    from policies.swarm.optimizer import PSOSettings

    settings = PSOSettings(n_particles=particles, iters=iters, seed=pso_seed, patience=0, init_scale=0.15)
    return _train_pso(_pack_cost, instance, seeds, until=until, level=level,
                      box=(np.array([0.0, 0.8]), np.array([1.0, 1.0])), init=np.array([0.4, 0.9]),
                      settings=settings, workers=workers, checkpoint=None, log=log)


def grid_fgd_plus(instance: Instance, seeds: Sequence[int], candidates: Sequence[Sequence[float]], *,
                  until: float = 1.01, level: int = 100, workers: int = 1
                  ) -> tuple[np.ndarray, float, list[dict[str, Any]]]:
    """Pick FGD+'s weights among ``candidates`` by the cost of :func:`train_fgd_plus` (a short search).

    ``theta = 0`` (exactly FGD) is always among the candidates, so the pick is never worse than FGD on
    the training ``seeds`` (keep them disjoint from the reported seeds 42..51).

    Returns:
        ``(weights, cost, table)``: the best weights, their cost, and every candidate's cost.
    """
    import multiprocessing

    from policies.gpu import PLUS_FEATURES

    if level + 1 > round(until * 100):
        raise ValueError(f"until={until} stops before level {level} + 1")
    cands = [tuple(0.0 for _ in PLUS_FEATURES)] + [tuple(float(v) for v in c) for c in candidates]
    if any(len(c) != len(PLUS_FEATURES) for c in cands):
        raise ValueError(f"every candidate needs {len(PLUS_FEATURES)} weights")
    _TRAIN[:] = [build_workload(instance, int(s), until) for s in seeds]
    jobs = [(c, i, level) for c in cands for i in range(len(_TRAIN))]
    try:
        if workers > 1:
            with multiprocessing.get_context("fork").Pool(workers) as pool:
                costs = pool.map(_plus_cost, jobs)
        else:
            costs = [_plus_cost(j) for j in jobs]
    finally:
        _TRAIN.clear()
    per = np.array(costs).reshape(len(cands), len(seeds))
    mean = per.mean(axis=1)
    best = int(np.argmin(mean))  # ties: the earliest candidate (FGD first)
    table = [{"weights": list(c), "cost": round(float(m), 4), "per_seed": [round(float(x), 4) for x in row]}
             for c, m, row in zip(cands, mean, per, strict=True)]
    return np.array(cands[best]), float(mean[best]), table

__all__ = ["BOUND_CLIQUES", "BOUND_METHODS", "CONFIG_LEVELS", "DEFAULT_POLICIES", "FIT_RESOURCES", "LEVELS",
           "PAPER_CLUSTER", "PAPER_NAMES", "PUBLISHED", "BoundResult", "GpuBound", "PolicyResult", "Run",
           "Workload", "build_workload",
           "evaluate", "evaluate_bound", "gpu_capacity", "is_paper_cluster", "make_policy", "plot_curves",
           "pod_list_name", "pod_sequence", "run_policy", "task_gpu", "train_fgd_pack", "train_fgd_plus",
           "grid_fgd_plus"]
