"""Clairvoyant schedule search on one DAG sample: how low can a schedule's mean JCT go?

Not a policy: every candidate is a whole seeded episode of the sample, so the search knows every
arrival and every draw. It tells, on one sample of ``benchmarks/bench_dag_bounds.py`` (same drawing,
carving and seed), how much of the gap between the best policy and the capacity bound a schedule can
close. A candidate is SJF-headroom (or ``--policy``) whose key of each job is multiplied by a per-job
factor; from all factors 1 (the policy itself), each step changes one or two factors at random (times
0, 0.1, 0.3, 3, 10 or 100; a factor of 0 stays 0: that job keeps the first claim) and keeps the change
when the mean JCT drops (:func:`policies.dag_search.search_schedule`).
Seeded (``--search-seed``) and counted in episodes (``--evaluations``), so a run gives the same result
on every machine. Prints the policy's mean JCT, every improvement and the final ``mean JCT / capacity
bound``; every episode goes through the engine, whose launches the engine checks.

    python benchmarks/search_dag_schedule.py ../shared/data/alibaba-v2018-batch-dag --seed 1005 \
        --evaluations 613
"""

from __future__ import annotations

import argparse

from packing.dag.bounds import capacity_bound
from packing.dag.engine import Overheads
from packing.dag.loader import load_dag_folder
from policies.dag_search import SEARCH_BASES, search_base, search_schedule
from vbp.jobfusion import carve_sample, parse_hosts, sample_jobs


def main() -> None:
    """Run the search (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data")
    ap.add_argument("--seed", type=int, required=True, help="The sample's seed (as bench_dag_bounds.py).")
    ap.add_argument("--jobs", type=int, default=100)
    ap.add_argument("--hosts", default="32c64g:8,92c288g:8")
    ap.add_argument("--interarrival", type=float, default=10.0)
    ap.add_argument("--policy", choices=sorted(SEARCH_BASES), default="sjf-headroom")
    ap.add_argument("--evaluations", type=int, default=300, help="Episodes after the policy's own.")
    ap.add_argument("--search-seed", type=int, default=0)
    a = ap.parse_args()
    if a.evaluations < 0:
        ap.error("--evaluations must be 0 or more")
    sample = sample_jobs(load_dag_folder(a.data), a.jobs or None, a.seed, a.interarrival)
    cluster = carve_sample(sample, search_base(a.policy).partition, q=4, hosts=parse_hosts(a.hosts),
                           seed=a.seed, carving="nested", large_share=0.6).cluster
    cap = capacity_bound(sample, cluster, Overheads(), seed=a.seed).mean_jct
    print(f"seed {a.seed}: capacity bound {cap:.1f} s", flush=True)
    found = search_schedule(sample, cluster, a.policy, seed=a.seed, evaluations=a.evaluations,
                            search_seed=a.search_seed,
                            on_improve=lambda it, v: print(f"episode {it}: {v:.1f} s", flush=True))
    start, best = found.start_mean_jct, found.mean_jct
    print(f"{a.policy} {start:.1f} s ({start / cap:.3f}); best found {best:.1f} s ({best / cap:.3f}) after "
          f"{a.evaluations} episodes; {found.jobs_reordered} jobs with a factor other than 1")


if __name__ == "__main__":
    main()
