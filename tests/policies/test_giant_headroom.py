"""policies.dag.SjfReserve's giant-job headroom: a hand-computed episode, release when quiet, seeded runs
above the capacity bound."""

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
from policies.dag import SjfReserve, make_dag_policy
from tests.policies.dag_episode import first_actions, jct_by_name
from tests.policies.test_sjf_reserve import TWO_TYPES as RESERVE_TYPES
from tests.policies.test_sjf_reserve import short_and_long

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "dag"

# one type (1, 1) x 10 containers: the reserve rule of SjfReserve has no protected type here
ONE_TYPE = Cluster.from_counts(np.array([[1.0, 1.0]]), np.array([10]))


def giant_and_short() -> Workload:
    """No overheads. G at t=0: 19 tasks x 200 s (380 s of the 10 containers); Y at t=10: 1 task x 5 s.

    Without headroom: G takes all 10 containers [0,200]; Y waits: [200,205]; G's other 9 [200,400].
    JCTs: G 400, Y 195.
    Headroom 0.1 for jobs of 300 s or more: G (380 s) leaves ceil(0.1 * 10) = 1 container free: 9 tasks
    [0,200], then WAIT; Y arrives at 10 and runs at once [10,15]; at 15 G still keeps one free (19 tasks
    unfinished, 380 s); at 200 G has 10 tasks left (200 s < 300 s): no longer a giant, all 10 [200,400].
    JCTs: G 400, Y 5.
    """
    g = Job("G", 0.0, (Stage("g", 19, (1.0, 1.0), 200.0),))
    y = Job("Y", 10.0, (Stage("y", 1, (1.0, 1.0), 5.0),))
    return make_workload("giant-and-short", [g, y], "test")


def test_headroom_lets_the_short_job_start_at_once() -> None:
    w = giant_and_short()
    assert jct_by_name(w, ONE_TYPE, SjfReserve()) == {"G": 400.0, "Y": 195.0}
    assert jct_by_name(w, ONE_TYPE, SjfReserve(giant_s=300.0, headroom=0.1)) == {"G": 400.0, "Y": 5.0}
    # below the threshold G is no giant: as without headroom
    assert jct_by_name(w, ONE_TYPE, SjfReserve(giant_s=400.0, headroom=0.1)) == {"G": 400.0, "Y": 195.0}
    acts, times = first_actions(w, ONE_TYPE, SjfReserve(giant_s=300.0, headroom=0.1), 3)
    assert acts == [DagAction(0, 0, 9), WAIT, DagAction(1, 0, 1)]
    assert times == [0.0, 0.0, 10.0]


def test_quiet_release() -> None:
    """With ``quiet_s=0`` G is alone at t=0 and its last arrival is 0 s ago: no headroom, as without."""
    w = giant_and_short()
    quiet = SjfReserve(giant_s=300.0, headroom=0.1, quiet_s=0.0)
    assert jct_by_name(w, ONE_TYPE, quiet) == {"G": 400.0, "Y": 195.0}
    # quiet_s = 20: at t=0 the last arrival is 0 s ago (< 20 s), so the headroom holds
    held = SjfReserve(giant_s=300.0, headroom=0.1, quiet_s=20.0)
    assert jct_by_name(w, ONE_TYPE, held) == {"G": 400.0, "Y": 5.0}


# two types that do not nest: A = (2, 1) x 2 containers, B = (1, 2) x 10
TWO_TYPES = Cluster.from_counts(np.array([[2.0, 1.0], [1.0, 2.0]]), np.array([2, 10]))


def test_a_giant_spares_a_small_protected_type() -> None:
    """No overheads. G at 0: 30 tasks x 200 s that fit A and B (500 s of the 12 containers: a giant
    from 300 s). Y at 0: y1 (1 task x 10 s, fits only B), then y2 (2 tasks x 5 s, fits only A), so A is
    protected from 0. Headroom 0.1 keeps 1 container of each type from G, no reserve.

    Without ``spare``: at 0 Y's y1 takes a B; G takes 1 A (2 minus the headroom) and 8 B; at 10 y2
    finds 1 free A [10,15] and its second task waits for it [15,20]: Y 20. With ``spare=0.25`` A (2
    containers) is fewer than 0.25 x the 12 G fits, so G leaves it alone: at 10 both y2 tasks run
    [10,15]: Y 15. G needs three rounds of 200 s on 12 containers either way: 600.
    """
    g = Job("G", 0.0, (Stage("g", 30, (1.0, 1.0), 200.0),))
    y = Job("Y", 0.0, (Stage("y1", 1, (0.5, 2.0), 10.0), Stage("y2", 2, (2.0, 0.5), 5.0, (0,))))
    w = make_workload("spare", [g, y], "test")

    def policy(spare: float) -> SjfReserve:
        return SjfReserve(reserve=0.0, giant_s=300.0, headroom=0.1, spare=spare)

    assert jct_by_name(w, TWO_TYPES, policy(0.0)) == {"G": 600.0, "Y": 20.0}
    assert jct_by_name(w, TWO_TYPES, policy(0.25)) == {"G": 600.0, "Y": 15.0}
    acts, _ = first_actions(w, TWO_TYPES, policy(0.25), 4)
    assert acts == [DagAction(1, 1, 1), DagAction(0, 1, 8), WAIT, DagAction(2, 0, 2)]
    # with 2 containers no fewer than 0.1 x 12, A is no small type: as without spare
    assert jct_by_name(w, TWO_TYPES, policy(0.1)) == {"G": 600.0, "Y": 20.0}


def test_a_giant_ramps_up_its_long_stage() -> None:
    """No overheads, one type of 10 containers. G at 0: 30 tasks x 100 s (300 s of the containers: a
    giant from 200 s); Y at 50: 5 tasks x 5 s. Headroom 0.1 keeps 1 container from G.

    Without ``stagger_s``: G takes 9 containers [0,100]; Y finds the 1 left and runs its tasks one
    after another [50,75]: Y 25. With ``stagger_s=50`` G's stage ramps up over 100 s: at 0 it may run
    ceil(10 * 1 / 100) = 1 task, then waits; at 50 Y (the shorter job) takes 5 of the 9 free
    containers [50,55]: Y 5; G then runs ceil(10 * 50 / 100) - 1 = 4 more, 3 of them now (one kept).
    G's ramp steps only at events, so it ends later: 450 s instead of 400.
    """
    g = Job("G", 0.0, (Stage("g", 30, (1.0, 1.0), 100.0),))
    y = Job("Y", 50.0, (Stage("y", 5, (1.0, 1.0), 5.0),))
    w = make_workload("stagger", [g, y], "test")

    def policy(stagger_s: float) -> SjfReserve:
        return SjfReserve(giant_s=200.0, headroom=0.1, stagger_s=stagger_s)

    assert jct_by_name(w, ONE_TYPE, policy(float("inf"))) == {"G": 400.0, "Y": 25.0}
    assert jct_by_name(w, ONE_TYPE, policy(50.0)) == {"G": 450.0, "Y": 5.0}
    acts, times = first_actions(w, ONE_TYPE, policy(50.0), 4)
    assert acts == [DagAction(0, 0, 1), WAIT, DagAction(1, 0, 5), DagAction(0, 0, 3)]
    assert times == [0.0, 0.0, 50.0, 50.0]
    # tasks shorter than stagger_s launch as without it
    assert jct_by_name(w, ONE_TYPE, policy(150.0)) == {"G": 400.0, "Y": 25.0}


def test_bad_headroom_is_refused() -> None:
    with pytest.raises(ValueError, match="headroom"):
        SjfReserve(headroom=-0.1)
    with pytest.raises(ValueError, match="spare"):
        SjfReserve(spare=1.5)
    with pytest.raises(ValueError, match="stagger_s"):
        SjfReserve(stagger_s=0.0)


@pytest.mark.parametrize("seed", [0, 1])
def test_sjf_headroom_seeded_and_above_the_bound(seed: int) -> None:
    """The registered ``sjf-headroom`` on the fixture, two containers per type: the same JCTs twice,
    never below the capacity bound (per job too)."""
    w = load_dag_folder(FIXTURE)
    part = partition(w, 3, "constrained")
    cl = Cluster.from_counts(part.types, np.full(part.n_types, 2))
    pol = make_dag_policy("sjf-headroom")
    assert isinstance(pol, SjfReserve) and pol.name == "sjf-headroom"
    runs = [run_dag(DagEngine(w, cl, overheads=Overheads(), seed=seed), pol)[0] for _ in range(2)]
    assert np.array_equal(runs[0].jct, runs[1].jct) and np.all(np.isfinite(runs[0].jct))
    cb = capacity_bound(w, cl, Overheads())
    assert runs[0].mean_jct >= cb.mean_jct - 1e-6
    assert np.all(runs[0].jct >= cb.jct - 1e-6)


def test_sjf_headroom_keeps_no_reserve_for_other_jobs() -> None:
    """SJF-reserve's hand-computed episode (``test_sjf_reserve.short_and_long``): X (4,000 task-seconds
    over 12 containers, 333 s < 1,000 s) is no giant and SJF-headroom keeps no reserve for it, so its
    long stage fills type 1 as under SJF-CP (Y 204 s, X 404 s) where SJF-reserve keeps one container of
    type 1 for Y's stage (Y 25 s, X 400 s)."""
    w = short_and_long()
    assert jct_by_name(w, RESERVE_TYPES, make_dag_policy("sjf-headroom")) == {"Y": 204.0, "X": 404.0}
    assert jct_by_name(w, RESERVE_TYPES, make_dag_policy("sjf-reserve")) == {"Y": 25.0, "X": 400.0}
