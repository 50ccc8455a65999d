"""Training of the JobFusion agent (:mod:`policies.agents.jobfusion`): REINFORCE, imitation, distillation.

Environments, the training state, REINFORCE with returns-to-go (:func:`train`), imitation of a
teacher (:func:`imitate`), its distillation by DAgger rounds (:func:`distil`), training checkpoints
(:func:`save_checkpoint`, :func:`load_checkpoint`) and the learning curve plot. Deploying an agent
(:func:`policies.agents.jobfusion.from_checkpoint`) never imports this module.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from packing.dag.engine import Cluster, DagAction, DagEngine, DagObservation, Overheads
from packing.dag.model import Workload
from packing.dag.policy import drive_dag, run_dag
from policies.agents.heldout import HeldOut, Sense
from policies.agents.jobfusion import (
    Config,
    JobFusionNet,
    JobFusionPolicy,
    Step,
    net_from,
    new_net,
)


# -- training ---------------------------------------------------------------------------------------
@dataclass
class Env:
    """A training environment: jobs, the carved cluster, overheads."""

    workload: Workload
    cluster: Cluster
    overheads: Overheads | None = None


@dataclass
class TrainState:
    """Where a run is: iterations done and the curve (mean JCT and loss per iteration)."""

    iteration: int = 0
    curve: list[float] = field(default_factory=list)
    losses: list[float] = field(default_factory=list)
    seconds: float = 0.0


def returns_to_go(arrival: np.ndarray, finish: np.ndarray, times: np.ndarray) -> np.ndarray:
    """``-sum_j max(0, finish_j - max(arrival_j, t))`` at each time of ``times`` (shape ``(K,)``)."""
    t = times[:, None]
    return -np.maximum(0.0, finish[None, :] - np.maximum(arrival[None, :], t)).sum(axis=1)


def _episode(env: Env, policy: JobFusionPolicy, seed: int) -> tuple[list[Step], np.ndarray, float]:
    eng = DagEngine(env.workload, env.cluster, overheads=env.overheads, seed=seed)
    eng.reset()
    policy.reset(eng)
    policy.record = []
    drive_dag(eng, policy.act)
    steps, policy.record = policy.record, None
    res = eng.result()
    return steps, res.finish, res.mean_jct


def train(envs: Sequence[Env], iterations: int, *, cfg: Config | None = None, seed: int = 0,
          net: JobFusionNet | None = None, optim_state: dict[str, Any] | None = None,
          state: TrainState | None = None, checkpoint: Path | None = None, every: int = 10,
          progress: bool = False, on_iteration: Callable[[TrainState], None] | None = None
          ) -> tuple[JobFusionNet, TrainState, dict[str, Any]]:
    """REINFORCE with a time-based baseline (see the module docstring).

    Args:
        envs: training environments; iteration ``i`` uses ``envs[rng_i.integers(len(envs))]``.
        iterations: total iterations (a resumed ``state`` counts the ones done).
        cfg: hyper-parameters (ignored when ``net`` is given).
        seed: seeds the network init and each iteration's draws.
        net: the network to go on training (resume; see :func:`load_checkpoint`).
        optim_state: the optimizer's state to resume with.
        state: the training state to resume from (iterations done, curve).
        checkpoint: save here every ``every`` iterations and at the end.
        every: iterations between checkpoints.
        progress: show a tqdm bar.
        on_iteration: called with the state after each iteration.

    Returns:
        ``(net, state, optimizer state dict)``.
    """
    if net is None:
        net = new_net(cfg or Config(), seed)
    torch.manual_seed(seed)
    cfg = net.cfg
    opt = torch.optim.Adam(net.parameters(), lr=cfg.lr)
    if optim_state is not None:
        opt.load_state_dict(optim_state)
    state = state or TrainState()
    bar = None
    if progress and iterations > state.iteration:
        from tqdm import tqdm

        bar = tqdm(total=iterations, initial=state.iteration, desc="jobfusion", unit="it")
    t0 = time.perf_counter() - state.seconds
    while state.iteration < iterations:
        it = state.iteration
        rng = np.random.default_rng([seed, it])
        env = envs[int(rng.integers(len(envs)))]
        eng_seed = int(rng.integers(2**31))
        gen = torch.Generator().manual_seed(int(rng.integers(2**62)))
        pol = JobFusionPolicy(net, sample=True, generator=gen)
        arr = np.array([j.arrival for j in env.workload.jobs])
        runs = [_episode(env, pol, eng_seed) for _ in range(cfg.batch)]
        rtg = [returns_to_go(arr, fin, np.array([s.time for s in st])) for st, fin, _ in runs]
        base_t = np.concatenate([np.array([s.time for s in st]) for st, _, _ in runs])
        adv_all = []
        for (st, _, _), g in zip(runs, rtg, strict=True):
            times = np.array([s.time for s in st])
            b = np.mean([returns_to_go(arr, fin, times) for _, fin, _ in runs], axis=0)
            adv_all.append(g - b)
        scale = float(np.concatenate(adv_all).std()) + 1e-8 if base_t.size else 1.0
        frac = min(1.0, it / max(cfg.anneal, 1))
        beta = cfg.entropy + (cfg.entropy_end - cfg.entropy) * frac
        opt.zero_grad()
        n = sum(len(st) for st, _, _ in runs)
        loss_v = 0.0
        for (st, _, _), adv in zip(runs, adv_all, strict=True):
            if not st:
                continue
            lp = torch.stack([s.logp for s in st])
            ent = torch.stack([s.entropy for s in st])
            a = torch.from_numpy((adv / scale).astype(np.float32))
            loss = (-(lp * a).sum() - beta * ent.sum()) / max(n, 1)
            loss.backward()
            loss_v += float(loss.item())
        nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        opt.step()
        state.iteration += 1
        state.curve.append(float(np.mean([r[2] for r in runs])))
        state.losses.append(loss_v)
        state.seconds = time.perf_counter() - t0
        if bar is not None:
            bar.update(1)
            bar.set_postfix(jct=f"{state.curve[-1]:.0f}")
        if on_iteration is not None:
            on_iteration(state)
        if checkpoint is not None and (state.iteration % every == 0 or state.iteration == iterations):
            save_checkpoint(checkpoint, net, state, opt.state_dict(), seed=seed)
    if bar is not None:
        bar.close()
    return net, state, opt.state_dict()


def _decisions(env: Env, policy: Any) -> int:
    """Decisions ``policy`` takes on ``env`` (engine seed 0)."""
    result, _ = run_dag(DagEngine(env.workload, env.cluster, overheads=env.overheads, seed=0), policy)
    return result.decisions


def _nll_step(net: JobFusionNet, opt: torch.optim.Optimizer, lps: list[torch.Tensor]) -> float:
    """One Adam step on the mean negative log-likelihood of ``lps``; returns the summed NLL."""
    loss = -torch.stack(lps).mean()
    opt.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(net.parameters(), 1.0)
    opt.step()
    return float(loss.item()) * len(lps)


def imitate(envs: Sequence[Env], teacher: Any, epochs: int, *, net: JobFusionNet, seed: int = 0,
            lr: float | None = None, progress: bool = False, dagger: float = 0.0,
            max_labels: int | None = None, driver: Any = None) -> list[float]:
    """Behaviour cloning: fit the heads to a teacher's decisions on the training environments.

    For each environment (in a seeded order per epoch) the teacher (a
    :class:`packing.dag.policy.DagPolicy`, e.g. :class:`policies.dag.ShortestJobFirst`) runs an
    episode; at each of its decisions the loss is the negative log-probability of its (stage, type,
    count level) under the network; one Adam step per episode. Used as a warm start before
    :func:`train` (the trained agent's file records it).

    With ``dagger > 0`` (DAgger), from the second epoch on each decision is the student's own greedy
    action with probability ``dagger`` (seeded) while the loss stays on the teacher's action in that
    state: the student also learns what to do in the states its own mistakes lead to.

    With ``max_labels`` an environment with more decisions than that (counted once with ``driver``,
    else the teacher) labels each decision with probability ``max_labels / decisions`` (seeded), so
    long job sets cost about ``max_labels`` gradient terms per episode; the unlabelled decisions are
    taken by ``driver`` (e.g. SJF, when the teacher is a slow rollout expert) or the teacher.

    Args:
        envs: training environments.
        teacher: the policy imitated (its decisions drive the episodes).
        epochs: passes over ``envs``.
        net: the network, trained in place.
        seed: seeds the order and the engine's overheads.
        lr: Adam learning rate (default the network's).
        progress: show a tqdm bar.
        dagger: probability that the student's action drives the episode (epochs after the first).
        max_labels: about this many labelled decisions per episode at most (None: every decision).
        driver: the policy of the unlabelled decisions (default: the teacher).

    Returns:
        The mean loss (negative log-likelihood per decision) of each epoch.
    """
    if not 0.0 <= dagger <= 1.0:
        raise ValueError(f"dagger must be in [0, 1], got {dagger}")
    opt = torch.optim.Adam(net.parameters(), lr=lr or net.cfg.lr)
    pol = JobFusionPolicy(net, "student")
    losses: list[float] = []
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=epochs * len(envs), desc="imitate", unit="ep")
    share = [1.0] * len(envs)
    if max_labels is not None:
        share = [min(1.0, max_labels / max(_decisions(e, driver or teacher), 1)) for e in envs]
    for ep in range(epochs):
        rng = np.random.default_rng([seed, 7919, ep])
        tot, n = 0.0, 0
        for i in rng.permutation(len(envs)):
            env = envs[int(i)]
            eng = DagEngine(env.workload, env.cluster, overheads=env.overheads,
                            seed=int(rng.integers(2**31)))
            eng.reset()
            teacher.reset(eng)
            if driver is not None:
                driver.reset(eng)
            pol.reset(eng)
            p_label = share[int(i)]
            lps: list[torch.Tensor] = []

            def decide(obs: DagObservation, mask: np.ndarray, ep: int = ep, p_label: float = p_label,
                       lps: list[torch.Tensor] = lps, rng: np.random.Generator = rng) -> DagAction:
                if p_label < 1.0 and rng.random() >= p_label:  # unlabelled: the driver decides
                    a = (driver or teacher).act(obs, mask)
                    if ep > 0 and dagger > 0 and rng.random() < dagger:
                        a = pol.act(obs, mask)
                    return a
                a = teacher.act(obs, mask)
                if a.stage >= 0:
                    lps.append(pol.log_prob(obs, mask, a))
                    if ep > 0 and dagger > 0 and rng.random() < dagger:
                        a = pol.act(obs, mask)
                return a

            drive_dag(eng, decide)
            if lps:
                tot += _nll_step(net, opt, lps)
                n += len(lps)
            if bar is not None:
                bar.update(1)
        losses.append(tot / max(n, 1))
        if bar is not None:
            bar.set_postfix(nll=f"{losses[-1]:.3f}")
    if bar is not None:
        bar.close()
    return losses


def distil(envs: Sequence[Env], teacher: Any, rounds: int, *, net: JobFusionNet, seed: int = 0,
           lr: float = 1e-3, dagger: float = 0.5, max_labels: int | None = None, driver: Any = None,
           passes: int = 4, batch: int = 64, progress: bool = False) -> list[float]:
    """DAgger with dataset aggregation: label states with a (slow) teacher, fit the net on all labels so far.

    Each round runs one episode per environment (seeded order and engine seeds). A decision is
    labelled by ``teacher`` with probability ``max_labels / decisions`` (1 without ``max_labels``;
    decisions counted once with ``driver``); the episode is driven by the agent's greedy action with
    probability ``dagger``, else by the teacher (labelled decisions) or ``driver`` (the others). The
    labelled states ``(observation, mask, teacher's action)`` are kept; after each round the net takes
    ``passes`` passes of Adam steps over minibatches of ``batch`` of every state labelled so far (the
    loss: mean negative log-likelihood of the teacher's actions). Unlike :func:`imitate` (one step per
    episode) the few expensive labels are reused many times.

    Args:
        envs: training environments.
        teacher: the labelling policy (e.g. :class:`policies.dag.RolloutExpert`).
        rounds: labelling rounds.
        net: the network, trained in place.
        seed: seeds the order, the engines, which decisions are labelled and driven by the agent.
        lr: Adam learning rate.
        dagger: probability that the agent's action drives a decision.
        max_labels: about this many labels per episode (None: every decision).
        driver: the policy of unlabelled decisions (default: the teacher).
        passes: passes over the aggregated labels after each round.
        batch: states per Adam step.
        progress: show a tqdm bar.

    Returns:
        The mean loss of the last pass of each round.
    """
    if not 0.0 <= dagger <= 1.0:
        raise ValueError(f"dagger must be in [0, 1], got {dagger}")
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    pols = [JobFusionPolicy(net, "student") for _ in envs]
    share = [1.0] * len(envs)
    if max_labels is not None:
        share = [min(1.0, max_labels / max(_decisions(e, driver or teacher), 1)) for e in envs]
    data: list[tuple[int, DagObservation, np.ndarray, DagAction]] = []
    losses: list[float] = []
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=rounds * len(envs), desc="distil", unit="ep")
    for r in range(rounds):
        rng = np.random.default_rng([seed, 104729, r])
        for i in rng.permutation(len(envs)):
            env, pol = envs[int(i)], pols[int(i)]
            eng = DagEngine(env.workload, env.cluster, overheads=env.overheads, seed=int(rng.integers(2**31)))
            eng.reset()
            teacher.reset(eng)
            if driver is not None:
                driver.reset(eng)
            pol.reset(eng)  # static tables only: the stored states reuse them

            def decide(obs: DagObservation, view: np.ndarray, i: int = int(i), pol: JobFusionPolicy = pol,
                       rng: np.random.Generator = rng) -> DagAction:
                mask = view.copy()
                if share[i] >= 1.0 or rng.random() < share[i]:
                    a = teacher.act(obs, mask)
                    if a.stage >= 0:
                        data.append((i, obs, mask, a))
                else:
                    a = (driver or teacher).act(obs, mask)
                if dagger > 0 and rng.random() < dagger:
                    a = pol.act(obs, mask)
                return a

            drive_dag(eng, decide)
            if bar is not None:
                bar.update(1)
        tot, n = 0.0, 0
        for _ in range(passes):
            order = rng.permutation(len(data))
            tot, n = 0.0, 0
            for b in range(0, len(order), batch):
                part = [data[int(k)] for k in order[b:b + batch]]
                lps = [pols[e].log_prob(o, m, a) for e, o, m, a in part]
                tot += _nll_step(net, opt, lps)
                n += len(lps)
        losses.append(tot / max(n, 1))
        if bar is not None:
            bar.set_postfix(nll=f"{losses[-1]:.3f}", labels=len(data))
    if bar is not None:
        bar.close()
    return losses


# -- files ------------------------------------------------------------------------------------------
def checkpoint_data(net: JobFusionNet, state: TrainState | None = None,
                    optim: dict[str, Any] | None = None, **info: Any) -> dict[str, Any]:
    """The dict :func:`policies.agents.files.save_agent` writes (tensors, numbers, strings, lists)."""
    data: dict[str, Any] = {"config": asdict(net.cfg), "weights": dict(net.state_dict()), "info": dict(info)}
    if state is not None:
        data["train"] = asdict(state)
    if optim is not None:
        data["optim"] = optim
    return data


def save_checkpoint(path: str | Path, net: JobFusionNet, state: TrainState | None = None,
                    optim: dict[str, Any] | None = None, **info: Any) -> None:
    """Save a model (and the training state for resuming) as a ``jobfusion`` agent file."""
    from policies.agents.files import save_agent

    save_agent("jobfusion", checkpoint_data(net, state, optim, **info), path)


def load_checkpoint(path: str | Path) -> tuple[JobFusionNet, TrainState, dict[str, Any] | None]:
    """``(net, training state, optimizer state)`` of a file (weights-only read) to resume from."""
    from packing.errors import input_error
    from policies.agents.files import read_agent_file

    data = read_agent_file(path)
    if data["kind"] != "jobfusion":
        raise input_error(str(path), "kind", f"a {data['kind']!r} agent, not a jobfusion one")
    try:
        net = net_from(data)
        st = TrainState(**data.get("train", {}))
    except (KeyError, TypeError, ValueError, RuntimeError) as e:
        raise input_error(str(path), "jobfusion", f"bad agent file: {e}") from None
    return net, st, data.get("optim")


def plot_curve(state: TrainState, path: str | Path, title: str = "JobFusion agent training") -> None:
    """Mean JCT of the sampled training episodes per iteration (and a moving average)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    y = np.asarray(state.curve)
    fig, ax = plt.subplots(figsize=(6.5, 4))
    ax.plot(np.arange(1, len(y) + 1), y, lw=0.8, alpha=0.5, label="per iteration")
    if len(y) >= 5:
        w = max(len(y) // 10, 2)
        ma = np.convolve(y, np.ones(w) / w, mode="valid")
        ax.plot(np.arange(w, len(y) + 1), ma, lw=2, label=f"moving average ({w})")
    ax.set_xlabel("iteration")
    ax.set_ylabel("mean JCT of sampled episodes (s)")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    from packing.io.atomic import save_figure

    try:
        save_figure(fig, path)
    finally:
        plt.close(fig)


# -- a whole run: warm start, REINFORCE, the file; the held-out comparison ---------------------------
@dataclass(frozen=True)
class WarmStart:
    """What runs before REINFORCE (``vbp train gcn DATA`` options of the same names).

    Attributes:
        imitate: behaviour cloning of this DAG policy (``fifo``, ``sjf``, ``sjf-cp``, ``cpf``; ``None``:
            none).
        imitate_epochs: passes over the training samples for ``imitate``.
        dagger: share of decisions the agent drives after the first epoch (DAgger).
        expert: ``"rollout"``: expert iteration labelled by :class:`policies.dag.RolloutExpert`.
        expert_epochs: passes (or labelling rounds) of ``expert``.
        expert_horizon: base-policy decisions per rollout (0: to the end of the jobs in the system).
        expert_rollouts: rollouts per candidate.
        expert_base: the rollout policy (``sjf`` or ``sjf-cp``).
        expert_within: also try every other runnable stage of the base policy's job.
        expert_passes: with dataset aggregation, passes over every label after each round (0: one step).
        max_labels: label about this many decisions per episode at most (``None``: every decision).
    """

    imitate: str | None = None
    imitate_epochs: int = 10
    dagger: float = 0.0
    expert: str | None = None
    expert_epochs: int = 3
    expert_horizon: int = 40
    expert_rollouts: int = 1
    expert_base: str = "sjf"
    expert_within: bool = False
    expert_passes: int = 0
    max_labels: int | None = None

    def info(self) -> dict[str, Any]:
        """The keys a model file records about the warm start."""
        out: dict[str, Any] = {}
        if self.imitate:
            out.update(imitated=self.imitate, imitate_epochs=self.imitate_epochs, dagger=self.dagger)
        if self.expert:
            out.update(expert=self.expert, expert_epochs=self.expert_epochs,
                       expert_horizon=self.expert_horizon, expert_rollouts=self.expert_rollouts,
                       expert_base=self.expert_base, expert_within=self.expert_within,
                       expert_passes=self.expert_passes)
        return out


@dataclass
class RunResult:
    """A finished run of :func:`train_run`.

    Attributes:
        net: the trained network (saved).
        state: the REINFORCE state (iterations, curve of sampled mean JCT per iteration, seconds).
        imitation_nll: negative log-likelihood per decision after each imitation epoch.
        expert_nll: the same for the expert's distillation.
    """

    net: JobFusionNet
    state: TrainState
    imitation_nll: list[float]
    expert_nll: list[float]


def train_run(envs: Sequence[Env], out: str | Path, *, cfg: Config, iterations: int, seed: int = 0,
              warm: WarmStart | None = None, resume: bool = False, progress: bool = False,
              **info: Any) -> RunResult:
    """Warm start (imitation, expert), REINFORCE and the model file ``out`` (checkpoints every 10 iterations).

    Args:
        envs: the training environments.
        out: the model file (``.pt``); with ``resume`` the run continues from it.
        cfg: the network and REINFORCE settings (``cfg.partition`` names the container types).
        iterations: REINFORCE iterations in all (a resumed file's included).
        seed: seed of the network, the warm start and the sampled actions.
        warm: what runs before REINFORCE (not with ``resume``).
        resume: continue the run saved in ``out``.
        progress: progress bars on stderr.
        **info: more keys for the file's ``info`` (e.g. the carving).
    """
    from policies.dag import RolloutExpert, ShortestJobFirst, SjfCriticalPath, make_dag_policy

    w = warm or WarmStart()
    method = cfg.partition
    net: JobFusionNet | None = None
    state: TrainState | None = None
    optim: dict[str, Any] | None = None
    if resume:
        net, state, optim = load_checkpoint(out)
    driver = ShortestJobFirst(method) if w.max_labels is not None else None
    nll: list[float] = []
    if w.imitate is not None:
        net = new_net(cfg, seed)
        nll = imitate(envs, make_dag_policy(w.imitate, seed), w.imitate_epochs, net=net, seed=seed,
                      progress=progress, dagger=w.dagger, max_labels=w.max_labels, driver=driver)
    expert_nll: list[float] = []
    if w.expert is not None:
        base_cls = SjfCriticalPath if w.expert_base == "sjf-cp" else ShortestJobFirst
        net = new_net(cfg, seed) if net is None else net
        teacher = RolloutExpert(method, horizon=w.expert_horizon or None, rollouts=w.expert_rollouts,
                                seed=seed, base=w.expert_base, within=w.expert_within)
        ex_driver = None if w.max_labels is None else base_cls(method)
        if w.expert_passes > 0:
            expert_nll = distil(envs, teacher, w.expert_epochs, net=net, seed=seed + 1, lr=1e-3,
                                progress=progress, dagger=max(w.dagger, 0.5), max_labels=w.max_labels,
                                driver=ex_driver, passes=w.expert_passes)
        else:
            expert_nll = imitate(envs, teacher, w.expert_epochs, net=net, seed=seed + 1, lr=1e-3,
                                 progress=progress, dagger=max(w.dagger, 0.5), max_labels=w.max_labels,
                                 driver=ex_driver)
    net, state, opt_state = train(envs, iterations, cfg=cfg, seed=seed, net=net, optim_state=optim,
                                  state=state, checkpoint=Path(out), progress=progress)
    extra = w.info()
    if w.imitate:
        extra["imitation_nll"] = nll
    if w.expert:
        extra["expert_nll"] = expert_nll
    save_checkpoint(out, net, state, opt_state, seed=seed,
                    max_labels=w.max_labels if w.max_labels is not None else 0, **info, **extra)
    return RunResult(net, state, nll, expert_nll)


JOBS_METRICS: tuple[tuple[str, Sense], ...] = (("mean_jct", "min"),)
"""The held-out comparison of a DAG agent: mean job completion time."""

JOBS_REMEDY = "train longer, warm-start from SJF (--imitate sjf), or keep SJF"
"""What the warning of a worse agent suggests."""


def held_out(model: str | Path, envs: Sequence[Env], *, seed: int = 0, baseline: str = "sjf") -> HeldOut:
    """The saved agent against ``baseline`` on held-out environments (job samples never trained on).

    Both run on each environment's carved cluster with overhead seed ``seed + i`` for sample ``i``;
    the baseline uses the agent's partition.

    Args:
        model: the model file (the policy that ships, loaded as ``vbp jobs compare`` loads it).
        envs: the held-out environments.
        seed: seed of the overheads.
        baseline: a DAG policy name (default ``sjf``: the one ``docs/jobfusion-gcn.md`` compares with).
    """
    from policies.agents.files import load_agent
    from policies.dag import make_dag_policy

    agent: Any = load_agent(model)
    base: Any = make_dag_policy(baseline, seed)
    if hasattr(base, "partition"):
        base.partition = agent.partition
    runs: dict[str, list[float]] = {"agent": [], "base": []}
    for i, env in enumerate(envs):
        for key, pol in (("agent", agent), ("base", base)):
            eng = DagEngine(env.workload, env.cluster, overheads=env.overheads, seed=seed + i)
            runs[key].append(run_dag(eng, pol)[0].mean_jct)
    return HeldOut.of_runs("job samples", str(agent.name), baseline, JOBS_METRICS,
                           {"mean_jct": runs["agent"]}, {"mean_jct": runs["base"]})


__all__ = ["JOBS_METRICS", "JOBS_REMEDY", "Env", "RunResult", "TrainState", "WarmStart", "checkpoint_data",
           "distil", "held_out", "imitate", "load_checkpoint", "plot_curve", "returns_to_go",
           "save_checkpoint", "train", "train_run"]
