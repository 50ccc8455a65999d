"""solvers.dag.carving: the nested carving of real samples whose capacity left is a rounding residue.

Subtracting the carved containers from a host's capacity leaves ``-3.4e-13`` GB on some hosts of these
samples; the capacity left is clamped at zero, so they carve instead of failing validation.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from packing.dag.carving import parse_hosts, sample_jobs
from packing.dag.loader import load_dag_folder
from packing.dag.partition import partition
from solvers.dag.carving import carve_cluster


@pytest.mark.parametrize(("hosts", "seed"), [("32c64g:8,92c288g:8", 3), ("32c64g:8,92c288g:8", 208),
                                             ("32c64g:4,92c288g:2", 205)])
def test_nested_carving_of_samples_with_a_residue(shared_data: Path, hosts: str, seed: int) -> None:
    w = load_dag_folder(shared_data / "alibaba-v2018-batch-dag")
    sample = sample_jobs(w, 100, seed, 10.0)
    carved = carve_cluster(partition(sample, 4, "constrained"), parse_hosts(hosts), seed=seed,
                           carving="nested", large_share=0.6)
    used = (carved.cluster.types * carved.cluster.counts[:, None]).sum(axis=0)
    assert np.all(used <= carved.cluster.capacity + 1e-6)
    assert carved.cluster.counts.sum() > 0


@pytest.mark.parametrize("carving", ["nested", "proportional"])
def test_a_type_larger_than_every_host_is_named(carving: str) -> None:
    # a stage of 100 cores: no 32c64g or 92c288g host holds it, whatever the carving
    from packing.dag.model import Job, Stage, make_workload
    from packing.errors import InputError

    w = make_workload("big", [Job("j1", 0.0, (Stage("S", 1, (100.0, 1.0), 10.0),)),
                              Job("j2", 0.0, (Stage("S", 1, (1.0, 1.0), 10.0),))], "test")
    with pytest.raises(InputError) as e:
        carve_cluster(partition(w, 2, "constrained"), parse_hosts("32c64g:8,92c288g:8"), seed=0,
                      carving=carving)
    (p,) = e.value.problems
    assert p.source == "--hosts" and "is larger than every host (32c64g x8: [32.0, 64.0]" in p.reason
    assert p.reason.startswith("container type [100.0")
