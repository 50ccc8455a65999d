"""policies.dag.SjfReserve: a hand-computed episode, equality with SJF-CP without a reserve, seeded runs
above the capacity bound on the fixture."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from packing.dag.bounds import capacity_bound
from packing.dag.engine import WAIT, Cluster, DagAction, DagEngine, Overheads
from packing.dag.loader import load_dag_folder
from packing.dag.model import Job, Stage, Workload, make_workload
from packing.dag.partition import partition
from packing.dag.policy import run_dag
from policies.dag import SjfCriticalPath, SjfReserve, make_dag_policy
from tests.policies.dag_episode import first_actions, jct_by_name

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "dag"

# type 0: (1, 1) x 2 containers; type 1: (2, 2) x 10
TWO_TYPES = Cluster.from_counts(np.array([[1.0, 1.0], [2.0, 2.0]]), np.array([2, 10]))


def short_and_long() -> Workload:
    """Both jobs at t=0, no overheads.

    Y: a (1 task x 5 s, fits both types) -> b (5 x 4 s, demand (2, 2): type 1 only), 25 task-seconds.
    X: x (20 x 200 s, fits both), 4,000 task-seconds.

    SJF-CP: a on type 0 [0,5]; x: 1 on type 0 [0,200], all 10 of type 1 [0,200]; at 5, 1 x on type 0
    [5,205]; b waits for type 1: 5 tasks [200,204]; x: 1 on type 0 and 5 on type 1 [200,400], 2 on type 1
    [204,404]. JCTs: Y 204, X 404.
    SJF-reserve: type 1 is protected (b fits only it) and x is long (200 s >= 100 s) and fits type 0
    too, so x leaves ceil(0.1 * 10) = 1 container of type 1 free: 9 on type 1 [0,200], then WAIT; at 5
    b takes it: [5,9], [9,13], [13,17], [17,21], [21,25] (x's second type-0 task [5,205] meanwhile);
    Y ends at 25, type 1 is no longer protected: x [25,225]; at 200 1 on type 0 and 7 on type 1
    [200,400]. JCTs: Y 25, X 400.
    """
    y = Job("Y", 0.0, (Stage("a", 1, (1.0, 1.0), 5.0), Stage("b", 5, (2.0, 2.0), 4.0, (0,))))
    x = Job("X", 0.0, (Stage("x", 20, (1.0, 1.0), 200.0),))
    return make_workload("short-and-long", [y, x], "test")


def test_hand_computed_episode() -> None:
    w = short_and_long()
    assert jct_by_name(w, TWO_TYPES, SjfCriticalPath()) == {"Y": 204.0, "X": 404.0}
    assert jct_by_name(w, TWO_TYPES, SjfReserve()) == {"Y": 25.0, "X": 400.0}
    # the first decisions: a on type 0, x on the free type-0 container, 9 of the 10 type-1, then wait
    a, b, x = (0, 1, 2) if w.jobs[0].name == "Y" else (1, 2, 0)  # global stage ids of a, b and x
    acts, times = first_actions(w, TWO_TYPES, SjfReserve(), 5)
    # then at 5 s (a done) b takes the type-1 container x left free
    assert acts == [DagAction(a, 0, 1), DagAction(x, 0, 1), DagAction(x, 1, 9), WAIT, DagAction(b, 1, 1)]
    assert times == [0.0, 0.0, 0.0, 0.0, 5.0]


def test_without_reserve_it_is_sjf_cp() -> None:
    w = load_dag_folder(FIXTURE)
    cl = Cluster.from_counts(partition(w, 3, "constrained").types, np.array([2, 3, 2]))
    base, _ = run_dag(DagEngine(w, cl, overheads=Overheads(), seed=3), SjfCriticalPath())
    zero, _ = run_dag(DagEngine(w, cl, overheads=Overheads(), seed=3), SjfReserve(reserve=0.0))
    assert np.array_equal(base.jct, zero.jct)


@pytest.mark.parametrize("seed", [0, 1])
def test_fixture_seeded_and_above_the_bound(seed: int) -> None:
    w = load_dag_folder(FIXTURE)
    part = partition(w, 3, "constrained")
    cl = Cluster.from_counts(part.types, np.full(part.n_types, 2))
    runs = [run_dag(DagEngine(w, cl, overheads=Overheads(), seed=seed), make_dag_policy("sjf-reserve"))[0]
            for _ in range(2)]
    assert np.array_equal(runs[0].jct, runs[1].jct) and np.all(np.isfinite(runs[0].jct))
    cb = capacity_bound(w, cl, Overheads())
    assert runs[0].mean_jct >= cb.mean_jct - 1e-6
    assert np.all(runs[0].jct >= cb.jct - 1e-6)


def test_bad_parameters_are_refused() -> None:
    with pytest.raises(ValueError, match="reserve"):
        SjfReserve(reserve=1.5)
