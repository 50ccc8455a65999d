"""Training of EADE-M (:mod:`policies.agents.eade_masked`): replay, expert history, the loops.

The optimiser and update step (:class:`DoubleQUpdate`), the dual replay (:class:`MReplay`,
:func:`draw`), the expert's history transitions (:func:`expert_history`), the double-Q training loop
(:func:`train`) and the distillation of the rollout expert (:func:`train_distil`, item 12). Deploying an
agent (:func:`policies.agents.eade_masked.from_checkpoint`) never imports this module.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from packing.env.eade import make_env
from packing.env.layout import EnvLayout
from packing.model.instance import Instance
from policies.agents.eade_masked import (
    CARD_FEATURES,
    EadeMAgent,
    MConfig,
    expert_cluster,
    make_expert,
    make_inner,
)
from policies.base import WAIT, Observation
from policies.card_rollout import (
    OPTIONS,
    RolloutLabeler,
    act_option,
    card_free,
    task_milli,
)
from policies.cluster_heuristics import (
    ClusterCardMix,
    ClusterExpert,
    NodeBestFit,
    free_card_share,
)


class DoubleQUpdate:
    """The learner of an :class:`EadeMAgent`: its Adam optimiser and the double-Q update step.

    Args:
        agent: the agent whose value network (and target) is trained.
    """

    def __init__(self, agent: EadeMAgent) -> None:
        self.agent = agent
        self.opt = torch.optim.Adam(agent.q.parameters(), lr=agent.cfg.lr)

    def __call__(self, cols: dict[str, torch.Tensor], n_expert: int) -> float:
        """One double-Q update (plus the large-margin expert loss on the first ``n_expert`` rows).

        Args:
            cols: the batch from :func:`draw` (``s``, ``a``, ``r``, ``s2``, ``done``, ``m2``, ``e2``;
                first dimension ``batch``).
            n_expert: rows of expert transitions at the front of the batch.

        Returns:
            The loss.
        """
        ag, cfg = self.agent, self.agent.cfg
        q_all = ag.q(cols["s"])
        q = q_all.gather(1, cols["a"][:, None]).squeeze(1)
        with torch.no_grad():
            m2 = cols["m2"]
            q2 = ag.q(cols["s2"]).masked_fill(~m2, -1e9)
            if cfg.residual:
                e2 = cols["e2"]
                bonus = torch.zeros_like(q2).scatter_(1, e2.clamp(min=0)[:, None], cfg.residual_margin)
                q2 = q2 + bonus * (e2 >= 0)[:, None]
            nxt = q2.argmax(1, keepdim=True)
            v2 = ag.q_target(cols["s2"]).gather(1, nxt).squeeze(1)
            v2 = torch.where(m2.any(1), v2, torch.zeros_like(v2))
            target = cols["r"] / cfg.reward_scale + cfg.gamma * (1.0 - cols["done"]) * v2
        loss = nn.functional.smooth_l1_loss(q, target)
        if n_expert and cfg.lambda_expert > 0:
            qe = q_all[:n_expert]
            a_e = cols["a"][:n_expert]
            margin = torch.full_like(qe, cfg.margin).scatter_(1, a_e[:, None], 0.0)
            big = (qe + margin).max(1).values - qe.gather(1, a_e[:, None]).squeeze(1)
            loss = loss + cfg.lambda_expert * big.mean()
        self.opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(ag.q.parameters(), 10.0)
        self.opt.step()
        with torch.no_grad():
            for p, t in zip(ag.q.parameters(), ag.q_target.parameters(), strict=True):
                t.mul_(1.0 - cfg.tau_soft).add_(cfg.tau_soft * p)
        return float(loss.item())


class MReplay:
    """Ring buffer of ``(s, action, r, s', done, feasible actions of s', expert cluster of s')`` (numpy).

    ``e2`` is ``-1`` when unused (no ``residual``).
    """

    def __init__(self, capacity: int, n_state: int, n_clusters: int) -> None:
        self.s = np.zeros((capacity, n_state), dtype=np.float32)
        self.a = np.zeros(capacity, dtype=np.int64)
        self.r = np.zeros(capacity, dtype=np.float32)
        self.s2 = np.zeros((capacity, n_state), dtype=np.float32)
        self.done = np.zeros(capacity, dtype=np.float32)
        self.m2 = np.zeros((capacity, n_clusters), dtype=bool)
        self.e2 = np.full(capacity, -1, dtype=np.int64)
        self.n = 0
        self.i = 0

    def __len__(self) -> int:
        return self.n

    def add(self, s: np.ndarray, a: int, r: float, s2: np.ndarray, done: bool, m2: np.ndarray,
            e2: int = -1) -> None:
        """Store one transition (overwriting the oldest when full)."""
        i = self.i
        self.s[i], self.a[i], self.r[i], self.s2[i], self.done[i], self.m2[i] = s, a, r, s2, float(done), m2
        self.e2[i] = e2
        self.i = (i + 1) % len(self.s)
        self.n = min(self.n + 1, len(self.s))


def draw(history: MReplay, live: MReplay, batch: int, beta: float, rng: np.random.Generator
         ) -> tuple[dict[str, torch.Tensor], int]:
    """``round(beta * batch)`` rows from ``history`` (all when ``live`` is empty), the rest from ``live``.

    Returns:
        Columns ``s (B, S), a (B,), r (B,), s2 (B, S), done (B,), m2 (B, A), e2 (B,)`` with the history rows
        first, and the number of history rows.
    """
    k = batch if not len(live) else (int(round(beta * batch)) if len(history) else 0)
    parts = [(history, rng.integers(history.n, size=k)) if k else (history, np.zeros(0, np.int64)),
             (live, rng.integers(live.n, size=batch - k)) if batch - k else (live, np.zeros(0, np.int64))]
    out = {name: torch.from_numpy(np.concatenate([getattr(b, name)[i] for b, i in parts]))
           for name in ("s", "a", "r", "s2", "done", "m2", "e2")}
    return out, k


def _cluster_mask(env: Any) -> np.ndarray:
    return np.asarray(env.action_mask()[: env.layout.n_clusters], dtype=bool)


def _actions_mask(env: Any, cfg: MConfig | None) -> np.ndarray:
    """Feasible actions ``(A,)``: the cluster mask once per card mode (then WAIT with admission)."""
    m = _cluster_mask(env)
    if cfg is None:
        return m
    out = np.tile(m, cfg.n_modes)
    return np.append(out, bool(m.any())) if cfg.admission else out


def _expert_now(agent: EadeMAgent | None, env: Any, done: bool) -> int:
    """mc-cardmix's cluster for the env's current decision (``-1`` without residual or when done)."""
    if agent is None or done or not agent.cfg.residual:
        return -1
    return agent.expert_choice(env.layout, env.observation(), env.host_mask())


def _bin(env: Any, agent: EadeMAgent, inner: NodeBestFit, act: int) -> Any:
    """The env action of agent action ``act`` (sets ``inner``'s card mode; WAIT for -1 and WAIT)."""
    n = env.layout.n_clusters
    c = n if act < 0 or agent.is_wait(act) else agent.set_mode(inner, act)
    return env.actions.action_of_bin(env.layout, c)


def _state(agent: EadeMAgent | None, env: Any, s: np.ndarray, done: bool) -> np.ndarray:
    """The network input of the env's current decision (``s`` itself without card features)."""
    if agent is None or not agent.cfg.card_features:
        return s
    if done:
        return np.zeros((agent.cfg.n_clusters + 1) * agent.cfg.n_features, dtype=np.float32)
    return agent.observe(env.layout, env.observation(), env.host_mask())


def expert_history(instance: Instance, history: MReplay, miss_penalty: float, *, seed: int = 0,
                   agent: EadeMAgent | None = None) -> int:
    """One episode of the expert into ``history``; returns the tasks it placed.

    Without ``agent``: the paper's expert, ``node-bf`` and the paper's state. With ``agent``: its
    ``expert``, ``inner`` and network input (:meth:`EadeMAgent.observe`).
    """
    cfg = agent.cfg if agent is not None else None
    inner = make_inner(cfg) if cfg else NodeBestFit()
    env = make_env(instance, inner)
    expert = make_expert(cfg) if cfg else ClusterExpert()
    expert.reset(instance, seed)
    s, _ = env.reset(seed=seed)
    s = _state(agent, env, s, False)
    done, info = False, {"deployed": 0}
    while not done:
        obs = env.observation()
        c = expert_cluster(expert, obs, env.host_mask(), env.layout)
        label = c
        if cfg is not None and cfg.mode_action:  # the mode the expert's threshold used
            label += env.layout.n_clusters * int(free_card_share(obs.state) <= cfg.mix_theta)
        s2, r, done, _, info = env.step(env.actions.action_of_bin(env.layout, c))  # type: ignore[attr-defined]
        s2 = _state(agent, env, s2, done)
        history.add(s, label, r - miss_penalty * info["auto_rejected"], s2, done, _actions_mask(env, cfg),
                    _expert_now(agent, env, done))
        s = s2
    return int(info["deployed"])


def evaluate(agent: EadeMAgent, instance: Instance) -> tuple[float, int]:
    """Greedy episode in the env: ``(paper's return, tasks placed)``."""
    inner = make_inner(agent.cfg)
    env = make_env(instance, inner)
    s, info = env.reset(seed=0)
    s = _state(agent, env, s, False)
    total, done = 0.0, False
    while not done:
        act = agent.choose(s, _cluster_mask(env), _expert_now(agent, env, False))
        s, r, done, _, info = env.step(_bin(env, agent, inner, act))
        s = _state(agent, env, s, done)
        total += r
    return total, int(info["deployed"])


def train(streams: Sequence[Instance], *, episodes: int, seed: int = 0, cfg: MConfig | None = None,
          log: Callable[[dict[str, Any]], None] | None = None, agent: EadeMAgent | None = None,
          start_episode: int = 0, checkpoint: Callable[[Any, int], None] | None = None,
          **overrides: Any) -> tuple[EadeMAgent, list[dict[str, Any]]]:
    """Train EADE-M on ``streams`` (one episode per stream, cycling; see the module docstring).

    Args:
        streams: instances with the same clusters (each stream's FIFO order is an episode).
        episodes: training episodes (the total, counting ``start_episode``).
        seed: seeds torch and the run's numpy generator.
        cfg: hyper-parameters (default: :class:`MConfig` sized from ``streams[0]`` with ``overrides``).
        log: receives a dict per episode (``episode``, ``return``, ``deployed``, ``seconds``).
        agent: continue training this agent (resume; buffers restart from the expert history).
        start_episode: the first episode index (resume).
        checkpoint: called as ``checkpoint(agent, episodes done)`` after every episode.
        **overrides: fields of :class:`MConfig` to change (e.g. ``embed=16``).

    Returns:
        The agent and one dict per episode run.
    """
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    lay = EnvLayout.of(streams[0])
    if cfg is None:
        m = int(lay.cluster_capacity.shape[1])
        if overrides.get("card_features"):
            m += CARD_FEATURES
        cfg = MConfig(n_clusters=lay.n_clusters, n_features=m, **overrides)
    if agent is None:
        agent = EadeMAgent(cfg)
    if agent.cfg.distil:
        return train_distil(streams, agent, episodes=episodes, seed=seed, log=log,
                            start_episode=start_episode, checkpoint=checkpoint)
    trained = agent
    cfg = agent.cfg
    update = DoubleQUpdate(agent)
    n_state = (cfg.n_clusters + 1) * cfg.n_features
    n_actions = cfg.n_actions
    history = MReplay(cfg.buffer, n_state, n_actions)
    live = MReplay(cfg.buffer, n_state, n_actions)
    curve: list[dict[str, Any]] = []
    steps = 0
    best: tuple[int, dict[str, Any]] | None = None

    def select(row: dict[str, Any] | None) -> None:
        nonlocal best
        placed = sum(evaluate(trained, inst)[1] for inst in streams)
        if row is not None:
            row["train_deployed"] = placed
        if best is None or placed > best[0]:
            best = (placed, copy.deepcopy(trained.q.state_dict()))

    for i, inst in enumerate(streams):
        expert_history(inst, history, cfg.miss_penalty, seed=seed + i, agent=agent)
    if start_episode == 0 and cfg.select_every > 0 and cfg.residual:
        select(None)  # the zero-initialised residual: mc-cardmix
    if start_episode == 0:
        for _ in range(cfg.pretrain):
            cols, k = draw(history, live, cfg.batch, cfg.beta, rng)
            update(cols, k)
    if cfg.select_every > 0 and start_episode == 0:
        select(None)  # after pretraining
    for ep in range(start_episode, episodes):
        t0 = time.perf_counter()
        eps = cfg.eps_start + (cfg.eps_end - cfg.eps_start) * ep / max(1, episodes - 1)
        inner = make_inner(cfg)
        env = make_env(streams[ep % len(streams)], inner)
        s, _ = env.reset(seed=seed + ep)
        s = _state(agent, env, s, False)
        feasible = _cluster_mask(env)
        expert = _expert_now(agent, env, False)
        total, done, info = 0.0, False, {"deployed": 0}
        while not done:
            if rng.random() < eps and feasible.any():
                act = int(rng.choice(np.flatnonzero(agent.allowed(feasible))))
            else:
                act = agent.choose(s, feasible, expert)
            s2, r, done, _, info = env.step(_bin(env, agent, inner, act))
            s2 = _state(agent, env, s2, done)
            feasible2 = _cluster_mask(env)
            expert2 = _expert_now(agent, env, done)
            if act >= 0:
                live.add(s, act, r - cfg.miss_penalty * info["auto_rejected"], s2, done,
                         agent.allowed(feasible2), expert2)
            s, feasible, expert, total = s2, feasible2, expert2, total + r
            steps += 1
            if steps % cfg.update_every == 0 and len(live) >= cfg.batch:
                cols, k = draw(history, live, cfg.batch, cfg.beta, rng)
                update(cols, k)
        row = {"episode": ep, "return": total, "deployed": int(info["deployed"]),
               "seconds": time.perf_counter() - t0}
        if cfg.select_every > 0 and ((ep + 1) % cfg.select_every == 0 or ep + 1 == episodes):
            select(row)
        _record(row, curve, log, checkpoint, agent, ep)
    return _restore(agent, best), curve


def _record(row: dict[str, Any], curve: list[dict[str, Any]], log: Callable[[dict[str, Any]], None] | None,
            checkpoint: Callable[[EadeMAgent, int], None] | None, agent: EadeMAgent, ep: int) -> None:
    """End of a training episode: the curve, the log line and the checkpoint."""
    curve.append(row)
    if log:
        log(row)
    if checkpoint:
        checkpoint(agent, ep + 1)


def _restore(agent: EadeMAgent, best: tuple[Any, dict[str, Any]] | None, *, sync: bool = False
             ) -> EadeMAgent:
    """Load the selected weights (if any) into the network and its target.

    With ``sync`` the target takes the network's weights even when nothing was selected.
    """
    if best is not None:
        agent.q.load_state_dict(best[1])
    if best is not None or sync:
        agent.q_target.load_state_dict(agent.q.state_dict())
    return agent


def size_table(streams: Sequence[Instance]) -> list[tuple[int, int]]:
    """``(card share in milli, count)`` of the GPU tasks of ``streams`` (the rollouts' size distribution)."""
    counts: dict[int, int] = {}
    for inst in streams:
        for a in np.asarray(inst.container_app):
            m = task_milli(inst, int(a))
            if m > 0:
                counts[m] = counts.get(m, 0) + 1
    return sorted(counts.items())


class _DistilRun:
    """One episode of :func:`train_distil`: acts (expert or agent) and records labelled decisions."""

    def __init__(self, agent: EadeMAgent, labeler: RolloutLabeler, expert_acts: bool) -> None:
        self.agent, self.labeler, self.expert_acts = agent, labeler, expert_acts
        self.name = "distil-run"
        self.rows: list[tuple[np.ndarray, np.ndarray, np.ndarray, float]] = []

    def reset(self, instance: Instance, seed: int | None = None) -> None:
        self.agent.reset(instance, seed)

    def act(self, obs: Observation, mask: np.ndarray) -> int:
        ag = self.agent
        if not mask.any():
            return WAIT
        x, avail = ag.distil_input(ag.layout_for(obs), obs, mask)
        if avail.sum() <= 1:
            return ClusterCardMix.act(ag.expert, obs, mask)
        inst = obs.instance
        values, best = self.labeler.evaluate(card_free(obs.state), task_milli(inst, obs.app),
                                             len(inst.container_app) - obs.step - 1)
        target = np.array([values.get(o, -np.inf) for o in OPTIONS], dtype=np.float32)
        if self.agent.cfg.distil_ties:  # a tie is labelled with the expert's choice (mc-cardmix's option)
            target[OPTIONS.index(best)] += 1e-3
        stake = float(max(values.values()) - min(values.values()))
        self.rows.append((x, avail, target, stake))
        choice = OPTIONS.index(best) if self.expert_acts else ag.option(x, avail)
        return act_option(ag.expert, obs, mask, OPTIONS[choice])

    def choose_cards(self, obs: Observation, host: int) -> tuple[int, ...]:
        return self.agent.expert.choose_cards(obs, host)


def distil_targets(values: torch.Tensor, temp: float) -> torch.Tensor:
    """Cross-entropy targets from rollout values ``(B, 3)`` (``-inf`` = option not available).

    ``temp <= 0``: the index of the best option ``(B,)`` (ties to the lowest index). Otherwise soft
    targets ``softmax(values / temp)`` ``(B, 3)``: options whose rollout values differ by less than
    ``temp`` tasks (within the rollouts' noise) share the probability.
    """
    if temp <= 0:
        return values.argmax(dim=1)
    return torch.softmax(values / temp, dim=1)


def placed_by(agent: Any, instance: Instance, seed: int = 0) -> int:
    """Tasks ``agent`` (any policy) places of the stream (:func:`packing.sim.simulator.simulate`)."""
    from packing.sim.simulator import simulate

    return int(simulate(instance, agent, seed=seed, record=False, compiled=False).placement.n_placed)


def train_distil(streams: Sequence[Instance], agent: EadeMAgent, *, episodes: int, seed: int = 0,
                 log: Callable[[dict[str, Any]], None] | None = None, start_episode: int = 0,
                 checkpoint: Callable[[Any, int], None] | None = None
                 ) -> tuple[EadeMAgent, list[dict[str, Any]]]:
    """Expert iteration for ``distil`` (item 12): DAgger on rollout labels, then selection.

    Episode ``e`` replays training stream ``e mod len(streams)``: during the first pass the rollout
    expert (:class:`policies.card_rollout.RolloutLabeler`, futures drawn from the size distribution of
    ``streams``, :func:`size_table`) acts, afterwards the agent; every decision with more than one
    option is labelled by the expert with each option's rollout value and kept. After each episode
    ``distil_updates`` Adam steps on all labelled decisions so far minimise the cross-entropy
    between the option logits and the expert's best option, each decision weighted by its stake
    (best minus worst rollout value, plus 0.05). After each pass over the streams (and at the end) the
    greedy agent replays every training stream; the weights with the most tasks placed are kept.
    """
    cfg = agent.cfg
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    labeler = RolloutLabeler(size_table(streams), k=cfg.rollout_k, theta=cfg.mix_theta, seed=seed)
    xs: list[np.ndarray] = []
    avs: list[np.ndarray] = []
    tgs: list[np.ndarray] = []
    wts: list[float] = []
    curve: list[dict[str, Any]] = []
    best: tuple[int, dict[str, Any]] | None = None
    n = len(streams)
    expert_eps = n if cfg.distil_expert_episodes < 0 else cfg.distil_expert_episodes
    opt = torch.optim.Adam(agent.q.parameters(), lr=cfg.lr)
    for ep in range(start_episode, episodes):
        t0 = time.perf_counter()
        inst = streams[ep % n]
        labeler.reset(seed * 100_003 + ep)
        run = _DistilRun(agent, labeler, expert_acts=ep < expert_eps)
        placed = placed_by(run, inst, seed=ep)
        for x, av, tg, st in run.rows:
            xs.append(x)
            avs.append(av)
            tgs.append(tg)
            wts.append(st + 0.05)
        x_t = torch.as_tensor(np.stack(xs))
        av_t = torch.as_tensor(np.stack(avs))
        y_t = distil_targets(torch.as_tensor(np.stack(tgs)), cfg.distil_temp)
        w_t = torch.as_tensor(np.array(wts, dtype=np.float32))
        loss_v = 0.0
        for _ in range(cfg.distil_updates):
            idx = torch.as_tensor(rng.integers(len(xs), size=min(cfg.batch, len(xs))))
            logits = agent.q.option_logits(x_t[idx]).masked_fill(~av_t[idx], -1e9)
            ce = nn.functional.cross_entropy(logits, y_t[idx], reduction="none")
            loss = (ce * w_t[idx]).sum() / w_t[idx].sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            loss_v = float(loss.item())
        row: dict[str, Any] = {"episode": ep, "return": float(placed), "deployed": placed, "loss": loss_v,
                               "labels": len(xs), "seconds": time.perf_counter() - t0}
        if (ep + 1) % n == 0 or ep + 1 == episodes:
            total = sum(placed_by(agent, s) for s in streams)
            row["train_deployed"] = total
            if best is None or total > best[0]:
                best = (total, copy.deepcopy(agent.q.state_dict()))
        _record(row, curve, log, checkpoint, agent, ep)
    return _restore(agent, best, sync=True), curve


__all__ = ["DoubleQUpdate", "MReplay", "distil_targets", "draw", "evaluate", "expert_history", "placed_by",
           "size_table", "train", "train_distil"]
