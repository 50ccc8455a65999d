"""vbp.jobfusion nested carving: hand-computed counts, the checker, tuning on samples, CLI flags."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from packing.dag.carving import parse_hosts
from packing.dag.generator import generate_dag_workload
from packing.dag.partition import Partition, partition
from packing.errors import InputError
from packing.feasibility.checker import check
from solvers.dag.carving import carve_cluster, maximal_types
from vbp.jobfusion import tune_large_share

FIXTURE = str(Path(__file__).resolve().parents[1] / "data" / "dag")
HOSTS = parse_hosts("32c64g:4,92c288g:2")


def _part(types: list[list[float]], weight: list[float]) -> Partition:
    t = np.array(types, dtype=np.float64)
    q = len(types)
    return Partition("constrained", t, np.array(weight, dtype=np.float64), t.copy(), np.arange(q),
                     np.array(weight, dtype=np.float64), q, True)


def test_maximal_types_by_hand() -> None:
    t = np.array([[0.5, 1.0], [0.5, 3.5], [1.0, 2.0], [1.0, 3.0]])
    is_max, server = maximal_types(t)
    # [0.5, 3.5] and [1, 3] dominate nothing of each other; [0.5, 1] -> the smaller maximal [0.5, 3.5]
    assert is_max.tolist() == [False, True, False, True]
    assert server.tolist() == [1, 1, 3, 3]


def test_nested_full_share_keeps_the_one_type_cluster() -> None:
    # [1, 3] alone: 32c64g holds min(32, 64 // 3) = 21, 92c288g min(92, 96) = 92 -> 4*21 + 2*92 = 268,
    # the one-type cluster; then [0.5, 1] on what is left: 1 GB on each 32c64g host -> 4
    part = _part([[0.5, 1.0], [1.0, 3.0]], [300, 100])
    c = carve_cluster(part, HOSTS, carving="nested", large_share=1.0)
    assert c.cluster.counts.tolist() == [4, 268]
    one = carve_cluster(_part([[1.0, 3.0]], [400]), HOSTS, carving="nested", large_share=0.3)
    assert one.cluster.counts.tolist() == [268]  # one type: the share does not shrink it
    assert not check(c.instance, c.placement, require_all=True)


def test_nested_half_share_by_hand() -> None:
    # 134 of [1, 3]: first-fit decreasing opens the large hosts first: 92 on one 92c288g host, 42 on
    # the other; left: (0c, 12g) -> 0, (50c, 162g) -> 100 and 4 x (32c, 64g) -> 64 each of [0.5, 1]
    part = _part([[0.5, 1.0], [1.0, 3.0]], [300, 100])
    c = carve_cluster(part, HOSTS, carving="nested", large_share=0.5)
    assert c.cluster.counts.tolist() == [100 + 4 * 64, 134]
    assert not check(c.instance, c.placement, require_all=True)
    # slots sit on the hosts the placement says (type order, online first: none here)
    assert np.array_equal(c.cluster.slot_host, c.placement.host_array(c.instance))


def test_proportional_unchanged_and_bad_input() -> None:
    part = _part([[0.5, 1.0], [1.0, 3.0]], [300, 100])
    c = carve_cluster(part, HOSTS)  # the default stays proportional: 3:1 by task counts
    n = c.cluster.counts
    assert n[0] == 3 * n[1] or abs(n[0] - 3 * n[1]) <= 3
    assert not check(c.instance, c.placement, require_all=True)
    with pytest.raises(InputError):
        carve_cluster(part, HOSTS, carving="zigzag")
    with pytest.raises(InputError):
        carve_cluster(part, HOSTS, carving="nested", large_share=1.5)


def test_nested_passes_the_checker_with_online_and_serves_every_task() -> None:
    w = generate_dag_workload(20, seed=2)
    online = np.array([[4.0, 8.0], [8.0, 16.0], [4.0, 16.0]])
    for share in (0.0, 0.5, 1.0):
        part = partition(w, 4, "constrained")
        c = carve_cluster(part, parse_hosts("32c64g:2,92c288g:1"), online=online, online_share=0.3,
                          carving="nested", large_share=share, seed=0)
        assert not check(c.instance, c.placement, require_all=True)
        is_max, _ = maximal_types(part.types)
        assert np.all(c.cluster.counts[is_max] >= 1)  # every task has a type that dominates it


def test_tune_large_share_is_seeded_and_picks_the_least_jct() -> None:
    samples = [generate_dag_workload(6, seed=s, mean_interarrival=2.0) for s in (1, 2)]
    hosts = parse_hosts("32c64g:1")
    a = tune_large_share(samples, hosts, q=3, grid=(0.25, 1.0))
    b = tune_large_share(samples, hosts, q=3, grid=(0.25, 1.0))
    assert a == b
    best, means = a
    assert set(means) == {0.25, 1.0} and means[best] == min(means.values())


def test_cli_carving_flags() -> None:
    from vbp.cli.jobs import jobs

    outs = {}
    for carving in ("proportional", "nested"):
        r = CliRunner().invoke(jobs, ["compare", FIXTURE, "--json", "--hosts", "32c64g:1", "--policies",
                                      "sjf", "--carving", carving, "--large-share", "0.5"])
        assert r.exit_code == 0, r.output
        outs[carving] = json.loads(r.output)
        assert outs[carving]["carving"] == {"method": carving, "large_share": 0.5}
    r = CliRunner().invoke(jobs, ["compare", FIXTURE, "--large-share", "2"])
    assert r.exit_code == 2
