"""One entry point to train every multi-cluster RL agent: :func:`train_rl` (used by ``vbp train rl``).

Algorithms (:data:`ALGOS`):

* ``eade`` — the paper's EADE-DDPG (:mod:`policies.agents.eade`, scalar action, attention, dual replay);
* ``eade-m`` — EADE-M, the improvement (:mod:`policies.agents.eade_masked`: per-cluster values, masked
  argmax, expert margin loss and pretraining, lost-task penalty);
* ``ddpg`` — EADE-DDPG without attention and without the history buffer (``attention=False, beta=0``);
* ``td3``, ``sac``, ``ppo`` — Stable-Baselines3 on the same env (:mod:`policies.agents.sb3`).

Every trained agent has ``save(path)`` (an agent file, :mod:`policies.agents.files`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from packing.model import Instance

ALGOS = ("eade-m", "eade", "ddpg", "td3", "sac", "ppo")
"""Names accepted by :func:`train_rl`."""

RESUMABLE = ("eade-m", "eade", "ddpg")
"""Algorithms whose agent file can be trained further (``resume``)."""


def coerce(algo: str, overrides: dict[str, str]) -> dict[str, Any]:
    """Hyper-parameter overrides ``NAME -> text`` as typed values of the algorithm's config.

    Raises:
        ValueError: an unknown name or a value of the wrong type.
    """
    if algo in ("td3", "sac", "ppo"):
        import inspect

        from policies.agents.sb3 import model_class

        known = set(inspect.signature(model_class(algo)).parameters) - {"policy", "env"}
        out: dict[str, Any] = {}
        for k, v in overrides.items():
            k = {"batch": "batch_size", "lr": "learning_rate"}.get(k, k)
            if k not in known:
                raise ValueError(f"unknown {algo} option {k!r}; known: {', '.join(sorted(known))}")
            try:
                out[k] = int(v)
            except ValueError:
                try:
                    out[k] = float(v)
                except ValueError:
                    raise ValueError(f"{k}={v!r}: SB3 options take numbers here") from None
        return out
    import dataclasses

    if algo == "eade-m":
        from policies.agents.eade_masked import MConfig as cfg_cls
    else:
        from policies.agents.eade import Config as cfg_cls  # type: ignore[assignment]
    fields = {f.name: f for f in dataclasses.fields(cfg_cls) if f.name not in ("n_clusters", "n_features")}
    out = {}
    for k, v in overrides.items():
        if k not in fields:
            raise ValueError(f"unknown hyper-parameter {k!r}; known: {', '.join(sorted(fields))}")
        default = getattr(cfg_cls, k, None)
        try:
            if isinstance(default, bool):
                if v.lower() not in ("true", "false", "1", "0"):
                    raise ValueError
                out[k] = v.lower() in ("true", "1")
            elif isinstance(default, int):
                out[k] = int(v)
            elif isinstance(default, float):
                out[k] = float(v)
            else:  # hidden sizes
                out[k] = tuple(int(x) for x in v.split(","))
        except ValueError:
            raise ValueError(f"{k}={v!r}: not a valid value") from None
    return out


def train_rl(algo: str, streams: Sequence[Instance], *, episodes: int, seed: int = 0,
             overrides: dict[str, Any] | None = None, log: Callable[[dict[str, Any]], None] | None = None,
             resume: dict[str, Any] | None = None, checkpoint: Callable[[Any, int], None] | None = None,
             threads: int | None = None) -> tuple[Any, list[dict[str, Any]]]:
    """Train ``algo`` on ``streams`` for ``episodes`` episodes (see the module docstring).

    Args:
        algo: one of :data:`ALGOS`.
        streams: training instances with the same clusters (one episode each, cycling).
        episodes: total episodes.
        seed: the run's seed.
        overrides: typed hyper-parameters (:func:`coerce`).
        log: receives a dict per episode (``episode``, ``return``, ``placed``, ``seconds``).
        resume: a loaded agent file of the same algorithm with its ``"episodes"`` done (for
            :data:`RESUMABLE` algorithms); training continues from there (the live replay buffer
            and the generators start afresh, so the result differs from an uninterrupted run).
        checkpoint: for :data:`RESUMABLE` algorithms, called as ``checkpoint(agent, episodes done)``
            after every episode.
        threads: ``torch.set_num_threads`` for the run (``None``: leave it).

    Returns:
        The trained agent (with ``save``) and one dict per episode run in this call.
    """
    overrides = dict(overrides or {})
    if algo not in ALGOS:
        raise ValueError(f"unknown algorithm {algo!r}; known: {', '.join(ALGOS)}")
    if threads is not None:
        import torch

        torch.set_num_threads(threads)
    if algo == "eade-m":
        from policies.agents import eade_masked

        agent = eade_masked.from_checkpoint(resume) if resume else None
        start = int(resume["episodes"]) if resume else 0
        return eade_masked.train(streams, episodes=episodes, seed=seed, log=log, agent=agent,
                                 start_episode=start, checkpoint=checkpoint, **overrides)
    if algo in ("eade", "ddpg"):
        from policies.agents import eade

        if algo == "ddpg":
            overrides = {"attention": False, "beta": 0.0, **overrides}
        agent_e = eade.from_checkpoint(resume) if resume else None
        start = int(resume["episodes"]) if resume else 0
        return eade.train(streams, episodes=episodes, seed=seed, log=log, agent=agent_e,
                          start_episode=start, checkpoint=checkpoint, **overrides)
    from policies.agents import sb3

    return sb3.train(algo, streams, episodes=episodes, seed=seed, log=log, **overrides)


def kind_of(algo: str) -> str:
    """The agent-file kind ``algo`` writes."""
    return {"eade-m": "eade-m", "eade": "eade", "ddpg": "eade"}.get(algo, f"sb3-{algo}")


__all__ = ["ALGOS", "RESUMABLE", "coerce", "kind_of", "train_rl"]
