"""Plots of comparisons and runs (matplotlib with the Agg back-end; imported only when plotting).

The functions only draw what they are given: the numbers come from :mod:`packing.sim.simulator`,
:mod:`packing.feasibility.metrics` and the solvers.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from packing.io.atomic import save_figure

if TYPE_CHECKING:
    from packing.gpu.fgd_paper import PolicyResult


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, path: str | Path, dpi: float | None = 110) -> Path:
    """Write ``fig`` to ``path`` atomically (:func:`packing.io.atomic.write_with`) and close it.

    ``dpi`` ``None`` keeps matplotlib's ``savefig.dpi`` setting.
    """
    out = Path(path)
    try:
        save_figure(fig, out, dpi=dpi)
    finally:
        _pyplot().close(fig)
    return out


def count_axis(ax: Any) -> None:
    """A y axis of counts (hosts): from 0, whole-number ticks only."""
    from matplotlib.ticker import MaxNLocator

    ax.set_ylim(0, None)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))


def plot_compare(path: str | Path, names: Sequence[str], hosts_mean: Sequence[float],
                 hosts_min: Sequence[float], hosts_max: Sequence[float], *,
                 optimum: float | None = None, bound: float | None = None,
                 utilisation: np.ndarray | None = None, resources: Sequence[str] = (),
                 utilisation_title: str = "", title: str = "", proven: bool = True) -> Path:
    """Hosts per policy (mean with min-max whiskers, optimum and bound as lines), and per-host use.

    Args:
        path: output image file (PNG, SVG, PDF by extension).
        names: policy names, length ``n_policies``.
        hosts_mean: mean hosts used per policy, shape ``(n_policies,)``.
        hosts_min: fewest hosts per policy, shape ``(n_policies,)``.
        hosts_max: most hosts per policy, shape ``(n_policies,)``.
        optimum: the solver's best host count (drawn as a line).
        bound: the proven lower bound (drawn as a dashed line).
        proven: whether ``optimum`` is proven optimal (else it is labelled "best found").
        utilisation: per-host utilisation of one run, shape ``(n_used_hosts, n_resources)``; drawn
            as a second panel when given.
        resources: resource names for the legend, length ``n_resources``.
        utilisation_title: title of the second panel.
        title: figure title.

    Returns:
        The path written.
    """
    plt = _pyplot()
    two = utilisation is not None and len(utilisation) > 0
    fig, axes = plt.subplots(1, 2 if two else 1, figsize=(13 if two else 8, 4.8), squeeze=False)
    ax = axes[0, 0]
    x = np.arange(len(names))
    mean = np.asarray(hosts_mean, dtype=float)
    err = np.vstack([mean - np.asarray(hosts_min, float), np.asarray(hosts_max, float) - mean])
    ax.bar(x, mean, yerr=err, capsize=3, color="#4C72B0", label="policy (mean, min-max)")
    if optimum is not None:
        label = f"optimum {optimum:g}" if proven else f"best found {optimum:g}"
        ax.axhline(optimum, color="#C44E52", lw=2, label=label)
    if bound is not None and bound != optimum:
        ax.axhline(bound, color="#55A868", lw=1.5, ls="--", label=f"lower bound {bound:g}")
    ax.set_xticks(x)
    ax.set_xticklabels(names, rotation=45, ha="right")
    ax.set_ylabel("hosts used")
    ax.set_title(title or "hosts per policy")
    count_axis(ax)
    top = max([*np.asarray(hosts_max, float), optimum or 0.0, bound or 0.0, 1.0])
    ax.set_ylim(0, top * 1.3)  # room above the bars for the legend
    ax.legend(loc="upper left", fontsize=8)
    if two:
        assert utilisation is not None
        ax2 = axes[0, 1]
        u = np.asarray(utilisation, dtype=float)
        order = np.argsort(-u.max(axis=1), kind="stable")
        width = 0.8 / u.shape[1]
        for r in range(u.shape[1]):
            label = resources[r] if r < len(resources) else f"r{r}"
            if len(u) <= 60:
                ax2.bar(np.arange(len(u)) + r * width, u[order, r], width=width, label=label)
            else:  # too many hosts for bars: each resource's utilisation, sorted, as a line
                ax2.plot(np.arange(len(u)), np.sort(u[:, r])[::-1], lw=1.2, label=label)
        ax2.axhline(1.0, color="k", lw=0.8)
        from matplotlib.ticker import MaxNLocator

        ax2.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax2.set_xlabel("used hosts (fullest first)" if len(u) <= 60
                       else "used hosts (each resource sorted, fullest first)")
        ax2.set_ylabel("utilisation")
        ax2.set_title(utilisation_title or "per-host utilisation")
        ax2.legend(fontsize=8)
    fig.tight_layout()
    return _save(fig, path)


def plot_trajectory(path: str | Path, time: np.ndarray, hosts_used: np.ndarray,
                    allocation: np.ndarray, resources: Sequence[str] = (), title: str = "",
                    nodes: Sequence[int] | None = None) -> Path:
    """Hosts in use and allocation rate over one simulated run (and the autoscaled pool's nodes).

    Args:
        path: output image file.
        time: decision times, shape ``(n_steps,)``.
        hosts_used: hosts in use after each decision, shape ``(n_steps,)``.
        allocation: allocation per resource over used hosts, shape ``(n_steps, n_resources)``.
        resources: resource names, length ``n_resources``.
        title: figure title.
        nodes: nodes in an autoscaled pool after each decision, shape ``(n_steps,)`` (``None``: a
            fixed pool).

    Returns:
        The path written.
    """
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.2))
    steps = np.arange(len(time))
    ax.step(steps, hosts_used, where="post", color="#4C72B0", label="hosts in use")
    if nodes is not None and len(nodes):
        ax.step(steps, nodes, where="post", color="#8C564B", ls="--", label="nodes in the pool")
    ax.set_xlabel("decision")
    ax.set_ylabel("hosts in use" if nodes is None else "hosts in use, nodes")
    count_axis(ax)
    ax2 = ax.twinx()
    a = np.asarray(allocation, dtype=float).reshape(len(time), -1)
    for r in range(a.shape[1]):
        label = f"allocation {resources[r] if r < len(resources) else r}"
        ax2.plot(steps, a[:, r], lw=1, color=f"C{r + 1}", label=label)
    ax2.set_ylim(0, 1.05)
    ax2.set_ylabel("allocation rate (used hosts)")
    lines = ax.get_legend_handles_labels()
    lines2 = ax2.get_legend_handles_labels()
    ax.legend(lines[0] + lines2[0], lines[1] + lines2[1], loc="lower right", fontsize=8)
    ax.set_title(title)
    fig.tight_layout()
    return _save(fig, path)


def plot_growth(path: str | Path, growth: Sequence[float], values: Sequence[float],
                bounds: Sequence[float], *, cost: bool = False, title: str = "capacity plan") -> Path:
    """Hosts (or cost) of a plan against demand growth, the proven bound as a band up to the plan.

    Args:
        path: output image file.
        growth: demand multipliers, shape ``(n_scenarios,)``.
        values: hosts (or cost) of each scenario's plan, shape ``(n_scenarios,)``.
        bounds: the proven lower bound of each scenario, shape ``(n_scenarios,)``.
        cost: the values are costs (else host counts: whole-number ticks).
        title: figure title.

    Returns:
        The path written.
    """
    plt = _pyplot()
    x, y, lb = list(growth), [float(v) for v in values], [float(b) for b in bounds]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.fill_between(x, lb, y, color="#C44E52", alpha=0.25, label="between proven bound and plan")
    ax.plot(x, y, "o-", color="#4C72B0", label="plan")
    ax.plot(x, lb, "--", color="#C44E52", label="proven lower bound")
    ax.set_xlabel("demand growth (x)")
    ax.set_ylabel("cost" if cost else "hosts")
    if cost:
        ax.set_ylim(0, None)
    else:
        count_axis(ax)
    ax.set_ylim(top=max([*y, 1.0]) * 1.15)
    ax.set_xticks(x)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left")
    ax.set_title(title)
    fig.tight_layout()
    return _save(fig, path)


def plot_unallocated(path: str | Path, results: Sequence[PolicyResult], until: int, title: str = "",
                     bound: np.ndarray | None = None) -> Path:
    """The FGD paper's Fig. 7: unallocated GPU % against arrived demand % (median over seeds).

    Left: the whole run; right: from 80% arrived on, with the published medians as markers.

    Args:
        path: output image file.
        results: one per policy (:func:`policies.fgd_eval.evaluate`).
        until: last arrival level (%).
        title: figure title.
        bound: the offline bound per level (no scheduler can leave less unallocated), shape
            ``(levels,)`` (:meth:`solvers.bounds.gpu_bound.BoundResult.curve`); drawn as a dashed black line.

    Returns:
        The path written.
    """
    from packing.gpu.fgd_paper import LEVELS

    plt = _pyplot()
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
        yb = bound[: until + 1]
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
    return _save(fig, path, dpi=None)


def plot_jct(path: str | Path, names: Sequence[str], jcts: Sequence[Sequence[float]],
             critical_path: float, capacity: float) -> Path:
    """Job completion times of each DAG policy as a CDF, with the mean-JCT bounds as lines.

    Args:
        path: output image file.
        names: policy names, one per curve.
        jcts: each policy's job completion times in seconds, shape ``(n_jobs,)`` each.
        critical_path: the mean critical-path bound (seconds).
        capacity: the mean capacity bound (seconds).

    Returns:
        The path written.
    """
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, jct in zip(names, jcts, strict=True):
        x = np.sort(np.asarray(jct))
        ax.step(x, np.arange(1, len(x) + 1) / len(x), where="post", label=f"{name} ({np.mean(x):.0f} s)")
    ax.axvline(critical_path, color="k", ls="--", lw=1, label="mean critical-path bound")
    ax.axvline(capacity, color="k", ls=":", lw=1, label="mean capacity bound")
    ax.set_xscale("log")
    ax.set_xlabel("job completion time (s)")
    ax.set_ylabel("share of jobs")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return _save(fig, path, dpi=None)


__all__ = ["count_axis", "plot_compare", "plot_growth", "plot_jct", "plot_trajectory", "plot_unallocated"]
