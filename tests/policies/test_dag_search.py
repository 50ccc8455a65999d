"""policies.dag_search: the clairvoyant key-multiplier search starts at the policy, only improves, stays
above the capacity bound, is seeded, and its factors replay to what it reports."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from packing.dag.bounds import capacity_bound
from packing.dag.engine import Cluster, DagEngine, Overheads
from packing.dag.loader import load_dag_folder
from packing.dag.model import Workload
from packing.dag.policy import run_dag
from packing.errors import InputError
from policies.dag import DAG_POLICIES, make_dag_policy
from policies.dag_search import SEARCH_BASES, ScheduleSearch, key_scaled, search_base, search_schedule
from vbp.jobfusion import carve_sample, parse_hosts, sample_jobs

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "dag"


def fixture_sample(seed: int = 3, surges: int = 0) -> tuple[Workload, Cluster]:
    """All six jobs of tests/data/dag at once on one 32c64g host carved into 2 types."""
    w = sample_jobs(load_dag_folder(FIXTURE), None, seed, 0.0)
    cl = carve_sample(w, "constrained", q=2, hosts=parse_hosts("32c64g:1"), surges=surges, seed=seed).cluster
    return w, cl


@pytest.mark.parametrize("base", SEARCH_BASES)
def test_zero_evaluations_is_the_policy_itself(base: str) -> None:
    w, cl = fixture_sample()
    own, _ = run_dag(DagEngine(w, cl, overheads=Overheads(), seed=3), make_dag_policy(base))
    found = search_schedule(w, cl, base, seed=3, evaluations=0)
    assert found.start_mean_jct == found.mean_jct == pytest.approx(own.mean_jct, abs=1e-9)
    assert np.array_equal(found.jct, own.jct) and found.result.makespan == own.makespan
    assert np.array_equal(found.factors, np.ones(w.n_jobs)) and found.jobs_reordered == 0
    assert found.episodes == 1 and found.improvements == ()


def test_search_finds_a_better_order_above_the_bound_and_replays() -> None:
    w, cl = fixture_sample()
    seen: list[tuple[int, float]] = []
    found = search_schedule(w, cl, "sjf-headroom", seed=3, evaluations=25, search_seed=1,
                            on_improve=lambda it, v: seen.append((it, v)))
    assert isinstance(found, ScheduleSearch) and found.base == "sjf-headroom" and found.episodes == 26
    assert found.start_mean_jct == pytest.approx(997.07, abs=0.01)  # SJF-headroom on this fixture
    assert found.mean_jct == pytest.approx(869.64, abs=0.01)  # the order the search finds here
    assert found.mean_jct >= capacity_bound(w, cl, Overheads(), seed=3).mean_jct - 1e-6
    assert list(found.improvements) == seen and seen[-1][1] == found.mean_jct
    assert all(a[1] > b[1] and a[0] < b[0] for a, b in zip(seen, seen[1:], strict=False))
    assert found.jobs_reordered == int((found.factors != 1).sum()) > 0
    replay, _ = run_dag(DagEngine(w, cl, overheads=Overheads(), seed=3),
                        key_scaled("sjf-headroom", found.factors))
    assert replay.mean_jct == pytest.approx(found.mean_jct, abs=1e-9)
    assert np.array_equal(replay.jct, found.jct) and found.jct.mean() == pytest.approx(found.mean_jct)


def test_seeded_and_never_below_the_capacity_bound() -> None:
    for sample_seed in (0, 5):
        w, cl = fixture_sample(sample_seed)
        cap = capacity_bound(w, cl, Overheads(), seed=sample_seed).mean_jct
        runs = {s: search_schedule(w, cl, "sjf-cp", seed=sample_seed, evaluations=12, search_seed=s)
                for s in (0, 1)}
        again = search_schedule(w, cl, "sjf-cp", seed=sample_seed, evaluations=12, search_seed=1)
        assert again.mean_jct == runs[1].mean_jct and np.array_equal(again.factors, runs[1].factors)
        for r in runs.values():
            assert cap - 1e-6 <= r.mean_jct <= r.start_mean_jct


def test_preempting_episodes_match_the_engine() -> None:
    w, cl = fixture_sample(3, surges=3)
    eng = DagEngine(w, cl, overheads=Overheads(), seed=3, preempt=True)
    own, _ = run_dag(eng, make_dag_policy("sjf-reserve"))
    found = search_schedule(w, cl, "sjf-reserve", seed=3, evaluations=4, preempt=True)
    assert own.preempted > 0 and found.result.preempted > 0  # surges kill running tasks here
    assert found.start_mean_jct == pytest.approx(own.mean_jct, abs=1e-9)
    assert found.mean_jct < found.start_mean_jct
    replay, _ = run_dag(eng, key_scaled("sjf-reserve", found.factors))
    assert replay.mean_jct == pytest.approx(found.mean_jct, abs=1e-9)


def test_scaled_keys_are_the_base_keys_times_the_job_factor() -> None:
    w, cl = fixture_sample()
    factor = np.array([0.0, 0.1, 1.0, 3.0, 10.0, 100.0])[: w.n_jobs]
    for name in SEARCH_BASES:
        eng = DagEngine(w, cl, overheads=Overheads(), seed=3)
        eng.reset()
        base, scaled = make_dag_policy(name), key_scaled(name, factor)
        base.reset(eng)
        scaled.reset(eng)
        obs = eng.observation()
        stages = obs.runnable
        assert len(stages) > 0
        want = base.keys(obs, stages) * factor[eng.stage_job[stages]]
        assert np.array_equal(scaled.keys(obs, stages), want)
        assert scaled.name == name and scaled.partition == base.partition


def test_refuses_other_policies_and_bad_counts() -> None:
    assert set(SEARCH_BASES) <= set(DAG_POLICIES)
    w, cl = fixture_sample()
    for bad in ("fifo", "cpf", "random", "zzz"):
        with pytest.raises(InputError, match="--search-policy") as e:
            search_schedule(w, cl, bad, seed=0, evaluations=1)
        assert len(e.value.problems) == 1 and "sjf-headroom" in str(e.value)
    with pytest.raises(InputError, match="--base"):
        search_base("fifo", source="--base")
    with pytest.raises(ValueError, match="0 or more"):
        search_schedule(w, cl, "sjf", seed=0, evaluations=-1)
    with pytest.raises(ValueError, match="factors"):
        run_dag(DagEngine(w, cl, seed=0), key_scaled("sjf", np.ones(w.n_jobs + 1)))
