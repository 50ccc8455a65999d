"""The FGD paper's comparison: its policies (or any registry policy) on the workloads of its protocol.

Each seed's workload (:func:`packing.gpu.fgd_protocol.build_workload`: seeded arrivals resampled to
130% of the GPU capacity) is replayed once per policy (:func:`packing.gpu.fgd_protocol.run_policy`);
the results come with the paper's published numbers where they apply
(:mod:`packing.gpu.fgd_paper`). FGD+ and FGD-Pack are tuned by :mod:`policies.swarm.gpu_train`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from packing.gpu.fgd_paper import DEFAULT_POLICIES, PAPER_NAMES, PolicyResult, published_for
from packing.gpu.fgd_protocol import Run, build_workload, run_policy
from packing.model.instance import Instance
from policies.registry import gpu_policy


def evaluate(instance: Instance, policies: Sequence[str] = DEFAULT_POLICIES, seeds: Sequence[int] = (42,),
             until: float = 1.3, progress: Callable[[str, int, Run], None] | None = None
             ) -> list[PolicyResult]:
    """Every policy on every seed's workload (the same workloads for every policy).

    Args:
        instance: the cluster and pod list.
        policies: registry names.
        seeds: workload seeds (the paper: 42..51; vbp's Generators, not the simulator's).
        until: target demand as a multiple of capacity.
        progress: called after each run with (policy, seed, run).

    Returns:
        One :class:`packing.gpu.fgd_paper.PolicyResult` per policy, in the order given.

    Raises:
        ValueError: no seed.
    """
    pub = published_for(instance)
    results = [PolicyResult(p, [], pub.get(PAPER_NAMES.get(p, ""))) for p in policies]
    if not seeds:
        raise ValueError("no seed")
    for s in seeds:
        wl = build_workload(instance, int(s), until)
        for res in results:
            run = run_policy(wl, gpu_policy(res.name, wl.dist, wl))
            res.runs.append(run)
            if progress is not None:
                progress(res.name, int(s), run)
    return results


__all__ = ["evaluate"]
