"""solvers.dag_carving: the nested carving of real samples whose capacity left is a rounding residue.

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
from solvers.dag_carving import carve_cluster


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
