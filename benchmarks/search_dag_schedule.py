"""Clairvoyant schedule search on one DAG sample: how low can a schedule's mean JCT go?

Not a policy: every candidate is a whole seeded episode of the sample, so the search knows every
arrival and every draw. It tells, on one sample of ``benchmarks/bench_dag_bounds.py`` (same drawing,
carving and seed), how much of the gap between the best policy and the capacity bound a schedule can
close. A candidate is SJF-headroom (or ``--policy``) whose key of each job is multiplied by a per-job
factor; from all factors 1 (the policy itself), each step changes one or two factors at random (times
0, 0.1, 0.3, 3, 10 or 100; a factor of 0 stays 0: that job keeps the first claim) and keeps the change
when the mean JCT drops.
Seeded (``--search-seed``) and counted in episodes (``--evaluations``), so a run gives the same result
on every machine. Prints the policy's mean JCT, every improvement and the final ``mean JCT / capacity
bound``; every episode goes through the engine, whose launches the engine checks.

    python benchmarks/search_dag_schedule.py ../shared/data/alibaba-v2018-batch-dag --seed 1005 \
        --evaluations 613
"""

from __future__ import annotations

import argparse

import numpy as np

from packing.dag.bounds import capacity_bound
from packing.dag.engine import Cluster, DagEngine, DagObservation, Overheads
from packing.dag.loader import load_dag_folder
from packing.dag.model import Workload
from packing.dag.policy import run_dag
from policies.dag import DAG_POLICIES, StagePriority
from vbp.jobfusion import carve_sample, parse_hosts, sample_jobs

# the policies whose key is the job's remaining task-seconds (a factor scales it)
BASES = {name: DAG_POLICIES[name] for name in ("sjf-headroom", "sjf-reserve", "sjf-cp")}
FACTORS = (0.0, 0.1, 0.3, 3.0, 10.0, 100.0)


def scaled(base: type[StagePriority], factor: np.ndarray) -> StagePriority:
    """``base`` whose key of job ``j`` is multiplied by ``factor[j]``, shape ``(J,)``."""

    class Scaled(base):  # type: ignore[misc, valid-type]
        def keys(self, obs: DagObservation, stages: np.ndarray) -> np.ndarray:
            assert self.engine is not None
            return super().keys(obs, stages) * factor[self.engine.stage_job[stages]]

    return Scaled(None)


def search(sample: Workload, cluster: Cluster, base: type[StagePriority], *, seed: int,
           evaluations: int, search_seed: int = 0, overheads: Overheads | None = None,
           report: bool = False) -> tuple[float, float, np.ndarray]:
    """Local search over per-job key factors (module docstring).

    Returns:
        ``(mean JCT of the policy itself, best mean JCT found, its factors (J,))``.
    """
    oh = Overheads() if overheads is None else overheads

    def mean_jct(f: np.ndarray) -> float:
        res, _ = run_dag(DagEngine(sample, cluster, overheads=oh, seed=seed), scaled(base, f))
        return float(res.mean_jct)

    factor = np.ones(sample.n_jobs)
    start = best = mean_jct(factor)
    rng = np.random.default_rng(search_seed)
    for it in range(1, evaluations + 1):
        trial = factor.copy()
        for _ in range(int(rng.integers(1, 3))):
            j = int(rng.integers(len(trial)))
            trial[j] *= float(rng.choice(FACTORS)) if trial[j] > 0 else 1.0
        v = mean_jct(trial)
        if v < best:
            best, factor = v, trial
            if report:
                print(f"episode {it}: {best:.1f} s", flush=True)
    return start, best, factor


def main() -> None:
    """Run the search (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data")
    ap.add_argument("--seed", type=int, required=True, help="The sample's seed (as bench_dag_bounds.py).")
    ap.add_argument("--jobs", type=int, default=100)
    ap.add_argument("--hosts", default="32c64g:8,92c288g:8")
    ap.add_argument("--interarrival", type=float, default=10.0)
    ap.add_argument("--policy", choices=sorted(BASES), default="sjf-headroom")
    ap.add_argument("--evaluations", type=int, default=300, help="Episodes after the policy's own.")
    ap.add_argument("--search-seed", type=int, default=0)
    a = ap.parse_args()
    if a.evaluations < 0:
        ap.error("--evaluations must be 0 or more")
    sample = sample_jobs(load_dag_folder(a.data), a.jobs or None, a.seed, a.interarrival)
    base = BASES[a.policy]
    cluster = carve_sample(sample, base.partition, q=4, hosts=parse_hosts(a.hosts), seed=a.seed,
                           carving="nested", large_share=0.6).cluster
    cap = capacity_bound(sample, cluster, Overheads(), seed=a.seed).mean_jct
    print(f"seed {a.seed}: capacity bound {cap:.1f} s", flush=True)
    start, best, factor = search(sample, cluster, base, seed=a.seed, evaluations=a.evaluations,
                                 search_seed=a.search_seed, report=True)
    print(f"{a.policy} {start:.1f} s ({start / cap:.3f}); best found {best:.1f} s ({best / cap:.3f}) after "
          f"{a.evaluations} episodes; {int((factor != 1).sum())} jobs with a factor other than 1")


if __name__ == "__main__":
    main()
