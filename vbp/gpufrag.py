"""The FGD paper's comparison on openb: its policies and published numbers against vbp's replay.

Weng et al., "Beware of Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation Gradient
Descent", USENIX ATC '23, Sec. 6 and Fig. 7. This module runs the paper's six policies (or any
registry policy) on the workloads of :mod:`packing.fgd_protocol` (seeded arrivals resampled to 130%
of the GPU capacity, replayed on the engine with a record after every arrival, read per arrival
level) and sets the results beside the published numbers and the offline bound of
:mod:`solvers.gpu_bound`. FGD+ and FGD-Pack are tuned by :mod:`policies.swarm.gpu_train`.

Published numbers (:data:`PUBLISHED`, from ``packing/data/fgd_paper.json``): the authors' cached
results, 6 policies x 17 pod lists x 10 seeds (``experiments/analysis/expected_results/
analysis_allo_discrete.csv`` of their simulator), as unallocated GPU %: the median over seeds at
90/95/100/130% arrived, and the mean at 100%. They apply only to the paper's cluster
(:data:`PAPER_CLUSTER`, the 1,213 GPU nodes of openb).
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from packing.fgd_protocol import Run, build_workload, run_policy
from packing.model import Instance
from policies.registry import gpu_policy

if TYPE_CHECKING:
    from solvers.gpu_bound import BoundResult

PAPER_NAMES = {"gpu-random": "01-Random", "gpu-dotprod": "02-DotProd", "gpu-clustering": "03-GpuClustering",
               "gpu-packing": "04-GpuPacking", "gpu-bestfit": "05-BestFit", "fgd": "06-FGD"}
"""vbp policy name -> the paper's (simulator's) policy name."""

DEFAULT_POLICIES = tuple(PAPER_NAMES)
"""The six policies of the paper, in its order."""

LEVELS = (90, 95, 100, 130)
"""Arrival levels (% of cluster GPU capacity) the tables report."""


def _published() -> dict[str, dict[str, tuple[float, float, float, float, float]]]:
    doc = json.loads((resources.files("packing") / "data" / "fgd_paper.json").read_text(encoding="utf-8"))
    return {k: {p: tuple(float(x) for x in v) for p, v in d.items()}  # type: ignore[misc]
            for k, d in doc["pod_lists"].items()}


PUBLISHED: dict[str, dict[str, tuple[float, float, float, float, float]]] = _published()
"""Published unallocated GPU % per pod list (``openb_pod_list_<name>``) and paper policy name:
``(median at 90, 95, 100, 130 % arrived, mean at 100 %)`` over the 10 seeds 42..51."""


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
            run = run_policy(wl, gpu_policy(res.name, wl.dist, wl))
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
    from packing.atomic import save_figure

    try:
        save_figure(fig, p)
    finally:
        plt.close(fig)
    return p


__all__ = ["DEFAULT_POLICIES", "LEVELS", "PAPER_CLUSTER", "PAPER_NAMES", "PUBLISHED", "PolicyResult",
           "evaluate", "is_paper_cluster", "plot_curves", "pod_list_name"]
