"""The JobFusion agent: a graph convolutional policy over DAG jobs, trained with REINFORCE.

Encoder (torch + torch_geometric)
    Nodes are the stages of the jobs in the system (arrived, not finished); edges go child -> parent,
    so one round of :class:`ChildSum` computes JobFusion's eq. 4 for every node at once::

        e_v = g( sum_{u in children(v)} f(e_u) ) + x_v

    (``x_v`` projected to the hidden width ``H``). ``rounds`` rounds reach ``rounds`` levels down the
    DAG (the reverse-topological recursion for DAGs no deeper than that). The DAG embedding of a job
    is an MLP of the sum of its nodes' embeddings; the global embedding an MLP of the sum of the DAG
    embeddings.

Node features (``Config.features``)
    2 (default, :data:`NODE_FEATURES_V2`, scale-free): CPU and memory demand of a task (divided by
    the largest container type); pending, running and finished shares of the stage's tasks; total
    tasks and task duration (``log1p / 8``, clipped at 1); the job's shortest-job-first rank, whether
    it is SJF's job, SJF's stage and SJF-CP's stage (heuristic hints), the log-ratio of its remaining
    work to SJF's job's, its share of all remaining work, the stage's share of its job's and its path
    to the job's end over the job's critical path; allowed; 1. DAG and global embeddings
    are means. Why: with the raw log-scaled counts of feature set 1 (:data:`NODE_FEATURES`; files
    written before) an agent imitating SJF on 10-job training samples (at most ~1,000 decisions,
    ~6,500 tasks) left SJF's stage in 2,791 of 4,890 decisions of a held-out sample of 80,245 tasks
    (its task-count features 1.41 against at most 0.89 in training) and took 7,765 s mean JCT
    against SJF's 4,056.

Candidate stages (``Config.candidates``, a deviation from the paper)
    With ``candidates = k > 0`` the stage head scores only the runnable stages of the ``k`` jobs
    with the least remaining task-seconds (SJF's stage always among them); 0 scores every runnable
    stage as the paper does. The agent then learns within SJF's neighbourhood and cannot drift to
    long jobs on job sets larger than any it trained on.

Heads (the action triple of :class:`packing.dag.engine.DagAction`)
    * stage: masked softmax over the runnable stages the mask allows (score from node, DAG and
      global embeddings);
    * container type: masked softmax over the types with a free container for that stage (score from
      the chosen node's embedding, the global embedding, the type's shape and free share and, with
      ``Config.slack``, the type's slack over the stage's task: 0 for an exact fit);
    * count: a softmax over ``levels`` shares of the most it may launch, ``count = ceil(most * l /
      levels)`` for ``l = 1..levels``.

Training (:func:`train`)
    REINFORCE. Each iteration runs ``batch`` episodes of one training environment (same jobs, same
    engine seed) with sampled actions. The reward of decision ``k`` is ``-(t_{k+1} - t_k) * J_k``
    (``J_k`` jobs in the system); its return-to-go is ``-sum_j max(0, finish_j - max(arrival_j,
    t_k))``, computed exactly from the finish times. The baseline is time-based: the mean over the
    batch's episodes of their return-to-go at the same time ``t_k``. Advantages are divided by the
    batch's spread; an entropy bonus (annealed linearly over ``anneal`` iterations) keeps
    exploring. Everything random is seeded per iteration, so a run resumed from a checkpoint
    continues exactly as an uninterrupted one.

A Decima-like agent is the same agent trained on the single-type partition (``partition="single"``).

Files go through :mod:`policies.agents.files` (kind ``"jobfusion"``, weights only).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from torch_geometric.nn import MessagePassing

from packing.dag.engine import Cluster, DagAction, DagEngine, DagObservation, Overheads
from packing.dag.model import Workload
from packing.dag.policy import drive_dag, run_dag
from policies.agents.checks import (
    Num,
    check_adam,
    check_fields,
    check_name,
    check_numbers,
    check_tensors,
    meta_shapes,
    printable,
    section,
)
from policies.agents.limits import JOBFUSION_CONFIG, jobfusion_fields

NODE_FEATURES = 11
"""Node features of ``Config.features == 1`` (files from before the scale-free features)."""
NODE_FEATURES_V2 = 17
"""Node features of ``Config.features == 2`` (scale-free; see :meth:`JobFusionPolicy.features`)."""
TYPE_FEATURES = 4
"""Type features without ``Config.slack``: shape (2), free share, ``log1p(free) / 8``."""


def _mlp(n_in: int, hidden: int, n_out: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU(), nn.Linear(hidden, n_out))


class ChildSum(MessagePassing):
    """One eq.-4 round: ``e_v = g(sum over edges u -> v of f(e_u)) + x_v`` (edges child -> parent)."""

    def __init__(self, dim: int) -> None:
        super().__init__(aggr="add")
        self.f = _mlp(dim, dim, dim)
        self.g = _mlp(dim, dim, dim)

    def forward(self, h: torch.Tensor, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        """``h`` current embeddings ``(N, H)``, ``x`` projected features ``(N, H)``, edges ``(2, E)``."""
        agg = self.propagate(edge_index, x=self.f(h), size=(h.shape[0], h.shape[0]))
        return self.g(agg) + x

    def message(self, x_j: torch.Tensor) -> torch.Tensor:  # noqa: D102
        return x_j


@dataclass
class Config:
    """Hyper-parameters of the network and of training."""

    dim: int = 16
    rounds: int = 3
    levels: int = 2
    lr: float = 3e-3
    entropy: float = 0.01
    entropy_end: float = 0.001
    anneal: int = 100
    batch: int = 4
    partition: str = "constrained"
    slack: bool = True
    """Type head also sees the type's slack over the chosen stage's task (2 more type features)."""
    features: int = 2
    """Node features: 1 = the raw log-scaled counts (files from before), 2 = scale-free (shares, ranks
    and ratios relative to the jobs in the system; DAG and global embeddings are means, not sums)."""
    candidates: int = 3
    """Stage head over the runnable stages of the ``candidates`` jobs with the least remaining
    task-seconds only (0: every runnable stage, as in the paper). SJF's stage is always among them."""


class JobFusionNet(nn.Module):
    """Encoder and the three heads (see the module docstring)."""

    def __init__(self, cfg: Config) -> None:
        super().__init__()
        h = cfg.dim
        self.cfg = cfg
        self.inp = nn.Linear(NODE_FEATURES if cfg.features == 1 else NODE_FEATURES_V2, h)
        self.convs = nn.ModuleList([ChildSum(h) for _ in range(cfg.rounds)])
        self.dag_mlp = _mlp(h, h, h)
        self.glob_mlp = _mlp(h, h, h)
        self.stage_head = _mlp(3 * h, h, 1)
        tfe = TYPE_FEATURES + (2 if cfg.slack else 0)
        self.type_head = _mlp(2 * h + tfe, h, 1)
        self.count_head = _mlp(2 * h + tfe, h, cfg.levels)
        with torch.no_grad():  # start near "launch all that fit" (what the heuristics do)
            last = self.count_head[2]
            assert isinstance(last, nn.Linear)
            last.bias[-1] += 2.0

    def embed(self, x: torch.Tensor, edge_index: torch.Tensor, job: torch.Tensor, n_jobs: int
              ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Node ``(N, H)``, DAG ``(n_jobs, H)`` and global ``(H,)`` embeddings of features ``x (N, F)``."""
        x0 = self.inp(x)
        h = x0
        for conv in self.convs:
            h = conv(h, x0, edge_index)
        pooled = torch.zeros(n_jobs, h.shape[1]).index_add_(0, job, h)
        if self.cfg.features == 1:
            dag = self.dag_mlp(pooled)
            return h, dag, self.glob_mlp(dag.sum(0))
        size = torch.bincount(job, minlength=n_jobs).clamp(min=1).to(h.dtype)
        dag = self.dag_mlp(pooled / size[:, None])  # means: as many stages or jobs as training never saw
        return h, dag, self.glob_mlp(dag.mean(0) if n_jobs else dag.sum(0))


@dataclass
class Step:
    """One decision's log-probability and entropy (tensors) and time."""

    logp: torch.Tensor
    entropy: torch.Tensor
    time: float


class JobFusionPolicy:
    """The agent as a :class:`packing.dag.policy.DagPolicy` (greedy unless ``sample``).

    Args:
        net: the network.
        name: the label in comparisons.
        sample: draw actions from the heads (training) instead of taking the most likely.
        generator: the torch generator of sampled actions.
    """

    def __init__(self, net: JobFusionNet, name: str = "jobfusion", *, sample: bool = False,
                 generator: torch.Generator | None = None) -> None:
        self.net = net
        self.name = name
        self.partition = net.cfg.partition
        self.sample = sample
        self.generator = generator
        self.record: list[Step] | None = None
        self.info: dict[str, Any] = {}

    def reset(self, engine: DagEngine) -> None:
        """Static tables: per-job stage ranges and child -> parent edges."""
        self.engine = engine
        types = engine.cluster.types
        self.scale = np.maximum(types.max(axis=0), 1e-12)
        self.type_shape = types / self.scale  # (Q, 2)
        self.type_count = np.maximum(engine.cluster.counts, 1)
        self.first = engine.job_first
        edges: list[tuple[int, int]] = []
        for s, ps in enumerate(engine.parents):
            edges.extend((s, int(p)) for p in ps)
        self.edges = np.array(edges, dtype=np.int64).reshape(-1, 2)  # (E, 2) global child, parent
        self.edge_job = engine.stage_job[self.edges[:, 0]] if len(self.edges) else np.zeros(0, dtype=np.int64)
        down = np.concatenate([j.downward_path for j in engine.workload.jobs]) \
            if engine.workload.jobs else np.zeros(0)
        job_down = np.zeros(len(engine.workload.jobs))
        np.maximum.at(job_down, engine.stage_job, down)
        self.path_share = down / np.maximum(job_down[engine.stage_job], 1e-9)  # (S,) in (0, 1]
        self.static = np.stack([
            engine.stage_demand[:, 0] / self.scale[0], engine.stage_demand[:, 1] / self.scale[1],
            np.log1p(engine.stage_tasks) / 8.0, np.log1p(engine.stage_duration) / 8.0], axis=1)

    def sjf_order(self, obs: DagObservation, allowed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Shortest-job-first ranks of the jobs of the ``allowed`` stages (shape ``(K',)``).

        Returns:
            ``(job_left (J,), job_rank (J,))``: remaining task-seconds of every job and its rank among
            the jobs with an allowed stage, ordered as :class:`policies.dag.ShortestJobFirst` orders
            them (least remaining work, ties by the lowest allowed stage); other jobs rank ``K'``.
            So the rank-0 job holds SJF's stage.
        """
        eng = self.engine
        left = (eng.stage_tasks - obs.finished) * eng.stage_duration
        job_left = np.bincount(eng.stage_job, weights=left, minlength=len(obs.done))
        rank = np.full(len(obs.done), len(allowed), dtype=np.int64)
        if len(allowed):
            jobs = eng.stage_job[allowed[np.lexsort((allowed, job_left[eng.stage_job[allowed]]))]]
            _, first = np.unique(jobs, return_index=True)
            ranked = jobs[np.sort(first)]
            rank[ranked] = np.arange(len(ranked))
        return job_left, rank

    def features(self, obs: DagObservation, allowed: np.ndarray | None = None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
        """Features of the stages of the jobs in the system.

        ``Config.features == 2`` (scale-free: long job sets look like short ones): task demand (2);
        pending, running and finished shares of the stage's tasks; ``log1p(total tasks) / 8`` and
        ``log1p(task duration) / 8``, both clipped at 1; the job's SJF rank among the jobs with an
        allowed stage (divided by ``candidates``, clipped at 1); whether it is SJF's job; whether
        the stage is SJF's stage and whether it is SJF-CP's (:class:`policies.dag.SjfCriticalPath`);
        ``log(job's remaining work / SJF job's) / 4`` clipped at 2; the
        job's share of all remaining work; the stage's share of its job's; the stage's longest duration
        path to the job's end over the job's longest; allowed; 1.

        Args:
            obs: the observation.
            allowed: the stages a container can take now (default: every runnable stage).

        Returns:
            ``(stages (N,), x (N, F), edge_index (2, E), job (N,) local job index, n_jobs)``.
        """
        eng = self.engine
        if allowed is None:
            allowed = obs.runnable
        active = np.flatnonzero(obs.arrived & ~obs.done)
        stages = np.concatenate([np.arange(self.first[j], self.first[j + 1]) for j in active]) \
            if len(active) else np.zeros(0, dtype=np.int64)
        local = np.full(len(eng.stage_tasks), -1, dtype=np.int64)
        local[stages] = np.arange(len(stages))
        left = (eng.stage_tasks - obs.finished) * eng.stage_duration
        job_left = np.bincount(eng.stage_job, weights=left, minlength=len(obs.done))
        runnable = np.zeros(len(eng.stage_tasks), dtype=bool)
        runnable[allowed if self.net.cfg.features >= 2 else obs.runnable] = True
        st = self.static[stages]
        tot = eng.stage_tasks[stages]
        sj = eng.stage_job[stages]
        if self.net.cfg.features == 1:
            x = np.column_stack([
                st[:, 0], st[:, 1], st[:, 2], np.log1p(obs.pending[stages]) / 8.0,
                np.log1p(obs.running[stages]) / 8.0, np.log1p(obs.finished[stages]) / 8.0,
                obs.finished[stages] / np.maximum(tot, 1), st[:, 3],
                np.log1p(job_left[sj]) / 12.0, runnable[stages].astype(np.float64),
                np.ones(len(stages))])
        else:
            _, rank = self.sjf_order(obs, allowed)
            tot1 = np.maximum(tot, 1)
            best = job_left[eng.stage_job[allowed[rank[eng.stage_job[allowed]] == 0]]].min() \
                if len(allowed) else 1.0
            is_sjf_stage = np.zeros(len(stages))
            is_cp_stage = np.zeros(len(stages))
            if len(allowed):
                mine = np.sort(allowed[rank[eng.stage_job[allowed]] == 0])
                is_sjf_stage[local[mine.min()]] = 1.0
                is_cp_stage[local[mine[np.argmax(self.path_share[mine])]]] = 1.0  # SJF-CP's stage
            jl = job_left[sj]
            all_left = max(float(job_left[active].sum()), 1e-9)
            x = np.column_stack([
                st[:, 0], st[:, 1], obs.pending[stages] / tot1, obs.running[stages] / tot1,
                obs.finished[stages] / tot1, np.minimum(st[:, 2], 1.0), np.minimum(st[:, 3], 1.0),
                np.minimum(rank[sj] / max(self.net.cfg.candidates, 1), 1.0), (rank[sj] == 0).astype(float),
                is_sjf_stage, is_cp_stage,
                np.clip(np.log(np.maximum(jl, 1e-9) / max(best, 1e-9)) / 4.0, 0.0, 2.0),
                jl / all_left, left[stages] / np.maximum(jl, 1e-9), self.path_share[stages],
                runnable[stages].astype(np.float64), np.ones(len(stages))])
        x = x.astype(np.float32)
        keep = np.isin(self.edge_job, active) if len(self.edges) else np.zeros(0, dtype=bool)
        ei = local[self.edges[keep]].T if keep.any() else np.zeros((2, 0), dtype=np.int64)
        jl_ = np.full(len(obs.done), -1, dtype=np.int64)
        jl_[active] = np.arange(len(active))
        return stages, x, ei, jl_[sj], len(active)

    def act(self, obs: DagObservation, mask: np.ndarray) -> DagAction:
        """Stage, container type and count from the three heads (only what ``mask`` allows)."""
        ctx = torch.enable_grad() if self.record is not None else torch.no_grad()
        with ctx:
            return self._act(obs, mask)

    def log_prob(self, obs: DagObservation, mask: np.ndarray, action: DagAction) -> torch.Tensor:
        """Log-probability (with gradient) that the heads take ``action`` (a teacher's, for imitation).

        The count maps to the smallest level whose count is at least the action's; the probability
        sums over every level that launches that count.
        """
        box: list[Step] = []
        saved, self.record = self.record, box
        try:
            with torch.enable_grad():
                self._act(obs, mask, forced=action)
        finally:
            self.record = saved
        return box[0].logp

    def _pick(self, logits: torch.Tensor, forced: int | None = None
              ) -> tuple[int, torch.Tensor, torch.Tensor]:
        logp = torch.log_softmax(logits, 0)
        if forced is not None:
            i = forced
        elif self.sample:
            i = int(torch.multinomial(logp.exp(), 1, generator=self.generator).item())
        else:
            i = int(torch.argmax(logp).item())
        ent = -(logp.exp() * logp).sum()
        return i, logp[i], ent

    def _act(self, obs: DagObservation, mask: np.ndarray, forced: DagAction | None = None) -> DagAction:
        rows = np.flatnonzero(mask.any(axis=1))
        cand = obs.runnable[rows]
        stages, x, ei, job, nj = self.features(obs, cand)
        h, dag, glob = self.net.embed(torch.from_numpy(x), torch.from_numpy(np.ascontiguousarray(ei)),
                                      torch.from_numpy(job), nj)
        k_jobs = self.net.cfg.candidates
        if k_jobs > 0 and len(cand) > 1:  # the stage head sees the k shortest jobs' stages only
            _, rank = self.sjf_order(obs, cand)
            keep = rank[self.engine.stage_job[cand]] < k_jobs
            if forced is not None:  # a teacher's stage outside the set (not SJF's): let it in
                keep |= cand == forced.stage
            rows, cand = rows[keep], cand[keep]
        pos = np.searchsorted(stages, cand)  # stages are ascending per job, jobs ascending
        idx = torch.from_numpy(pos)
        hc = h[idx]
        sfeat = torch.cat([hc, dag[torch.from_numpy(job[pos])], glob.expand(len(pos), -1)], 1)
        fk = None if forced is None else int(np.flatnonzero(cand == forced.stage)[0])
        k, lp1, e1 = self._pick(self.net.stage_head(sfeat).squeeze(1), fk)
        s = int(cand[k])
        allowed = np.flatnonzero(mask[rows[k]])
        free = obs.free[allowed]
        cols = [self.type_shape[allowed], free / self.type_count[allowed], np.log1p(free) / 8.0]
        if self.net.cfg.slack:  # how much of the type the task leaves idle (0: an exact fit)
            cols.append(self.type_shape[allowed] - self.engine.stage_demand[s] / self.scale)
        tf = np.column_stack(cols).astype(np.float32)
        tfeat = torch.cat([hc[k].expand(len(allowed), -1), glob.expand(len(allowed), -1),
                           torch.from_numpy(tf)], 1)
        fj = None if forced is None else int(np.flatnonzero(allowed == forced.ctype)[0])
        j, lp2, e2 = self._pick(self.net.type_head(tfeat).squeeze(1), fj)
        q = int(allowed[j])
        most = int(min(obs.pending[s], obs.free[q]))
        levels = self.net.cfg.levels
        counts = [max(1, min(most, math.ceil(most * (lv + 1) / levels))) for lv in range(levels)]
        fc = None if forced is None else next(
            (lv for lv in range(levels) if counts[lv] >= forced.count), levels - 1)
        count_logits = self.net.count_head(tfeat[j])
        c, lp3, e3 = self._pick(count_logits, fc)
        if forced is not None:  # every level that launches this count: the action's probability
            same = torch.tensor([counts[lv] == counts[c] for lv in range(levels)])
            lp3 = torch.logsumexp(torch.log_softmax(count_logits, 0)[same], 0)
        count = counts[c]
        if self.record is not None:
            self.record.append(Step(lp1 + lp2 + lp3, e1 + e2 + e3, float(obs.time)))
        return DagAction(s, q, count)


def new_net(cfg: Config, seed: int = 0) -> JobFusionNet:
    """A freshly initialised network, seeded (what :func:`train` starts from without ``net``)."""
    torch.manual_seed(seed)
    return JobFusionNet(cfg)


def set_threads(n: int = 1) -> None:
    """Torch intra-op threads (the networks are tiny: one thread is fastest on a shared machine)."""
    torch.set_num_threads(n)


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


CONFIG_SPECS = JOBFUSION_CONFIG
"""The allowed range of every :class:`Config` field in an agent file (:mod:`policies.agents.limits`)."""


def file_config(data: dict[str, Any]) -> Config:
    """The checked :class:`Config` of a loaded file (defaults of older files for missing fields).

    Raises:
        FileFieldError: a field out of range.
    """
    return Config(**{"slack": False,  # files from before the slack features
                     "features": 1, "candidates": 0,  # files from before the scale-free features
                     **jobfusion_fields(data)})


def check_file(data: dict[str, Any]) -> None:
    """Check a loaded ``jobfusion`` file before anything is built (:data:`policies.agents.files.CHECKS`).

    The config in range, ``weights`` (and a checkpoint's ``optim``) of the shapes it gives, the
    training state (``train``) and ``info.name`` in range.
    """
    cfg = file_config(data)
    shapes, params = meta_shapes(lambda: JobFusionNet(cfg))
    check_tensors("weights", data.get("weights"), shapes)
    if "optim" in data and data["optim"] is not None:
        check_adam("optim", data["optim"], params)
    if "info" in data:
        check_name(section(data, "info"))
    if "train" in data:
        st = section(data, "train")
        check_fields("train", st, {"iteration": Num(0, 10**9, integer=True), "seconds": Num(0.0, 1e12)},
                     ignore=("curve", "losses"))
        for k in ("curve", "losses"):
            if k in st:
                check_numbers(f"train.{k}", st[k], Num(-1e15, 1e15))


def _net_from(data: dict[str, Any]) -> JobFusionNet:
    cfg = file_config(data)
    net = JobFusionNet(cfg)
    net.load_state_dict(data["weights"])
    net.eval()
    return net


def load_checkpoint(path: str | Path) -> tuple[JobFusionNet, TrainState, dict[str, Any] | None]:
    """``(net, training state, optimizer state)`` of a file (weights-only read) to resume from."""
    from packing.errors import input_error
    from policies.agents.files import read_agent_file

    data = read_agent_file(path)
    if data["kind"] != "jobfusion":
        raise input_error(str(path), "kind", f"a {data['kind']!r} agent, not a jobfusion one")
    try:
        net = _net_from(data)
        st = TrainState(**data.get("train", {}))
    except (KeyError, TypeError, ValueError, RuntimeError) as e:
        raise input_error(str(path), "jobfusion", f"bad agent file: {e}") from None
    return net, st, data.get("optim")


def from_checkpoint(data: dict[str, Any]) -> JobFusionPolicy:
    """The greedy policy of a loaded ``jobfusion`` file (for :func:`policies.agents.files.load_agent`).

    Sets torch to one intra-op thread: the network is tiny, and on a busy 2-core machine the default
    thread pool made one decision ~50x slower (173 ms instead of ~3 ms in ``vbp jobs compare``).
    """
    set_threads(1)
    net = _net_from(data)
    default = "decima-gcn" if net.cfg.partition == "single" else "jobfusion"
    info = data.get("info")
    name = info.get("name", default) if isinstance(info, dict) else default
    return JobFusionPolicy(net, printable(str(name)))


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
    from packing.atomic import save_figure

    try:
        save_figure(fig, path)
    finally:
        plt.close(fig)


__all__ = ["Config", "Env", "JobFusionNet", "JobFusionPolicy", "TrainState", "check_file", "distil",
           "file_config", "from_checkpoint",
           "load_checkpoint", "plot_curve", "returns_to_go", "save_checkpoint",
           "set_threads", "train"]
