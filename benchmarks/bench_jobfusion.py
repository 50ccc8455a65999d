"""JobFusion benchmark: DAG policies on seeded samples of real Alibaba v2018 DAG jobs, and the Q sweep.

Held-out jobs: each seed draws its own sample of ``--jobs`` jobs from DATA (no training happens in
this script; a learned agent must be trained on other jobs). Arrivals are a seeded Poisson stream
(``--interarrival``); the cluster is ``--hosts`` with online containers holding ``--online-share`` of
the CPU when ``--online`` is given. Prints mean over seeds of mean JCT, excess over the critical-path
bound, makespan, utilisation, idle share and decision latency per policy; with ``--sweep`` also the
partition sweep (idle share of carving and its proven bound for Q = 1..8; the sweep always splits
the containers by the types' task counts, so ``--carving`` does not change it). The Q types are
carved ``--carving nested --large-share 0.6`` by default (see :func:`solvers.dag.carving.carve_cluster`).

    python benchmarks/bench_jobfusion.py ../shared/data/alibaba-v2018-batch-dag \
        --online ../shared/data/alibaba-v2018/derived_from_full_container_meta --seeds 3 --sweep
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from packing.dag.carving import parse_hosts, sample_jobs
from packing.dag.loader import load_dag_folder
from packing.dag.online import load_online_shapes
from policies.dag import make_dag_policy
from solvers.dag.carving import carve_sweep
from vbp.jobfusion import compare_dag

POLICIES = ("fifo", "sjf", "cpf", "random", "cpf-single")
"""The baselines of the table in docs/jobfusion-gcn.md."""


def main() -> None:
    """Run the benchmark (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data")
    ap.add_argument("--online", default=None)
    ap.add_argument("--online-share", type=float, default=0.3)
    ap.add_argument("--jobs", type=int, default=200)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--q", type=int, default=4)
    ap.add_argument("--hosts", default="32c64g:8,92c288g:8")
    ap.add_argument("--interarrival", type=float, default=10.0)
    ap.add_argument("--surges", type=int, default=0)
    ap.add_argument("--preempt", action="store_true")
    ap.add_argument("--carving", choices=["proportional", "nested"], default="nested")
    ap.add_argument("--large-share", type=float, default=0.6)
    ap.add_argument("--sweep", action="store_true")
    ap.add_argument("--time-limit", type=float, default=30.0)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    t = time.perf_counter()
    w = load_dag_folder(a.data)
    on = load_online_shapes(a.online) if a.online else None
    secs = time.perf_counter() - t
    print(f"loaded {w.n_jobs} jobs, {w.n_stages} stages, {w.n_tasks} tasks in {secs:.1f} s")
    acc: dict[str, list[dict[str, float]]] = {}
    bounds = []
    for s in range(a.seeds):
        sample = sample_jobs(w, a.jobs, 1000 + s, a.interarrival)
        t = time.perf_counter()
        res = compare_dag(sample, [make_dag_policy(n, s) for n in POLICIES], q=a.q,
                          hosts=parse_hosts(a.hosts), online=on, online_share=a.online_share if on is not None
                          else 0.0, surges=a.surges, preempt=a.preempt, seed=s,
                          carving=a.carving, large_share=a.large_share)
        bounds.append(res["bounds"])
        print(f"seed {s}: {sample.n_jobs} jobs, {sample.n_tasks} tasks, {time.perf_counter() - t:.1f} s, "
              f"clusters {json.dumps(res['clusters'])}")
        for p in res["policies"]:
            acc.setdefault(p["name"], []).append(p)
    keys = ["mean_jct", "jct_excess", "makespan", "makespan_excess", "mean_utilisation", "idle_share",
            "decision_ms"]
    cp = np.mean([b["critical_path_mean_jct"] for b in bounds])
    print(f"bounds (mean over seeds): mean JCT >= {cp:.1f} s, "
          f"makespan >= {np.mean([b['makespan'] for b in bounds]):.1f} s")
    print(f"{'policy':<12} " + " ".join(f"{k:>12}" for k in keys))
    summary = {}
    for name, rows in acc.items():
        m = {k: float(np.mean([r[k] for r in rows])) for k in keys}
        summary[name] = m
        print(f"{name:<12} " + " ".join(f"{m[k]:>12.3f}" for k in keys))
    if a.sweep:
        t = time.perf_counter()
        rows2 = carve_sweep(w, list(range(1, 9)), ["constrained", "single", "plain"], time_limit=a.time_limit)
        print(f"partition sweep ({time.perf_counter() - t:.0f} s): method Q types idle bound gap status")
        for r in rows2:
            print(f"  {r.method:<12} {r.q} {r.n_types} {r.idle_share:.4f} {r.idle_bound:.4f} "
                  f"{(r.gap or 0):.3%} {r.status} {r.hosts}")
    if a.json:
        print(json.dumps(summary))


if __name__ == "__main__":
    main()
