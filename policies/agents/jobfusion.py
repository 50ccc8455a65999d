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
    ~6,500 tasks) leaves SJF's stage in 2,793 of 4,632 decisions of a held-out sample of 80,245
    tasks (its task-count feature 1.41 against at most 0.89 in its training samples) and takes
    7,757 s mean JCT against SJF's 4,033 (``docs/jobfusion-gcn.md``).

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

Files go through :mod:`policies.agents.files` (kind ``"jobfusion"``, weights only). This module
holds what acting needs (features, network, policy, file checks); :func:`train`, :func:`imitate`,
:func:`distil` and the training checkpoints are in :mod:`policies.agents.jobfusion_train`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn
from torch_geometric.nn import MessagePassing

from packing.dag.engine import DagAction, DagEngine, DagObservation
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


def net_from(data: dict[str, Any]) -> JobFusionNet:
    """The network of a checked ``"jobfusion"`` file dict, in evaluation mode."""
    cfg = file_config(data)
    net = JobFusionNet(cfg)
    net.load_state_dict(data["weights"])
    net.eval()
    return net


def from_checkpoint(data: dict[str, Any]) -> JobFusionPolicy:
    """The greedy policy of a loaded ``jobfusion`` file (for :func:`policies.agents.files.load_agent`).

    Sets torch to one intra-op thread: the network is tiny, and on a busy 2-core machine the default
    thread pool made one decision ~50x slower (173 ms instead of ~3 ms in ``vbp jobs compare``).
    """
    set_threads(1)
    net = net_from(data)
    default = "decima-gcn" if net.cfg.partition == "single" else "jobfusion"
    info = data.get("info")
    name = info.get("name", default) if isinstance(info, dict) else default
    return JobFusionPolicy(net, printable(str(name)))


__all__ = ["Config", "JobFusionNet", "JobFusionPolicy", "check_file", "file_config", "from_checkpoint",
           "net_from", "set_threads"]
