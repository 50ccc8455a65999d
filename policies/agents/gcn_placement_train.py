"""Training of the GCN placement agent (:mod:`policies.agents.gcn_placement`): REINFORCE, DAgger, plots.

Batched rollouts in lock step, the REINFORCE update with a time-based baseline, training orders
disjoint from the evaluation orders, :func:`imitate` (DAgger against a teacher) and the learning
curve plot. Deploying an agent (:func:`policies.agents.gcn_placement.from_checkpoint`) never
imports this module.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from packing.errors import input_error
from packing.model.instance import Instance
from packing.sim.engine import Engine
from packing.sim.simulator import Step, drive, sample_orders
from policies.agents.gcn import Graph, collate
from policies.agents.gcn_placement import (
    KIND,
    Config,
    Featurizer,
    GcnPlacementPolicy,
    PlacementNet,
    masked_log_softmax,
    to_graph,
    transfer_linear,
)
from policies.agents.heldout import HeldOut, Sense
from policies.base import Observation


# ---------------------------------------------------------------------------------------------
@dataclasses.dataclass
class Batch:
    """One iteration's lock-step episodes: every decision's graph, mask, action and return-to-go."""

    graphs: list[Graph]
    masks: list[np.ndarray]
    actions: list[int]
    advantages: np.ndarray
    costs: np.ndarray  # final cost per episode, shape (batch,)


def _seed(seed: int, *keys: int) -> int:
    return int(np.random.SeedSequence([seed, *keys]).generate_state(1)[0])


def rollout(net: PlacementNet, instance: Instance, order: np.ndarray, batch: int, gen: torch.Generator,
            penalty: float, feat: Featurizer | None = None, greedy: bool = False) -> Batch:
    """Play ``batch`` episodes of ``order`` in lock step, sampling hosts from the masked softmax.

    Returns:
        The :class:`Batch` (advantages: return-to-go minus the per-step batch mean, divided by their
        standard deviation).
    """
    feat = feat or Featurizer(instance)
    engines = [Engine(instance, record=False) for _ in range(batch)]
    counts = [feat.initial_counts() for _ in range(batch)]
    for e in engines:
        e.reset(order)
    steps: list[list[tuple[int, float]]] = [[] for _ in range(batch)]  # (index into lists, cost before)
    graphs: list[Graph] = []
    masks: list[np.ndarray] = []
    actions: list[int] = []
    seen: dict[int, tuple[Graph, float]] = {}  # per live episode: its graph and cost at the decision

    def cost(e: Engine) -> float:
        return e.hosts_used + penalty * len(e.rejected)

    def decide(live: list[int], obs: list[Observation], ms: list[np.ndarray]) -> list[tuple[int, None]]:
        gs = [to_graph(feat.graph(o, m, counts[i])) for i, o, m in zip(live, obs, ms, strict=True)]
        for i, g in zip(live, gs, strict=True):
            seen[i] = (g, cost(engines[i]))
        u, _ = collate(gs)
        with torch.no_grad():
            logp = masked_log_softmax(net(u, feat.n_apps, feat.n_hosts), torch.from_numpy(np.stack(ms)))
            if greedy:
                pick = logp.argmax(dim=1)
            else:
                pick = torch.multinomial(logp.exp(), 1, generator=gen).squeeze(1)
        return [(int(h), None) for h in pick]

    def record(step: Step) -> None:
        i, h = step.episode, step.action
        g, before = seen[i]
        steps[i].append((len(actions), before))
        graphs.append(g)
        masks.append(step.mask)
        actions.append(h)
        counts[i][h, step.decision.app] += 1

    drive(engines, decide, record)
    final = np.array([cost(e) for e in engines])
    ret = np.zeros(len(actions))
    t_of = np.zeros(len(actions), dtype=np.int64)
    for i in range(batch):
        for t, (k, before) in enumerate(steps[i]):
            ret[k] = -(final[i] - before)
            t_of[k] = t
    adv = ret.copy()
    for t in np.unique(t_of):
        sel = t_of == t
        adv[sel] -= ret[sel].mean()
    sd = adv.std()
    adv = adv / sd if sd > 1e-8 else adv * 0.0
    return Batch(graphs, masks, actions, adv, final)


def update(net: PlacementNet, opt: torch.optim.Optimizer, b: Batch, n_apps: int, n_hosts: int,
           entropy_coef: float, chunk: int = 512) -> float:
    """One REINFORCE step on ``b`` (gradients accumulated over chunks of decisions); returns the loss."""
    opt.zero_grad()
    n = len(b.actions)
    total = 0.0
    for lo in range(0, n, chunk):
        hi = min(n, lo + chunk)
        u, _ = collate(b.graphs[lo:hi])
        mask = torch.from_numpy(np.stack(b.masks[lo:hi]))
        logp = masked_log_softmax(net(u, n_apps, n_hosts), mask)
        act = torch.tensor(b.actions[lo:hi])
        chosen = logp.gather(1, act[:, None]).squeeze(1)
        safe = logp.masked_fill(~mask, 0.0)  # no 0 * -inf (its gradient is NaN)
        ent = -(safe.exp() * safe).masked_fill(~mask, 0.0).sum(1)
        adv = torch.from_numpy(b.advantages[lo:hi]).float()
        loss = (-(adv * chosen).sum() - entropy_coef * ent.sum()) / n
        loss.backward()
        total += float(loss.detach())
    nn.utils.clip_grad_norm_(net.parameters(), 1.0)
    opt.step()
    return total


def training_orders(instance: Instance, k: int, seed: int, avoid: Sequence[np.ndarray] = ()
                    ) -> list[np.ndarray]:
    """``k`` shuffled orders from their own seed stream: never the own order nor one of ``avoid``.

    ``avoid`` holds e.g. the evaluation orders.

    An instance with few requests has few distinct orders: when fewer than ``k`` new ones turn up in
    20 rounds of draws, the ones found repeat; when none does, the orders are drawn without the
    ``avoid`` rule (then training sees evaluation orders: too small an instance to hold any out).
    """
    found: list[np.ndarray] = []
    taken = {tuple(int(v) for v in a) for a in avoid}
    s = _seed(seed, 7919)
    for _ in range(20):
        for o in sample_orders(instance, 4 * k + 1, seed=s, include_own=False):
            key = tuple(int(v) for v in o)
            if key not in taken and len(found) < k:
                taken.add(key)
                found.append(o)
        if len(found) >= k:
            break
        s += 1
    if not found:
        return sample_orders(instance, k + 1, seed=s)[1:]
    return [found[i % len(found)] for i in range(k)]


def imitate(net: PlacementNet, opt: torch.optim.Optimizer, instances: Sequence[Instance],
            feats: Sequence[Featurizer], pools: Sequence[Sequence[np.ndarray]], teacher: Any, *,
            episodes: int, epochs: int, seed: int, rounds: int = 3, explore: float = 0.1,
            chunk: int = 256) -> float:
    """Warm start by DAgger: fit the policy to a teacher's choices (cross-entropy, masked softmax).

    Round 0 plays ``episodes`` episodes on training orders with the teacher (any
    :class:`packing.sim.policy.Policy`); each later round plays them with the policy fitted so far
    (its argmax), so that the states include the ones the policy itself reaches. In every round a
    decision is, with probability ``explore``, a uniformly random feasible host instead. Every visited
    decision is labelled with the teacher's host; after each round the policy is fitted on all the
    labels so far (``epochs`` passes of Adam in chunks).

    Returns:
        The share of labelled decisions where the fitted policy's argmax equals the teacher's host.
    """
    rng = np.random.default_rng(_seed(seed, 3))
    graphs: list[Graph] = []
    masks: list[np.ndarray] = []
    labels: list[int] = []
    shape = {(f.n_apps, f.n_hosts) for f in feats}
    if len(shape) > 1:
        raise ValueError("imitation needs instances of one size (apps and hosts)")
    n_a, n_h = next(iter(shape))

    def fit() -> None:
        y = torch.tensor(labels)
        for _ in range(epochs):
            perm = rng.permutation(len(labels))
            for lo in range(0, len(perm), chunk):
                idx = perm[lo:lo + chunk]
                u, _ = collate([graphs[i] for i in idx])
                m = torch.from_numpy(np.stack([masks[i] for i in idx]))
                loss = -masked_log_softmax(net(u, n_a, n_h), m).gather(1, y[idx][:, None]).mean()
                opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(net.parameters(), 1.0)
                opt.step()

    for r in range(rounds):
        for ep in range(episodes):
            j = ep % len(instances)
            inst, feat = instances[j], feats[j]
            order = pools[j][int(rng.integers(len(pools[j])))]
            teacher.reset(inst, _seed(seed, 4, r, ep))
            eng = Engine(inst, record=False)
            eng.reset(order)
            counts = feat.initial_counts()
            labelled: list[tuple[Graph, int]] = []  # the current decision's graph and label

            def decide(live: list[int], obs: list[Observation], ms: list[np.ndarray],
                       feat: Featurizer = feat, counts: np.ndarray = counts, r: int = r,
                       labelled: list[tuple[Graph, int]] = labelled) -> list[tuple[int, None]]:
                o, m = obs[0], ms[0]
                labelled.clear()
                best = int(teacher.act(o, m))
                if best < 0:
                    return [(best, None)]
                g = to_graph(feat.graph(o, m, counts))
                labelled.append((g, best))
                if rng.random() < explore:
                    h = int(rng.choice(np.flatnonzero(m)))
                elif r == 0:
                    h = best
                else:
                    with torch.no_grad():
                        lg = net(g, n_a, n_h)[0].numpy()
                    h = int(np.argmax(np.where(m, lg, -np.inf)))
                return [(h, None)]

            def record(step: Step, counts: np.ndarray = counts,
                       labelled: list[tuple[Graph, int]] = labelled) -> None:
                for g, best in labelled:
                    graphs.append(g)
                    masks.append(step.mask)
                    labels.append(best)
                    counts[step.action, step.observation.app] += 1

            drive([eng], decide, record)
        if labels:
            fit()
    if not labels:
        return 1.0
    hits = 0
    y = torch.tensor(labels)
    with torch.no_grad():
        for lo in range(0, len(labels), chunk):
            u, _ = collate(graphs[lo:lo + chunk])
            mt = torch.from_numpy(np.stack(masks[lo:lo + chunk]))
            hits += int((masked_log_softmax(net(u, n_a, n_h), mt).argmax(1) == y[lo:lo + chunk]).sum())
    return hits / len(labels)


@dataclasses.dataclass
class TrainResult:
    """What :func:`train` returns: the policy and its training curve."""

    policy: GcnPlacementPolicy
    curve: list[float]  # mean hosts (cost) per iteration's batch
    seconds: float
    iterations: int


def train(instances: Sequence[Instance], *, episodes: int, orders: int = 64, seed: int = 0,
          cfg: Config | None = None, avoid: Sequence[Sequence[np.ndarray]] | None = None,
          checkpoint: str | Path | None = None, resume: bool = False, checkpoint_every: int = 10,
          progress: Callable[[int, int, float], None] | None = None, info: dict[str, Any] | None = None,
          teacher: Any = None, imitate_episodes: int = 0, imitate_epochs: int = 10,
          imitate_rounds: int = 3, init_weights: Sequence[float] | None = None) -> TrainResult:
    """Train the placement policy with REINFORCE on sampled orders of ``instances``.

    Args:
        instances: training instances (same number of resources); iteration ``i`` uses instance
            ``i % len(instances)``.
        episodes: training episodes in all (``episodes // cfg.batch`` iterations, at least 1).
        orders: training orders per instance (:func:`training_orders`).
        seed: seeds the network, the orders and every sample.
        cfg: hyper-parameters (default :class:`Config` sized from ``instances[0]``).
        avoid: per instance, orders never to train on (the evaluation orders).
        checkpoint: file to save the state to every ``checkpoint_every`` iterations (and at the end).
        checkpoint_every: iterations between checkpoints.
        resume: continue from ``checkpoint`` if it exists (same settings).
        progress: called after each iteration with ``(iteration, iterations, mean cost)``.
        info: facts to store in the model file (e.g. the command).
        imitate_episodes: episodes per DAgger round (0: no warm start).
        imitate_epochs: passes over the labels per round.
        imitate_rounds: DAgger rounds.
        init_weights: start the linear host term from these swarm weights (:func:`transfer_linear`).
        teacher: a policy to imitate first (:func:`imitate`: ``imitate_rounds`` DAgger rounds of
            ``imitate_episodes`` episodes, ``imitate_epochs`` epochs each, at ``cfg.imitate_lr``)
            before REINFORCE; skipped when resuming a checkpoint.

    Returns:
        The :class:`TrainResult`.
    """
    if not instances:
        raise ValueError("no training instance")
    cfg = cfg or Config(n_resources=instances[0].n_resources)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        torch.manual_seed(seed)
        net = PlacementNet(cfg)
        if init_weights is not None:
            transfer_linear(net, init_weights)
        opt = torch.optim.Adam(net.parameters(), lr=cfg.lr)
        feats = [Featurizer(i) for i in instances]
        pools = [training_orders(inst, orders, _seed(seed, j), (avoid[j] if avoid else ()))
                 for j, inst in enumerate(instances)]
        n_iter = max(1, episodes // cfg.batch)
        start, curve, seconds = 0, [], 0.0
        if resume and checkpoint is not None and Path(checkpoint).is_file():
            from policies.agents.files import read_agent_file

            data = read_agent_file(checkpoint)
            if data["kind"] != KIND:
                raise input_error(str(checkpoint), "kind", f"a {data['kind']!r} agent file, not a "
                                  f"{KIND!r} checkpoint (give a --checkpoint written by this command)")
            if "optimizer" not in data or "iteration" not in data:
                raise input_error(str(checkpoint), "iteration", "a model file without training state "
                                  "(optimizer, iteration); resume from a --checkpoint file")
            diff = [f"{k} {data['config'].get(k)} (this run: {getattr(cfg, k)})"
                    for k in ("n_resources", "dim", "layers") if data["config"].get(k) != getattr(cfg, k)]
            if diff:
                raise input_error(str(checkpoint), "config", f"a network of another shape: "
                                  f"{', '.join(diff)}; give the options it was trained with")
            net.load_state_dict(data["state_dict"])
            opt.load_state_dict(data["optimizer"])
            start = int(data["iteration"])
            curve = [float(v) for v in data["curve"]]
            seconds = float(data.get("seconds", 0.0))
            kept = {k: v for k, v in dict(data.get("info", {})).items()
                    if k not in ("curve", "iterations", "seconds")}
            info = {**kept, **(info or {})}
        t0 = time.perf_counter() - seconds
        info = dict(info or {})
        if teacher is not None and imitate_episodes > 0 and start == 0:
            im_opt = torch.optim.Adam(net.parameters(), lr=cfg.imitate_lr)
            acc = imitate(net, im_opt, instances, feats, pools, teacher, episodes=imitate_episodes,
                          epochs=imitate_epochs, seed=seed, rounds=imitate_rounds)
            info["imitation"] = {"teacher": str(getattr(teacher, "name", "?")), "rounds": imitate_rounds,
                                 "episodes": imitate_episodes, "epochs": imitate_epochs,
                                 "agreement": round(acc, 4)}
        pol = GcnPlacementPolicy(net, info=info)

        def save_ckpt(it: int) -> None:
            if checkpoint is not None:
                pol.info = {**info, "curve": curve, "iterations": it,
                            "seconds": time.perf_counter() - t0}
                pol.save(checkpoint, {"optimizer": opt.state_dict(), "iteration": it, "curve": curve,
                                      "seconds": time.perf_counter() - t0})

        for it in range(start, n_iter):
            j = it % len(instances)
            rng = np.random.default_rng(_seed(seed, 1, it))
            order = pools[j][int(rng.integers(len(pools[j])))]
            gen = torch.Generator().manual_seed(_seed(seed, 2, it))
            net.train()
            b = rollout(net, instances[j], order, cfg.batch, gen, cfg.penalty, feats[j])
            update(net, opt, b, feats[j].n_apps, feats[j].n_hosts, cfg.entropy)
            curve.append(float(b.costs.mean()))
            if progress is not None:
                progress(it + 1, n_iter, curve[-1])
            if checkpoint is not None and ((it + 1) % checkpoint_every == 0):
                save_ckpt(it + 1)
        net.eval()
        save_ckpt(n_iter)
        secs = time.perf_counter() - t0
        pol.info = {**info, "curve": curve, "iterations": n_iter, "seconds": round(secs, 1)}
        return TrainResult(pol, curve, secs, n_iter)
    finally:
        torch.set_num_threads(threads)


def plot_curve(curve: Sequence[float], path: str | Path, *, title: str = "GCN placement: REINFORCE",
               refs: dict[str, float] | None = None) -> None:
    """Save the training curve (mean hosts per iteration, and a moving average) with reference lines."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    y = np.asarray(curve, dtype=np.float64)
    ax.plot(np.arange(1, len(y) + 1), y, lw=0.8, alpha=0.5, label="batch mean (sampled)")
    if len(y) >= 5:
        k = max(5, len(y) // 20)
        ma = np.convolve(y, np.ones(k) / k, mode="valid")
        ax.plot(np.arange(k, len(y) + 1), ma, lw=2, label=f"moving average ({k})")
    for name, v in (refs or {}).items():
        ax.axhline(v, ls="--", lw=1, color="grey")
        ax.text(1, v, f" {name} {v:g}", va="bottom", fontsize=8)
    ax.set_xlabel("iteration")
    ax.set_ylabel("hosts used (+ penalty x rejected)")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    from packing.io.atomic import save_figure

    try:
        save_figure(fig, path, dpi=110)
    finally:
        plt.close(fig)


GCN_METRICS: tuple[tuple[str, Sense], ...] = (("hosts", "min"),)
"""The held-out comparison of the GCN placement policy: hosts in use."""

GCN_REMEDY = "train longer, start from a tuned policy (--init-from), or keep Best-Fit"
"""What the warning of a worse trained policy suggests."""


def held_out(policy: Any, instance: Instance, orders: Sequence[np.ndarray]) -> HeldOut:
    """``policy`` against Best-Fit on held-out ``orders`` (each shape ``(n_arrivals,)``; seed 0 runs).

    The trained policy's name is ``policy.name``; its means are also kept in ``policy.info["held_out"]``
    (``gcn_mean``, ``bf_mean``) when it has an ``info`` dict.
    """
    from packing.sim.simulator import simulate
    from policies.heuristics import BestFit

    mine = [simulate(instance, policy, o, seed=0).hosts for o in orders]
    bf = [simulate(instance, BestFit(), o, seed=0).hosts for o in orders]
    info = getattr(policy, "info", None)
    if isinstance(info, dict):
        info["held_out"] = {"gcn_mean": float(np.mean(mine)), "bf_mean": float(np.mean(bf))}
    return HeldOut.of_runs("orders", str(getattr(policy, "name", "gcn")), "bf", GCN_METRICS,
                           {"hosts": mine}, {"hosts": bf})


__all__ = ["GCN_METRICS", "GCN_REMEDY", "Batch", "TrainResult", "held_out", "imitate", "plot_curve",
           "rollout", "train", "training_orders", "update"]
