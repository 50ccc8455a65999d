"""The held-out comparison that ends every training command: the trained policy against a baseline.

Every trainer (``vbp train swarm``, ``gcn``, ``rl`` and the JobFusion trainer) replays its result and a
simple baseline on held-out runs never used in training (arrival orders, streams, job samples) and
reports one :class:`HeldOut`: the mean of each metric for both, and whether the trained policy is
worse. Metrics are compared in priority order (e.g. ``deployed`` first, then ``hosts``): the first
one whose means differ decides, and a tie on every metric is not worse. Metric names are those of
``docs/outputs.md`` (``hosts``, ``deployed``, ``rejected``; ``mean_jct`` for DAG jobs, in seconds).

This module imports neither torch nor any training code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

Sense = Literal["min", "max"]
"""Whether less (``"min"``) or more (``"max"``) of a metric is better."""

Runs = Sequence[float] | np.ndarray
"""One metric's values over the runs, shape ``(runs,)``."""

UNITS = {"hosts": "hosts", "deployed": "deployed", "rejected": "rejected", "mean_jct": "s mean JCT"}
"""How a metric's mean is labelled in the one-line report."""


@dataclass(frozen=True)
class HeldOut:
    """A trained policy and a baseline on the same held-out runs.

    Attributes:
        what: what a run is (``"orders"``, ``"job samples"``).
        n_runs: number of held-out runs.
        policy: the trained policy's name.
        baseline: the baseline's name.
        metrics: ``(name, sense)`` pairs in priority order.
        policy_mean: mean of each metric over the runs for the trained policy.
        baseline_mean: the same for the baseline.
    """

    what: str
    n_runs: int
    policy: str
    baseline: str
    metrics: tuple[tuple[str, Sense], ...]
    policy_mean: Mapping[str, float]
    baseline_mean: Mapping[str, float]

    @classmethod
    def of_runs(cls, what: str, policy: str, baseline: str, metrics: Sequence[tuple[str, Sense]],
                policy_runs: Mapping[str, Runs], baseline_runs: Mapping[str, Runs]
                ) -> HeldOut:
        """From per-run values: ``policy_runs[metric]`` has shape ``(runs,)``, as ``baseline_runs``.

        Raises:
            ValueError: no metric, no run, or runs of different lengths.
        """
        if not metrics:
            raise ValueError("a held-out comparison needs at least one metric")
        lengths = {len(v[m]) for v in (policy_runs, baseline_runs) for m, _ in metrics}
        if len(lengths) != 1 or 0 in lengths:
            raise ValueError(f"held-out runs must be equally many and at least one, got {sorted(lengths)}")
        return cls(what, lengths.pop(), policy, baseline, tuple(metrics),
                   {m: float(np.mean(policy_runs[m])) for m, _ in metrics},
                   {m: float(np.mean(baseline_runs[m])) for m, _ in metrics})

    @property
    def worse(self) -> bool:
        """Whether the trained policy is worse than the baseline (first differing metric decides)."""
        for m, sense in self.metrics:
            a, b = self.policy_mean[m], self.baseline_mean[m]
            if a != b:
                return a > b if sense == "min" else a < b
        return False

    @property
    def deciding(self) -> str:
        """The metric that decides the comparison (the first whose means differ; else the first)."""
        for m, _ in self.metrics:
            if self.policy_mean[m] != self.baseline_mean[m]:
                return m
        return self.metrics[0][0]

    def to_dict(self) -> dict[str, Any]:
        """Plain numbers for JSON output (``held_out`` of the ``vbp train`` reports)."""
        return {"n_runs": self.n_runs, "what": self.what, "policy": self.policy, "baseline": self.baseline,
                "metrics": [m for m, _ in self.metrics],
                "policy_mean": dict(self.policy_mean), "baseline_mean": dict(self.baseline_mean),
                "worse": self.worse}

    def line(self) -> str:
        """One line: ``held-out orders (8): gcn 3.00 hosts, bf 3.12 hosts``."""
        def side(name: str, means: Mapping[str, float]) -> str:
            return name + " " + ", ".join(f"{means[m]:.2f} {UNITS.get(m, m)}" for m, _ in self.metrics)

        return (f"held-out {self.what} ({self.n_runs}): {side(self.policy, self.policy_mean)}; "
                f"{side(self.baseline, self.baseline_mean)}")

    def warning(self, remedy: str) -> str | None:
        """The one-line warning when the trained policy is worse (``None`` otherwise).

        Args:
            remedy: what to do about it (appended after a semicolon).
        """
        if not self.worse:
            return None
        m = self.deciding
        sense = dict(self.metrics)[m]
        more = "more" if sense == "min" else "fewer"
        label = "seconds of mean JCT" if m == "mean_jct" else m
        return (f"warning: on the {self.n_runs} held-out {self.what} the trained policy is worse than "
                f"{self.baseline} ({more} {label}: {self.policy_mean[m]:.2f} against "
                f"{self.baseline_mean[m]:.2f} on average); {remedy}")


__all__ = ["UNITS", "HeldOut", "Runs", "Sense"]
