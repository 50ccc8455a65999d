"""DAG bounds benchmark: the critical-path and capacity bounds on mean JCT against the best DAG policy.

Samples of ``--jobs`` jobs are drawn as ``vbp jobs compare`` draws them (:func:`vbp.jobfusion.sample_jobs`,
seeded Poisson arrivals every ``--interarrival`` s), from all jobs of DATA (``--pool all``) or from
the held-out half of ``benchmarks/bench_jobfusion_agent.py`` (``--pool held``: the seeded permutation
12345, second half). Each sample runs the policies through :func:`vbp.jobfusion.compare_dag` (nested
carving, large share 0.6, Q = 4) and prints both bounds, the best policy and ``best / bound``; then
the means over the samples, how many are within 25 % of the capacity bound and each policy's sum of
mean JCT over the samples. ``--policies`` takes what ``vbp jobs compare --policies`` takes, trained
agent files too. A sample whose carving fails is reported and left out. Seeds ``--first-seed`` to
``--first-seed + --seeds - 1``.
With ``--bound-only`` it times the capacity bound alone (CPU seconds) on each sample's carving for SJF's
partition and runs no policy. ``--jobs 0`` takes every job of DATA.

    python benchmarks/bench_dag_bounds.py ../shared/data/alibaba-v2018-batch-dag \
        --hosts 32c64g:4,92c288g:2 --pool held --seeds 3
    python benchmarks/bench_dag_bounds.py ../shared/data/alibaba-v2018-batch-dag --jobs 1000 --seeds 1 \
        --bound-only
    python benchmarks/bench_dag_bounds.py ../shared/data/alibaba-v2018-batch-dag --pool held --seeds 8 \
        --policies sjf,sjf-cp,jf.pt        # an agent from `vbp train gcn DATA --out jf.pt`
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from packing.dag.bounds import capacity_bound
from packing.dag.engine import NO_OVERHEADS, Overheads
from packing.dag.loader import load_dag_folder
from packing.dag.model import Workload
from packing.errors import InputError
from policies.dag import make_dag_policy, parse_dag_policies
from vbp.jobfusion import carve_sample, compare_dag, parse_hosts, sample_jobs


def main() -> None:
    """Run the benchmark (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data")
    ap.add_argument("--jobs", type=int, default=100)
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--first-seed", type=int, default=0, help="Seeds first-seed .. first-seed + seeds - 1.")
    ap.add_argument("--hosts", default="32c64g:8,92c288g:8")
    ap.add_argument("--pool", choices=["all", "held"], default="all")
    ap.add_argument("--interarrival", type=float, default=10.0)
    ap.add_argument("--policies", default="sjf,sjf-cp,fifo,cpf,sjf-reserve,sjf-headroom",
                    help="DAG baselines or trained agent files (MODEL.pt from `vbp train gcn DATA`, a row "
                         "named by the file's stem), as `vbp jobs compare --policies` takes them.")
    ap.add_argument("--no-overheads", action="store_true")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--bound-only", action="store_true", help="Time the capacity bound alone; no policy.")
    a = ap.parse_args()
    w = load_dag_folder(a.data)
    if a.pool == "held":
        perm = np.random.default_rng(12345).permutation(w.n_jobs)
        w = w.subset(sorted(perm[w.n_jobs // 2:].tolist()), "held-out-pool")
    oh = NO_OVERHEADS if a.no_overheads else Overheads()
    if a.bound_only:
        bound_times(a, w, oh)
        return
    rows = []
    for s in range(a.first_seed, a.first_seed + a.seeds):
        sample = sample_jobs(w, a.jobs or None, s, a.interarrival)
        labels, pols = parse_dag_policies(a.policies, s)
        t = time.perf_counter()
        try:
            res = compare_dag(sample, pols, q=4, hosts=parse_hosts(a.hosts), overheads=oh, seed=s,
                              carving="nested", large_share=0.6)
        except InputError as e:  # the carving of this sample failed: say so, go on with the others
            print(f"seed {s}: no result ({e})")
            continue
        secs = time.perf_counter() - t
        for p, label in zip(res["policies"], labels, strict=True):
            p["name"] = label  # a policy's name, a model file's stem, or NAME= (as vbp jobs compare)
        b = res["bounds"]
        best = min(res["policies"], key=lambda p: p["mean_jct"])
        row = {"seed": s, "jobs": sample.n_jobs, "tasks": sample.n_tasks, "cp": b["critical_path_mean_jct"],
               "capacity": b["capacity_mean_jct"], "best": best["mean_jct"], "best_policy": best["name"],
               "ratio_cp": best["mean_jct"] / b["critical_path_mean_jct"],
               "ratio_capacity": best["mean_jct"] / b["capacity_mean_jct"], "parts": b["capacity_parts"],
               "mean_jct": {p["name"]: p["mean_jct"] for p in res["policies"]},
               "seconds": round(secs, 1)}
        rows.append(row)
        print(f"seed {s}: {sample.n_tasks} tasks; critical path {row['cp']:.1f} s, capacity "
              f"{row['capacity']:.1f} s, best {row['best_policy']} {row['best']:.1f} s: best / capacity "
              f"bound {row['ratio_capacity']:.3f} (/ critical path {row['ratio_cp']:.3f}); {secs:.1f} s")
    means = {k: float(np.mean([r[k] for r in rows])) for k in ("cp", "capacity", "best")}
    print(f"means over the samples: critical-path bound {means['cp']:.1f} s, capacity bound "
          f"{means['capacity']:.1f} s, best policy {means['best']:.1f} s")
    if rows:
        print("sums of mean JCT over the samples: " + ", ".join(
            f"{n} {sum(r['mean_jct'][n] for r in rows):.1f} s" for n in rows[0]["mean_jct"]))
    print(f"mean best / capacity bound {np.mean([r['ratio_capacity'] for r in rows]):.3f}, "
          f"best / critical path {np.mean([r['ratio_cp'] for r in rows]):.3f}; best within 25 % of the "
          f"capacity bound on {sum(r['ratio_capacity'] <= 1.25 for r in rows)} of {len(rows)} samples")
    if a.json:
        print(json.dumps(rows, indent=2))


def bound_times(a: argparse.Namespace, w: Workload, oh: Overheads) -> None:
    """``--bound-only``: the capacity bound and its CPU time per sample, and the mean time."""
    secs = []
    for s in range(a.first_seed, a.first_seed + a.seeds):
        sample = sample_jobs(w, a.jobs or None, s, a.interarrival)
        method = make_dag_policy("sjf", s).partition
        cluster = carve_sample(sample, method, q=4, hosts=parse_hosts(a.hosts), seed=s, carving="nested",
                               large_share=0.6).cluster
        t = time.process_time()
        cb = capacity_bound(sample, cluster, oh, seed=s)
        secs.append(time.process_time() - t)
        parts = ", ".join(f"{k} {v:.1f}" for k, v in cb.parts.items())
        print(f"seed {s}: {sample.n_jobs} jobs, {sample.n_tasks} tasks; capacity bound {cb.mean_jct:.1f} s "
              f"({parts}); {secs[-1]:.2f} s CPU")
    print(f"mean CPU time of the capacity bound {np.mean(secs):.2f} s over {len(secs)} samples")


if __name__ == "__main__":
    main()
