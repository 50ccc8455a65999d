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

from packing.model.instance import Instance

ALGOS = ("eade-m", "eade", "ddpg", "td3", "sac", "ppo")
"""Names accepted by :func:`train_rl`."""

RESUMABLE = ("eade-m", "eade", "ddpg")
"""Algorithms whose agent file can be trained further (``resume``)."""


def sb3_specs(algo: str) -> dict[str, Any]:
    """The Stable-Baselines3 options ``--set`` may change for ``algo``, with their allowed ranges."""
    from policies.agents.checks import Flag, Num, Spec

    big = 10**9
    specs: dict[str, Spec] = {
        "learning_rate": Num(0.0, 1.0, lo_open=True), "gamma": Num(0.0, 1.0),
        "batch_size": Num(1, 8192, integer=True), "stats_window_size": Num(1, 10**6, integer=True),
    }
    if algo in ("td3", "sac"):
        specs.update({
            "buffer_size": Num(1, 1_000_000, integer=True), "learning_starts": Num(0, big, integer=True),
            "tau": Num(0.0, 1.0), "train_freq": Num(1, 10**6, integer=True),
            "gradient_steps": Num(-1, 10_000, integer=True), "n_steps": Num(1, 1000, integer=True),
            "optimize_memory_usage": Flag()})
    if algo == "td3":
        specs.update({"policy_delay": Num(1, 10_000, integer=True), "target_policy_noise": Num(0.0, 10.0),
                      "target_noise_clip": Num(0.0, 10.0)})
    if algo == "sac":
        specs.update({"ent_coef": Num(0.0, 1e3), "target_update_interval": Num(1, 10**6, integer=True),
                      "use_sde": Flag(), "sde_sample_freq": Num(-1, 10**6, integer=True),
                      "use_sde_at_warmup": Flag()})
    if algo == "ppo":
        specs.update({
            "n_steps": Num(2, 10**6, integer=True), "n_epochs": Num(1, 10_000, integer=True),
            "gae_lambda": Num(0.0, 1.0), "clip_range": Num(0.0, 10.0, lo_open=True),
            "clip_range_vf": Num(0.0, 10.0, lo_open=True), "normalize_advantage": Flag(),
            "ent_coef": Num(0.0, 1e3), "vf_coef": Num(0.0, 1e3), "max_grad_norm": Num(0.0, 1e6, lo_open=True),
            "use_sde": Flag(), "sde_sample_freq": Num(-1, 10**6, integer=True),
            "target_kl": Num(0.0, 1e3, lo_open=True)})
    return specs


def coerce(algo: str, overrides: dict[str, str]) -> dict[str, Any]:
    """Hyper-parameter overrides ``NAME -> text`` as checked, typed values of the algorithm's config.

    Every value is checked against the same ranges as an agent file's config
    (:func:`policies.agents.eade.config_specs`, :func:`policies.agents.eade_masked.config_specs`;
    :func:`sb3_specs` for Stable-Baselines3), so ``nan``, ``inf``, negative, zero and absurd values
    are refused before anything runs.

    Raises:
        FileFieldError: (a ``ValueError``) an unknown name, a value of the wrong type or out of
            range, or a combination of options that does not go together; ``field`` is the
            setting, ``reason`` gives the allowed range.
    """
    from policies.agents.checks import FileFieldError, parse_setting

    if algo in ("td3", "sac", "ppo"):
        specs = sb3_specs(algo)
        aliases = {"batch": "batch_size", "lr": "learning_rate"}
    elif algo == "eade-m":
        from policies.agents.eade_masked import config_specs as m_specs

        specs, aliases = m_specs(), {}
    else:
        from policies.agents.eade import config_specs as e_specs

        specs, aliases = e_specs(), {}
    specs = {k: v for k, v in specs.items() if k not in ("n_clusters", "n_features")}
    out: dict[str, Any] = {}
    for k, v in overrides.items():
        k = aliases.get(k, k)
        if k not in specs:
            raise FileFieldError(k, f"unknown {algo} hyper-parameter; known: {', '.join(sorted(specs))}")
        try:
            out[k] = parse_setting(k, v, specs[k])
        except FileFieldError as e:
            raise FileFieldError(f"{k}={v}", e.reason) from None
    try:
        if algo == "eade-m":
            from policies.agents.eade_masked import MConfig, check_config

            check_config(out, "--set")
            MConfig(n_clusters=2, n_features=8, **out).validate()
        elif algo in ("eade", "ddpg"):
            from policies.agents.eade import check_config as e_check

            e_check(out, "--set")
    except FileFieldError as e:
        raise FileFieldError(e.field.removeprefix("--set."), e.reason) from None
    except ValueError as e:  # MConfig.validate: an option combination
        raise FileFieldError(",".join(f"{k}={v}" for k, v in overrides.items()), str(e)) from None
    return out


def resume_mismatch(resume: dict[str, Any], instance: Instance) -> str | None:
    """Why the agent file ``resume`` cannot train on ``instance`` (``None``: it can).

    The saved networks read a fixed number of clusters and metric resources per cluster.
    """
    from packing.env.layout import EnvLayout

    cfg = resume["config"]
    lay = EnvLayout.of(instance)
    m = int(lay.cluster_capacity.shape[1])
    if resume["kind"] == "eade-m" and cfg.get("card_features"):
        from policies.agents.eade_masked import CARD_FEATURES

        m += CARD_FEATURES
    if (cfg["n_clusters"], cfg["n_features"]) == (lay.n_clusters, m):
        return None
    return (f"the saved agent has {cfg['n_clusters']} clusters of {cfg['n_features']} features; "
            f"the scenario has {lay.n_clusters} clusters of {m}")


def check_size(algo: str, instance: Instance, overrides: dict[str, Any]) -> None:
    """Refuse overrides whose networks for ``instance``'s clusters exceed the agent-file limit.

    The networks are built on torch's meta device (nothing allocated); a trained agent must be
    loadable again (:data:`policies.agents.checks.MAX_PARAMS`).

    Raises:
        FileFieldError: naming the settings and the parameter count.
    """
    from packing.env.layout import EnvLayout
    from policies.agents.checks import FileFieldError, meta_shapes

    if algo not in RESUMABLE:
        return
    lay = EnvLayout.of(instance)
    m = int(lay.cluster_capacity.shape[1])
    try:
        if algo == "eade-m":
            from policies.agents.eade_masked import CARD_FEATURES, ClusterQ, MConfig

            m += CARD_FEATURES if overrides.get("card_features") else 0
            cfg_m = MConfig(n_clusters=lay.n_clusters, n_features=m, **overrides)
            meta_shapes(lambda: ClusterQ(cfg_m))
        else:
            from policies.agents.eade import Actor, Config, Critic

            extra = {"attention": False, "beta": 0.0} if algo == "ddpg" else {}
            cfg = Config(n_clusters=lay.n_clusters, n_features=m, **{**extra, **overrides})
            meta_shapes(lambda: Actor(cfg))
            meta_shapes(lambda: Critic(cfg))
    except FileFieldError as e:
        given = ",".join(f"{k}={','.join(map(str, v)) if isinstance(v, tuple) else v}"
                         for k, v in overrides.items()) or algo
        size = e.reason.removeprefix("describes ")
        raise FileFieldError(given, f"with {lay.n_clusters} clusters the settings give {size}") from None


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
        log: receives a dict per episode (``episode``, ``return``, ``deployed``, ``seconds``).
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
        from policies.agents import eade_masked, eade_masked_train

        agent = eade_masked.from_checkpoint(resume) if resume else None
        start = int(resume["episodes"]) if resume else 0
        return eade_masked_train.train(streams, episodes=episodes, seed=seed, log=log, agent=agent,
                                       start_episode=start, checkpoint=checkpoint, **overrides)
    if algo in ("eade", "ddpg"):
        from policies.agents import eade, eade_train

        if algo == "ddpg":
            overrides = {"attention": False, "beta": 0.0, **overrides}
        agent_e = eade.from_checkpoint(resume) if resume else None
        start = int(resume["episodes"]) if resume else 0
        return eade_train.train(streams, episodes=episodes, seed=seed, log=log, agent=agent_e,
                                start_episode=start, checkpoint=checkpoint, **overrides)
    from policies.agents import sb3_train

    return sb3_train.train(algo, streams, episodes=episodes, seed=seed, log=log, **overrides)


def kind_of(algo: str) -> str:
    """The agent-file kind ``algo`` writes."""
    return {"eade-m": "eade-m", "eade": "eade", "ddpg": "eade"}.get(algo, f"sb3-{algo}")


__all__ = ["ALGOS", "RESUMABLE", "coerce", "kind_of", "train_rl"]
