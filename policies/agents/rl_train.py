"""A ``vbp train rl`` run: check the scenarios, train and save (with resume), plot, and compare held out.

:func:`train_run` wraps :func:`policies.agents.rl.train_rl` with what a run around it needs: the
curve continued from a resumed agent file, a checkpoint every 10 episodes for resumable algorithms,
the final agent file and the run's time. :func:`held_out` replays the saved agent file (the policy that
ships, loaded as ``vbp simulate --policy MODEL.pt`` loads it) and Best-Fit on seeded shuffles of every
scenario's arrivals: orders never trained on (training replays each scenario's own order).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packing.env.layout import EnvLayout
from packing.errors import input_error
from packing.model.instance import Instance
from packing.sim.simulator import run_seed, sample_orders, simulate
from policies.agents.heldout import HeldOut, Sense

RL_METRICS: tuple[tuple[str, Sense], ...] = (("deployed", "max"), ("hosts", "min"))
"""The held-out comparison of a multi-cluster agent: tasks deployed first, then hosts in use."""

REMEDY = "train for more episodes, on more scenarios, or keep Best-Fit"
"""What the warning of a worse agent suggests."""


def check_streams(paths: Sequence[str], streams: Sequence[Instance]) -> None:
    """Refuse scenarios an RL agent cannot train on.

    Args:
        paths: the files (named in the errors).
        streams: the loaded scenarios, one per path.

    Raises:
        InputError: not a multi-cluster GPU scenario, no tasks, or clusters that differ from the first
            scenario's.
    """
    for p, s in zip(paths, streams, strict=True):
        if not s.gpu_resources:
            raise input_error(p, "gpu_resources", "not a multi-cluster GPU scenario (make one with "
                              "`vbp generate multicluster`)")
        if not s.n_apps or not s.n_containers:
            raise input_error(p, "apps", "no tasks to place: a training scenario needs apps (make one "
                              "with `vbp generate multicluster`)")
    layouts = [EnvLayout.of(s) for s in streams]
    for p, lay in zip(paths, layouts, strict=True):
        if lay.n_clusters < 2:
            raise input_error(p, "", "not a multi-cluster GPU scenario (make one with `vbp generate "
                              "multicluster`)")
        if (lay.n_clusters, lay.cluster_capacity.shape[1]) != (layouts[0].n_clusters,
                                                               layouts[0].cluster_capacity.shape[1]):
            raise input_error(p, "", f"has {lay.n_clusters} clusters; {paths[0]} has "
                              f"{layouts[0].n_clusters} (all training scenarios need the same clusters)")


def previous_run(out: str | Path, algo: str) -> dict[str, Any] | None:
    """The agent file ``out`` to resume (``--resume``; ``None`` when it does not exist yet).

    Raises:
        InputError: ``algo`` cannot be resumed, or the file holds another algorithm or no progress.
    """
    from policies.agents.rl import RESUMABLE, kind_of

    if algo not in RESUMABLE:
        raise input_error("--resume", algo, f"only {', '.join(RESUMABLE)} runs can be resumed")
    if not Path(out).exists():
        return None
    from policies.agents.files import read_agent_file

    previous = read_agent_file(out)
    if previous.get("kind") != kind_of(algo) or previous.get("algo", algo) != algo:
        raise input_error(str(out), "kind", f"holds a {previous.get('algo', previous.get('kind'))} "
                          f"agent, not {algo}")
    if "episodes" not in previous:
        raise input_error(str(out), "episodes", "no training progress in this file to resume")
    return previous


def check_run(algo: str, streams: Sequence[Instance], overrides: dict[str, Any],
              previous: dict[str, Any] | None, first: str, out: str | Path) -> None:
    """Refuse a resumed file of another shape, or settings whose networks are too large for ``streams``.

    Args:
        algo: the algorithm.
        streams: the scenarios.
        overrides: typed hyper-parameters.
        previous: the agent file resumed (or ``None``).
        first: the first scenario's file (named in the error).
        out: the agent file (named in the error).

    Raises:
        InputError: naming the file or ``--set``.
    """
    from packing.io import escape_control
    from policies.agents.rl import check_size, resume_mismatch

    if previous is not None and (why := resume_mismatch(previous, streams[0])) is not None:
        raise input_error(str(out), "config", f"{why} ({first}); resume on scenarios of the same shape")
    try:
        check_size(algo, streams[0], overrides)
    except ValueError as e:
        raise input_error("--set", escape_control(getattr(e, "field", ""))[:200],
                          getattr(e, "reason", str(e))) from None


@dataclass
class RunResult:
    """A finished ``vbp train rl`` run.

    Attributes:
        agent: the trained agent (saved to ``out``).
        curve: one row per episode (``episode``, ``return``, ``deployed``, ``seconds``...), a resumed
            file's earlier episodes first.
        start: episodes done before this run (a resumed file's).
        seconds: wall time of the run.
        cpu_seconds: CPU time of the run.
    """

    agent: Any
    curve: list[dict[str, Any]]
    start: int
    seconds: float
    cpu_seconds: float


def _plain(row: dict[str, Any]) -> dict[str, Any]:
    """A curve row with plain numbers (an older file's ``placed`` named ``deployed``)."""
    return {("deployed" if k == "placed" else k): (int(v) if k == "episode" else float(v))
            for k, v in row.items()}


def train_run(algo: str, streams: Sequence[Instance], out: str | Path, *, episodes: int, seed: int = 0,
              overrides: dict[str, Any] | None = None, threads: int | None = None,
              previous: dict[str, Any] | None = None, command: str = "",
              log: Callable[[dict[str, Any]], None] | None = None) -> RunResult | None:
    """Train ``algo`` on ``streams`` and save the agent file ``out`` (see the module docstring).

    Args:
        algo: one of :data:`policies.agents.rl.ALGOS`.
        streams: the scenarios (checked with :func:`check_streams`).
        out: the agent file; resumable algorithms also write it every 10 episodes.
        episodes: episodes in all (a resumed file's included).
        seed: the run's seed.
        overrides: typed hyper-parameters (:func:`policies.agents.rl.coerce`).
        threads: torch threads (``None``: leave them).
        previous: the agent file to resume (read with :func:`policies.agents.files.read_agent_file`).
        command: the command line, saved in the file.
        log: receives each new curve row.

    Returns:
        The run, or ``None`` when ``previous`` already has ``episodes`` episodes.

    Raises:
        KeyboardInterrupt: passed on; a resumable run's file then holds the last multiple of 10 episodes.
    """
    from policies.agents.rl import RESUMABLE, train_rl

    curve = [_plain(r) for r in previous.get("curve", [])] if previous else []
    start = int(previous["episodes"]) if previous else 0
    if start >= episodes:
        return None
    Path(out).parent.mkdir(parents=True, exist_ok=True)

    def extra(n: int) -> dict[str, Any]:
        return {"algo": algo, "episodes": n, "seed": seed, "curve": curve, "command": command}

    def record(row: dict[str, Any]) -> None:
        curve.append(_plain(row))
        if log is not None:
            log(curve[-1])

    def save_every(agent: Any, n: int) -> None:
        if n % 10 == 0 and n < episodes:
            agent.save(out, extra(n))

    t0, c0 = time.perf_counter(), time.process_time()
    agent, _ = train_rl(algo, streams, episodes=episodes, seed=seed, overrides=overrides, log=record,
                        resume=previous, checkpoint=save_every if algo in RESUMABLE else None,
                        threads=threads)
    if algo in RESUMABLE:
        agent.save(out, extra(episodes))
    else:
        agent.save(out)
    return RunResult(agent, curve, start, time.perf_counter() - t0, time.process_time() - c0)


def held_out(model: str | Path, streams: Sequence[Instance], *, orders: int = 8, seed: int = 0) -> HeldOut:
    """The saved agent against Best-Fit on ``orders`` seeded shuffles of each scenario's arrivals.

    Shuffle ``i`` of a scenario comes from :func:`packing.sim.simulator.sample_orders` (whole requests,
    the scenario's own order left out) and runs with seed ``run_seed(seed, i)`` for both policies.

    Args:
        model: the agent file.
        streams: the training scenarios.
        orders: shuffles per scenario.
        seed: seed of the shuffles.

    Returns:
        The comparison on ``orders * len(streams)`` runs (:data:`RL_METRICS`).
    """
    from policies.agents.files import load_agent
    from policies.heuristics import BestFit

    agent = load_agent(model)
    name = str(getattr(agent, "name", "agent"))
    runs: dict[str, dict[str, list[float]]] = {"agent": {"deployed": [], "hosts": []},
                                               "bf": {"deployed": [], "hosts": []}}
    for inst in streams:
        for i, order in enumerate(sample_orders(inst, orders, seed=seed, include_own=False)):
            for key, pol in (("agent", agent), ("bf", BestFit())):
                res = simulate(inst, pol, order, seed=run_seed(seed, i), record=False)
                runs[key]["deployed"].append(res.placement.n_placed)
                runs[key]["hosts"].append(res.hosts)
    return HeldOut.of_runs("orders", name, "bf", RL_METRICS, runs["agent"], runs["bf"])


def plot_curve(curve: Sequence[dict[str, Any]], path: str | Path, title: str) -> None:
    """Tasks deployed per training episode (and a moving mean of 10) as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from packing.io.atomic import save_figure

    ep = np.array([r["episode"] for r in curve])
    deployed = np.array([r["deployed"] for r in curve], dtype=float)
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(ep, deployed, lw=0.8, alpha=0.5, label="deployed (episode)")
    k = min(10, len(deployed))
    if k > 1:
        ax.plot(ep[k - 1:], np.convolve(deployed, np.ones(k) / k, mode="valid"), lw=2,
                label=f"mean of {k}")
    ax.set_xlabel("training episode")
    ax.set_ylabel("tasks deployed")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    save_figure(fig, path, dpi=100)
    plt.close(fig)


__all__ = ["REMEDY", "RL_METRICS", "RunResult", "check_run", "check_streams", "held_out", "plot_curve",
           "previous_run", "train_run"]
