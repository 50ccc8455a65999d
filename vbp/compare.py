"""The orchestration of ``vbp compare``: solve the instance, replay every policy on the same runs.

This is the application layer: it sits above :mod:`packing`, :mod:`policies` and :mod:`solvers` and is
the only place that combines them (the CLI in :mod:`vbp.cli` only parses options and formats output).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import Any

from packing.model import Instance


@dataclass(frozen=True)
class Row:
    """One policy's line of the table."""

    name: str
    hosts_mean: float
    hosts_min: int
    hosts_max: int
    cost_mean: float
    allocation_rate: float
    rejected_mean: float
    gap: float | None

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of the row."""
        return {"name": self.name, "hosts_mean": self.hosts_mean, "hosts_min": self.hosts_min,
                "hosts_max": self.hosts_max, "cost_mean": self.cost_mean,
                "allocation_rate": _num(self.allocation_rate), "rejected_mean": self.rejected_mean,
                "gap": _num(self.gap)}


def _num(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else round(float(x), 6)


def run_compare(inst: Instance, policy_names: list[str], orders: int, time_limit: float, seed: int,
                quiet: bool = True, snapshots: int = 0, keep: float = 0.9
                ) -> tuple[Any, list[Row], Any]:
    """Solve ``inst`` and evaluate every policy on the same ``orders``.

    With ``snapshots > 0`` (and a snapshot in ``inst``) every policy instead replays the same
    ``snapshots`` resampled snapshots (:func:`packing.simulator.resample_snapshot` with ``keep``).

    Returns:
        ``(solve_result, rows, samples_by_policy)``.
    """
    from tqdm import tqdm

    from packing.metrics import compute_metrics
    from packing.simulator import evaluate, evaluate_snapshots, sample_orders
    from policies.registry import get_policy
    from solvers import solve

    def progress(p: Any) -> None:
        print(f"  [{p.seconds:7.2f}s] {p.method:<7} objective {p.objective}  bound {p.bound}  "
              f"{p.message}", file=sys.stderr)

    if not quiet:
        print(f"solving {inst.name} (auto, up to {time_limit:g} s)...", file=sys.stderr)
    res = solve(inst, "auto", time_limit=time_limit, seed=seed, callback=None if quiet else progress)
    by_cost = res.objective_kind == "cost"
    resample = snapshots > 0 and inst.initial is not None
    runs = snapshots if resample else orders
    ords = [] if resample else sample_orders(inst, orders, seed)
    rows: list[Row] = []
    samples: dict[str, Any] = {}
    with tqdm(total=len(policy_names) * runs, desc="simulating", unit="run", file=sys.stderr,
              disable=quiet, leave=False) as bar:
        for name in policy_names:
            if resample:
                s = evaluate_snapshots(get_policy(name), inst, snapshots, keep=keep, seed=seed,
                                       progress=bar.update)
            else:
                s = evaluate(get_policy(name), inst, ords, seed=seed, progress=bar.update)
            samples[name] = s
            alloc = [compute_metrics(inst, r.placement).sigma_allocation_bottleneck for r in s.results]
            cost = sum(r.cost for r in s.results) / runs
            value = cost if by_cost else s.mean
            gap = None
            if res.objective is not None and res.objective > 0 and res.objective_kind != "deployed":
                gap = (value - res.objective) / res.objective
            rows.append(Row(s.policy, s.mean, s.min, s.max, cost, float(sum(alloc) / len(alloc)),
                            float(s.rejected.mean()), gap))
    return res, rows, samples



__all__ = ["Row", "run_compare"]
