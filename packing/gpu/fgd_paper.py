"""The FGD paper's published numbers on openb, and the per-policy results set beside them.

Weng et al., "Beware of Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation Gradient
Descent", USENIX ATC '23, Sec. 6 and Fig. 7. The workloads and their replay are
:mod:`packing.gpu.fgd_protocol`; running the paper's six policies on them is
:func:`policies.fgd_eval.evaluate`; the offline bound of the same workloads is
:mod:`solvers.bounds.gpu_bound`.

Published numbers (:data:`PUBLISHED`, from ``packing/data/fgd_paper.json``): the authors' cached
results, 6 policies x 17 pod lists x 10 seeds (``experiments/analysis/expected_results/
analysis_allo_discrete.csv`` of their simulator), as unallocated GPU %: the median over seeds at
90/95/100/130% arrived, and the mean at 100%. They apply only to the paper's cluster
(:data:`PAPER_CLUSTER`, the 1,213 GPU nodes of openb).
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from packing.gpu.fgd_protocol import Run
from packing.model.instance import Instance

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

PAPER_CLUSTER = (1213, 6212)
"""GPU nodes and GPUs of the paper's cluster (openb_node_list_gpu_node.csv)."""


def is_paper_cluster(instance: Instance) -> bool:
    """Whether the instance's cluster is the paper's (so its published numbers apply)."""
    return (instance.n_hosts, int(instance.host_gpus.sum())) == PAPER_CLUSTER


def pod_list_name(instance: Instance) -> str:
    """The pod list's short name (``default`` for ``openb_pod_list_default.csv``)."""
    pods = str(instance.meta.get("pods", instance.name))
    return Path(pods).stem.removeprefix("openb_pod_list_").removeprefix("openb-")


def published_for(instance: Instance) -> dict[str, tuple[float, float, float, float, float]]:
    """The published numbers by paper policy name for ``instance`` (empty off the paper's cluster)."""
    return PUBLISHED.get(pod_list_name(instance), {}) if is_paper_cluster(instance) else {}


def _round2(x: float) -> float | None:
    return None if not math.isfinite(x) else round(float(x), 2)


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

    def summary(self, until: int, name: str | None = None) -> dict[str, Any]:
        """The policy's row of ``vbp gpu-frag --json`` at :data:`LEVELS` (percent, 2 decimals).

        Args:
            until: the last arrival level of the runs (%).
            name: the row's name (default: the policy's).
        """
        pub = self.published
        return {
            "name": self.name if name is None else name,
            "paper_name": PAPER_NAMES.get(self.name),
            "unallocated_gpu_pct": self.at(LEVELS, until),
            "unallocated_gpu_pct_mean": self.at(LEVELS, until, stat="mean"),
            "frag_gpu_pct": self.at(LEVELS, until, what="frag"),
            "frag_rate_pct": self.at(LEVELS, until, what="frag_rate"),
            "per_seed_unallocated_100": [None if until < 100 else _round2(r.levels("unallocated", until)[100])
                                         for r in self.runs],
            "published": None if pub is None else {
                "median": {str(lv): pub[i] for i, lv in enumerate(LEVELS)}, "mean_100": pub[4]},
            "seconds_per_seed": round(self.seconds, 3),
            "deployed_mean": sum(r.placed for r in self.runs) / len(self.runs),
            "rejected_mean": sum(r.rejected for r in self.runs) / len(self.runs),
        }


__all__ = ["DEFAULT_POLICIES", "LEVELS", "PAPER_CLUSTER", "PAPER_NAMES", "PUBLISHED", "PolicyResult",
           "is_paper_cluster", "pod_list_name", "published_for"]
