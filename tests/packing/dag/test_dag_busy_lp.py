"""The mean-busy-time LP bound (item 6 of the DAG capacity bound, :mod:`packing.dag.busy_lp`).

Hand-computed cases for its ingredients, and whole bounds where the LP proves more than items 1-5
checked against the best of every episode of the engine (the exhaustive search of
``test_dag_bounds.best_episode``), with non-integer data, drawn overheads and none.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from packing.dag.bounds import capacity_bound
from packing.dag.busy_lp import BusyMachine, busy_grid, busy_time_bound, right_end_tau
from packing.dag.engine import NO_OVERHEADS, Cluster
from packing.dag.model import Workload
from tests.packing.dag.test_dag_bounds import DRAWN, best_episode, shift_case, tiny_case


def test_tau_by_hand() -> None:
    # one stage of volume 2 at rate 1 whose last task ends 1 s before the job: V(u) = min(u, 2, u - 1),
    # so 1 - V/2 is 1 on [0, 1] and falls to 0 on [1, 3]: tau = 1 + 1 = 2 (from below)
    t = right_end_tau(np.array([2.0]), np.array([1.0]), np.array([1.0]))
    assert 2.0 - 2e-3 < t <= 2.0
    # the machine's own rate caps V too: rate 4 is no faster than time itself, V(u) = min(u, 2)
    assert right_end_tau(np.array([2.0]), np.array([4.0]), np.array([0.0])) == pytest.approx(1.0, abs=1e-3)


def test_two_jobs_on_one_machine_by_hand() -> None:
    # two jobs of one stage each filling the machine for 1 s, both arriving at 0: one of them ends at
    # 2, so the least sum of finish times is 1 + 2 = 3, and the LP (mean busy times 0.5 and 1.5, or
    # 1 and 1, plus tau = 0.5 each) proves it up to the grid's step
    own = np.array([1.0, 1.0])
    m = BusyMachine(np.array([1.0, 1.0]), np.array([1.0, 1.0]))
    first = np.array([0, 1, 2])
    zero = np.zeros(2)
    grid = np.linspace(0.0, 4.0, 401)
    v = busy_time_bound(own, zero, [m], first, zero, zero, grid)
    assert 3.0 - 0.02 < v <= 3.0
    # without the machine the jobs finish at their own bounds
    assert busy_time_bound(own, zero, [], first, zero, zero, grid) == pytest.approx(2.0)


def test_a_slow_job_behind_a_fast_one_by_hand() -> None:
    # job 0: volume 1 at full rate; job 1: volume 1 at rate 1/2 (it needs 2 s alone). Every schedule
    # has a sum of 4 (job 0 ends at T in [1, 2], job 1 at T + 2 * (1 - (T - 1))). The LP sees less:
    # both at half the machine over [0, 2] gives mean busy times 1 and 1, tau 0.5 and 1, so C_0 >= 1.5
    # and C_1 >= 2: it proves 3.5 (up to the grid's step), more than the own bounds (1 + 2)
    own = np.array([1.0, 2.0])
    m = BusyMachine(np.array([1.0, 1.0]), np.array([1.0, 0.5]))
    first = np.array([0, 1, 2])
    zero = np.zeros(2)
    v = busy_time_bound(own, zero, [m], first, zero, zero, np.linspace(0.0, 5.0, 501))
    assert 3.5 - 0.02 < v <= 3.5


def test_grid() -> None:
    arr = np.array([0.0, 10.0])
    own = np.array([100.0, 110.0])
    g = busy_grid(arr, own, 50.0)
    assert g[0] == 0.0 and g[-1] >= 210.0
    assert np.allclose(np.diff(g), 10.0)  # a tenth of the mean own JCT (100 s)
    assert len(busy_grid(arr, own, 1e6, intervals=50)) == 51


# seeds of the two small generators where the LP proves more than items 1-5 (a search over seeds
# 0-799), with and without drawn overheads
LP_CASES = [(tiny_case, 658, False), (tiny_case, 735, True), (tiny_case, 798, True),
            (shift_case, 56, False), (shift_case, 401, True), (shift_case, 471, False),
            (shift_case, 592, False), (shift_case, 407, True)]


@pytest.mark.parametrize(("gen", "seed", "drawn"), LP_CASES,
                         ids=[f"{g.__name__}-{s}-{'drawn' if d else 'none'}" for g, s, d in LP_CASES])
def test_lp_proves_more_and_stays_below_the_best_episode(gen: Callable[[int], tuple[Workload, Cluster]],
                                                         seed: int, drawn: bool) -> None:
    w, cl = gen(seed)
    oh = DRAWN if drawn else NO_OVERHEADS
    cb = capacity_bound(w, cl, oh, seed=seed)
    others = max(v for k, v in cb.parts.items() if k != "busy")
    assert cb.parts["busy"] > others + 0.05
    assert cb.mean_jct == pytest.approx(cb.parts["busy"])
    assert cb.mean_jct <= best_episode(w, cl, oh, seed=seed) + 1e-9
