"""JobFusion GCN agent benchmark: train on one half of the DAG jobs, measure on held-out jobs of the other.

The jobs of DATA are split once (seeded permutation) into a training pool and a held-out pool. The
JobFusion agent (constrained partition, Q types) and the Decima-like agent (the same agent on one
container type) are trained on ``--samples`` seeded samples of ``--jobs`` jobs from the training pool;
then every policy runs through :func:`vbp.jobfusion.compare_dag` on ``--seeds`` samples of the
held-out pool (other seeds, other jobs): mean JCT, excess over the critical-path bound, decision latency.

    python benchmarks/bench_jobfusion_agent.py DATA --episodes 80 --jobs 10  # DATA: the batch-dag folder
    python benchmarks/bench_jobfusion_agent.py DATA --jobs 10 --seeds 10 --imitate sjf \
        --episodes 120 --lr 1e-3   # warm start by imitating SJF, then REINFORCE
    python benchmarks/bench_jobfusion_agent.py DATA --jobs 10 --seeds 10 --imitate sjf-cp \
        --imitate-epochs 20 --episodes 0 --large-share 0.6 --seed S  # README table, S = 0, 1, 2
    python benchmarks/bench_jobfusion_agent.py DATA --jobs 10 --seeds 10 --models bench-jobfusion  # eval only

The Q types are carved ``--carving nested`` by default with ``--large-share auto``: the share of the
large containers with the least SJF mean JCT on ``--tune-samples`` samples of the TRAINING pool (seeds
5000+, not the agents' training samples nor the held-out ones); ``--carving proportional`` is the
proportional carving (counts in proportion to the types' task counts).

The agents use the scale-free features and the stage head over the ``--candidates`` shortest jobs'
stages (0: every runnable stage); ``--long-samples`` adds long training-pool samples to the training
set and ``--max-labels`` caps the labelled decisions per imitation episode on them.

``--expert rollout`` (after ``--imitate sjf``): expert iteration -- ``--expert-epochs`` DAgger passes
on the training samples labelled by :class:`policies.dag.RolloutExpert` (SJF rollouts of the jobs in
the system from a copy of the engine); ``--expert-row`` also measures the expert itself held out.
``--expert-base sjf-cp --expert-within`` starts the expert from SJF-CP and also tries the other stages
of its job; ``--expert-max-labels M`` labels about M decisions per expert episode (SJF-CP/SJF drives the
rest, the agent a share ``--expert-dagger``); ``--expert-passes P`` aggregates the labels of every round
(:func:`policies.agents.jobfusion_train.distil`) and fits them P times per round.

``--validation N`` scores on N samples of the TRAINING pool (seeds 7000+, not the training samples)
instead of the held-out ones: choose configurations there, then score the held-out samples once, e.g.
with ``--models OUT --no-decima`` (``--no-decima``: the JobFusion agent only)::

    python benchmarks/bench_jobfusion_agent.py DATA --jobs 10 --imitate sjf-cp --imitate-epochs 20 \
        --episodes 0 --large-share 0.6 --no-decima --validation 12 --expert rollout --expert-base sjf-cp \
        --expert-within --expert-horizon 0 --expert-rollouts 3 --expert-max-labels 100 --expert-epochs 3 \
        --expert-passes 4 --long-samples 2 --out OUT
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from packing.dag.carving import parse_hosts, sample_jobs
from packing.dag.loader import load_dag_folder
from policies.dag import RolloutExpert, ShortestJobFirst, SjfCriticalPath, make_dag_policy
from vbp.jobfusion import build_envs, compare_dag, tune_large_share


def main() -> None:
    """Run the benchmark (see the module docstring)."""
    from policies.agents import jobfusion as jf
    from policies.agents import jobfusion_train as jft

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data")
    ap.add_argument("--jobs", type=int, default=15)
    ap.add_argument("--samples", type=int, default=8)
    ap.add_argument("--episodes", type=int, default=160)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--q", type=int, default=4)
    ap.add_argument("--hosts", default="32c64g:4,92c288g:2")
    ap.add_argument("--interarrival", type=float, default=10.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--out", default="bench-jobfusion")
    ap.add_argument("--models", default=None,
                    help="Folder with jobfusion-gcn.pt and decima-gcn.pt from an earlier run: skip training.")
    ap.add_argument("--imitate", default=None, help="Warm start: imitate this DAG policy (e.g. sjf) first.")
    ap.add_argument("--imitate-epochs", type=int, default=10)
    ap.add_argument("--dagger", type=float, default=0.0,
                    help="DAgger: share of decisions the student drives after the first imitation epoch.")
    ap.add_argument("--expert", choices=["rollout"], default=None,
                    help="After --imitate: DAgger epochs labelled by the rollout expert "
                         "(JobFusion agent only).")
    ap.add_argument("--expert-epochs", type=int, default=3)
    ap.add_argument("--expert-dagger", type=float, default=0.5)
    ap.add_argument("--expert-horizon", type=int, default=40,
                    help="SJF decisions per rollout (0: to the end).")
    ap.add_argument("--expert-rollouts", type=int, default=1, help="Rollouts per candidate (averaged).")
    ap.add_argument("--expert-base", choices=["sjf", "sjf-cp"], default="sjf",
                    help="Rollout policy and first candidate of the expert.")
    ap.add_argument("--expert-within", action="store_true",
                    help="The expert also tries the other stages of the base policy's job.")
    ap.add_argument("--expert-max-labels", type=int, default=None,
                    help="--expert only: label about this many decisions per episode (others: the base "
                         "policy's or, with --expert-dagger, the agent's); the imitation keeps every label.")
    ap.add_argument("--expert-passes", type=int, default=0,
                    help="--expert with dataset aggregation (jobfusion_train.distil): --expert-epochs "
                         "labelling rounds, each followed by this many passes over every label so far "
                         "(0: one Adam step per episode, jobfusion_train.imitate).")
    ap.add_argument("--expert-lr", type=float, default=1e-3)
    ap.add_argument("--validation", type=int, default=0,
                    help="Score on this many VALIDATION samples of the training pool (seeds 7000+) instead "
                         "of the held-out ones (choose configurations here, not on the held-out samples).")
    ap.add_argument("--no-decima", action="store_true", help="Train and score the JobFusion agent only.")
    ap.add_argument("--expert-row", action="store_true",
                    help="Also run the rollout expert on the held-out samples.")
    ap.add_argument("--expert-row-horizon", type=int, default=40,
                    help="Horizon of the held-out expert row (full rollouts take hours on the long samples).")
    ap.add_argument("--expert-row-rollouts", type=int, default=1,
                    help="Rollouts per candidate of the held-out expert row (averaged).")
    ap.add_argument("--candidates", type=int, default=3,
                    help="Stage head over the stages of this many shortest jobs (0: all, as in the paper).")
    ap.add_argument("--features", type=int, choices=[1, 2], default=2,
                    help="Node features: 2 scale-free, 1 the raw log-scaled counts of the paper.")
    ap.add_argument("--long-samples", type=int, default=0,
                    help="Also train on this many long TRAINING-pool samples (most work of 10x draws).")
    ap.add_argument("--max-labels", type=int, default=None,
                    help="Label about this many decisions per imitation episode at most (others: SJF's).")
    ap.add_argument("--carving", choices=["proportional", "nested"], default="nested")
    ap.add_argument("--large-share", default="auto",
                    help="Nested carving: share of the large containers, or 'auto' (least SJF mean JCT "
                         "on --tune-samples TRAINING samples; never the held-out ones).")
    ap.add_argument("--tune-samples", type=int, default=40)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    jf.set_threads(1)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    w = load_dag_folder(a.data)
    perm = np.random.default_rng(12345).permutation(w.n_jobs)
    train_pool = w.subset(sorted(perm[: w.n_jobs // 2].tolist()), "train-pool")
    held_pool = w.subset(sorted(perm[w.n_jobs // 2:].tolist()), "held-out-pool")
    hosts = parse_hosts(a.hosts)
    tuning: dict[float, float] = {}
    t = time.perf_counter()
    if a.carving != "nested":
        share = 1.0
    elif a.large_share == "auto":  # training pool, seeds disjoint from the agents' training samples
        tune = [sample_jobs(train_pool, a.jobs, 5000 + i, a.interarrival) for i in range(a.tune_samples)]
        share, tuning = tune_large_share(tune, hosts, q=a.q, seed=a.seed)
    else:
        share = float(a.large_share)
    tune_seconds = time.perf_counter() - t
    print(f"carving {a.carving}, large share {share:g}"
          + (f" (SJF mean JCT on {a.tune_samples} training samples: "
             + ", ".join(f"{f:g}: {m:.0f} s" for f, m in tuning.items()) + f"; {tune_seconds:.0f} s)"
             if tuning else ""))
    agents = {}
    timing = {}
    methods = (("constrained", "jobfusion-gcn"),) if a.no_decima else (("constrained", "jobfusion-gcn"),
                                                                        ("single", "decima-gcn"))
    for method, label in methods:
        if a.models:
            net, st, _ = jft.load_checkpoint(Path(a.models) / f"{label}.pt")
            timing[label] = st.seconds
            agents[label] = jf.JobFusionPolicy(net, label)
            continue
        envs = build_envs(train_pool, n_envs=a.samples, jobs=a.jobs, seed=a.seed + 1, partition_method=method,
                          q=a.q, hosts=hosts, interarrival=a.interarrival, carving=a.carving,
                          large_share=share, long_samples=a.long_samples)
        cfg = jf.Config(batch=a.batch, partition=method, lr=a.lr, candidates=a.candidates,
                        features=a.features)
        driver = ShortestJobFirst(method) if a.max_labels is not None else None
        t = time.perf_counter()
        net = jf.new_net(cfg, a.seed)
        if a.imitate:
            teacher = make_dag_policy(a.imitate, a.seed)
            teacher.partition = method
            nll = jft.imitate(envs, teacher, a.imitate_epochs, net=net, seed=a.seed, lr=3e-3, progress=True,
                              dagger=a.dagger, max_labels=a.max_labels, driver=driver)
            print(f"{label}: imitating {a.imitate}, NLL per decision {nll[0]:.3f} -> {nll[-1]:.3f}")
        if a.expert and method == "constrained":
            ex = RolloutExpert(method, horizon=a.expert_horizon or None, rollouts=a.expert_rollouts,
                               seed=a.seed, base=a.expert_base, within=a.expert_within)
            ex_labels = a.expert_max_labels if a.expert_max_labels is not None else a.max_labels
            ex_driver = None if ex_labels is None else (
                SjfCriticalPath(method) if a.expert_base == "sjf-cp" else ShortestJobFirst(method))
            if a.expert_passes > 0:
                nll = jft.distil(envs, ex, a.expert_epochs, net=net, seed=a.seed + 1, lr=a.expert_lr,
                                 progress=True, dagger=a.expert_dagger, max_labels=ex_labels,
                                 driver=ex_driver, passes=a.expert_passes)
            else:
                nll = jft.imitate(envs, ex, a.expert_epochs, net=net, seed=a.seed + 1, lr=a.expert_lr,
                                  progress=True, dagger=a.expert_dagger, max_labels=ex_labels,
                                  driver=ex_driver)
            print(f"{label}: distilling the rollout expert ({ex.stats}), NLL {nll[0]:.3f} -> {nll[-1]:.3f}")
        net, st, opt = jft.train(envs, max(a.episodes // a.batch, 0), seed=a.seed, net=net, progress=True)
        timing[label] = time.perf_counter() - t
        jft.save_checkpoint(out / f"{label}.pt", net, st, opt, name=label)
        jft.plot_curve(st, out / f"{label}-curve.png", f"{label} training (sampled mean JCT)")
        agents[label] = jf.JobFusionPolicy(net, label)
    rows: dict[str, list[dict]] = {}
    bounds = []
    eval_pool, first = (train_pool, 7000) if a.validation else (held_pool, 0)
    for s in range(first, first + (a.validation or a.seeds)):
        sample = sample_jobs(eval_pool, a.jobs, s, a.interarrival)
        one = ShortestJobFirst("single")
        one.name = "sjf-1type"  # SJF on the Decima-like agent's cluster (one container type)
        heur = [make_dag_policy(n, s) for n in ("sjf", "sjf-cp", "fifo", "cpf", "cpf-single")]
        one_cp = SjfCriticalPath("single")
        one_cp.name = "sjf-cp-1type"
        pols = [*agents.values(), *heur, one, one_cp]
        if a.expert_row:
            pols.append(RolloutExpert(horizon=a.expert_row_horizon or None, seed=s, base=a.expert_base,
                                      within=a.expert_within, rollouts=a.expert_row_rollouts))
        res = compare_dag(sample, pols, q=a.q, hosts=hosts, seed=s, carving=a.carving, large_share=share)
        bounds.append(res["bounds"]["critical_path_mean_jct"])
        for p in res["policies"]:
            rows.setdefault(p["name"], []).append(p)
    summary = {
        "carving": a.carving, "large_share": share, "tuning": tuning, "tune_seconds": tune_seconds,
        "imitate": a.imitate, "imitate_epochs": a.imitate_epochs, "dagger": a.dagger, "expert": a.expert,
        "expert_epochs": a.expert_epochs, "expert_dagger": a.expert_dagger,
        "expert_horizon": a.expert_horizon, "expert_rollouts": a.expert_rollouts,
        "expert_row_horizon": a.expert_row_horizon, "expert_row_rollouts": a.expert_row_rollouts,
        "expert_base": a.expert_base,
        "expert_within": a.expert_within, "validation": a.validation,
        "expert_max_labels": a.expert_max_labels, "expert_passes": a.expert_passes,
        "expert_lr": a.expert_lr,
        "candidates": a.candidates, "long_samples": a.long_samples, "max_labels": a.max_labels,
        "train_seconds": timing, "per_seed_bound": [round(b, 1) for b in bounds],
        "episodes": a.episodes, "jobs": a.jobs, "samples": a.samples,
        "hosts": a.hosts, "seeds": a.seeds, "critical_path_mean_jct": float(np.mean(bounds)),
        "policies": {n: {"mean_jct": float(np.mean([r["mean_jct"] for r in rs])),
                         "jct_excess": float(np.mean([r["jct_excess"] for r in rs])),
                         "decision_ms": float(np.mean([r["decision_ms"] for r in rs])),
                         "decision_ms_max_seed": float(np.max([r["decision_ms"] for r in rs])),
                         "per_seed_jct": [round(r["mean_jct"], 1) for r in rs]} for n, rs in rows.items()}}
    if a.json:
        print(json.dumps(summary, indent=2))
        return
    how = f"models from {a.models}" if a.models else f"trained {a.episodes} episodes each"
    where = (f"validation (training pool, seeds 7000+): {a.validation}" if a.validation
             else f"held-out: {a.seeds}")
    print(f"{where} samples of {a.jobs} jobs on {a.hosts}; {how} (training "
          + ", ".join(f"{k} {v:.0f} s" for k, v in timing.items()) + ")")
    print(f"critical-path bound (mean JCT): {summary['critical_path_mean_jct']:.1f} s")
    print(f"{'policy':<14} {'mean JCT':>9} {'excess':>8} {'ms/dec':>7}  per seed")
    for n, r in summary["policies"].items():
        print(f"{n:<14} {r['mean_jct']:>9.1f} {r['jct_excess']:>7.1%} {r['decision_ms']:>7.2f}  "
              f"{r['per_seed_jct']}")
    (out / "summary.json").write_text(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
