"""Carving hosts into a DAG partition's container types: the model, and seeded samples of jobs.

JobFusion runs each job's tasks in containers of a few types (:mod:`packing.dag.partition`); the
containers are carved out of the hosts beforehand. Carving is vector bin packing: the ``Q`` types
become apps (counts proportional to the tasks each type was built for), the host types bins
(:func:`carving_instance`). Host cost is measured in large-host units (:data:`REF`, the paper's
92c288g host), the unit of the idle share. The solving (a proven sweep, first-fit decreasing on a
fixed cluster) is in :mod:`solvers.dag.carving`.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from packing.dag.model import Workload
from packing.dag.partition import Partition
from packing.errors import input_error
from packing.loaders.tianchi import parse_fleet
from packing.model.instance import App, HostType, Instance

HOST_SHAPES: dict[str, tuple[float, float]] = {"32c64g": (32.0, 64.0), "92c288g": (92.0, 288.0)}
"""The JobFusion paper's hosts: (cores, GB)."""

REF = np.array(HOST_SHAPES["92c288g"])
"""Normalisation of the idle share and host cost: the large host."""


def parse_hosts(text: str) -> list[tuple[str, tuple[float, float], int]]:
    """``"32c64g:8,92c288g:4"`` -> ``[(name, (cores, GB), count), ...]``; shapes ``<c>c<g>g`` are free.

    Each entry is read by :func:`packing.loaders.tianchi.parse_fleet` (the one parser of host
    specs); a missing count is 1.

    Raises:
        InputError: a malformed entry.
    """
    out = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        f = parse_fleet(part, "--hosts")
        n = 1 if f.count is None else f.count
        if n > 100_000:
            raise input_error("--hosts", part, "count must be at most 100000")
        out.append((part.partition(":")[0], (f.cpu, f.mem), n))
    if not out:
        raise input_error("--hosts", text, "no host given")
    return out


def large_host_units(v: np.ndarray) -> np.ndarray:
    """Mean over the resources of ``v`` (shape ``(..., 2)``) divided by the large host, shape ``(...)``."""
    return np.asarray(v / REF).mean(axis=-1)


def container_counts(part: Partition, total: int) -> np.ndarray:
    """Containers per type, proportional to the tasks each type was built for, each >= 1, shape ``(Q,)``."""
    w = part.weight / part.weight.sum()
    return np.maximum(1, np.round(w * total)).astype(np.int64)


def member_demand(part: Partition) -> np.ndarray:
    """Task-weighted mean demand of each type's members, shape ``(Q, 2)``."""
    out = np.zeros_like(part.types)
    for q in range(part.n_types):
        sel = part.assign == q
        out[q] = np.average(part.points[sel], axis=0, weights=part.point_weight[sel])
    return out


def host_costs(shapes: list[tuple[float, float]]) -> tuple[list[int], int]:
    """Exact integer costs of host shapes, and the unit they are counted in.

    A host's cost is its capacity in large-host units (mean over resources of shape / ``REF``), a
    rational number; the costs are returned multiplied by ``scale``, the least common denominator,
    so that a solver's proof on the integer costs is a proof for the real ones (cost = integer /
    scale). Capped at a denominator of 10^6 (then the float costs are rounded to that unit and the
    solver's bound is only as exact as that rounding: this does not happen with whole-number shapes).
    """
    fr = [(Fraction(float(s[0])) / Fraction(float(REF[0])) + Fraction(float(s[1])) / Fraction(float(REF[1])))
          / 2 for s in shapes]
    scale = math.lcm(*(f.denominator for f in fr)) if fr else 1
    if scale > 10**6:
        fr = [f.limit_denominator(10**6) for f in fr]
        scale = math.lcm(*(f.denominator for f in fr))
    return [int(f * scale) for f in fr], scale


def carving_instance(part: Partition, counts: np.ndarray,
                     hosts: list[tuple[str, tuple[float, float], int]],
                     name: str = "carving") -> tuple[Instance, int]:
    """The carving problem: types as apps with ``counts`` (shape ``(Q,)``), host types as bins.

    Returns:
        The instance, whose host costs are whole numbers (see :func:`host_costs`), and the cost
        scale: a solution's cost in large-host units is its objective divided by the scale.
    """
    apps = tuple(App(f"type{q}:{part.types[q, 0]:g}c{part.types[q, 1]:g}g", tuple(map(float, part.types[q])),
                     int(counts[q])) for q in range(part.n_types))
    costs, scale = host_costs([shape for _, shape, _ in hosts])
    hts = tuple(HostType(n, shape, c, cost=float(k)) for (n, shape, c), k in zip(hosts, costs, strict=True))
    return Instance(name, ("cpu", "mem"), hts, apps), scale


def sample_jobs(workload: Workload, n: int | None, seed: int, interarrival: float | None) -> Workload:
    """A seeded sample of ``n`` jobs (all when ``n`` is None).

    With ``interarrival`` the arrivals are re-drawn as a Poisson stream of that mean (seconds) in a
    seeded random job order; else the trace's arrivals are kept, shifted to start at 0.
    """
    rng = np.random.default_rng(seed)
    w = workload
    if n is not None and n < w.n_jobs:
        w = w.subset(sorted(rng.choice(w.n_jobs, size=n, replace=False).tolist()))
    if interarrival is not None:
        from packing.dag.model import Job, make_workload

        gaps = np.concatenate([[0.0], rng.exponential(interarrival, size=max(w.n_jobs - 1, 0))])
        times = np.cumsum(gaps)
        order = rng.permutation(w.n_jobs)
        jobs = [Job(w.jobs[int(i)].name, float(times[k]), w.jobs[int(i)].stages) for k, i in enumerate(order)]
        return make_workload(w.name, jobs, w.name, dict(w.meta))
    return w.shifted()


__all__ = ["HOST_SHAPES", "REF", "carving_instance", "container_counts", "host_costs", "large_host_units",
           "member_demand", "parse_hosts", "sample_jobs"]
