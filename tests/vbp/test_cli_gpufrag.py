"""``vbp gpu-frag`` and the FGD paper's protocol (packing.gpu.fgd_protocol, policies.fgd_eval)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from packing.feasibility.predicates import ClusterState
from packing.gpu.fgd_paper import LEVELS, PUBLISHED
from packing.gpu.fgd_protocol import Run, build_workload, gpu_capacity, pod_sequence, run_policy, task_gpu
from packing.gpu.fragmentation import cluster_fragmentation
from packing.loaders.openb import load_openb
from policies.fgd_eval import evaluate
from policies.registry import gpu_policy as make_policy
from vbp.cli import cli, main

OPENB_SMALL = Path(__file__).resolve().parents[1] / "data" / "openb_small"


@pytest.fixture(scope="module")
def small() -> object:
    return load_openb(OPENB_SMALL, nodes="gpu")


def test_workload_resampled_up_to_the_target(small: object) -> None:
    inst = small
    wl = build_workload(inst, 5, until=1.3)  # type: ignore[arg-type]
    total, per_card = task_gpu(wl.instance)
    seq = pod_sequence(wl.instance)
    cap = gpu_capacity(wl.instance)
    demand = total[seq].sum()
    assert wl.n_listed == 51 and wl.n_resampled == len(seq) - 51 > 0
    assert demand <= 1.3 * cap
    # the list's own pods, each once, come first (shuffled); then draws from the list
    assert sorted(seq[:51].tolist()) == sorted(pod_sequence(inst).tolist())  # type: ignore[arg-type]
    assert wl.dist.weight.sum() == pytest.approx(1.0)
    again = build_workload(inst, 5, until=1.3)  # type: ignore[arg-type]
    assert np.array_equal(pod_sequence(again.instance), seq)
    other = build_workload(inst, 6, until=1.3)  # type: ignore[arg-type]
    assert not np.array_equal(pod_sequence(other.instance), seq)
    assert per_card.max() == 1000.0


def test_workload_cut_down_to_the_target(small: object) -> None:
    wl = build_workload(small, 1, until=0.5)  # type: ignore[arg-type]
    total, _ = task_gpu(wl.instance)
    assert wl.n_resampled == 0 and wl.n_listed < 51
    assert total[pod_sequence(wl.instance)].sum() <= 0.5 * wl.capacity
    with pytest.raises(ValueError):
        build_workload(small, 1, until=0.0)  # type: ignore[arg-type]


def test_levels_follow_the_papers_discretisation() -> None:
    # capacity 1000: arrived 0, 4 (0%), 10 (1%), 26 (3%: level 2 falls back to 1..3), 50 (5%)
    arrived = np.array([0.0, 4.0, 10.0, 26.0, 50.0])
    alloc = np.array([0.0, 4.0, 10.0, 20.0, 40.0])
    r = Run("x", 0, 0.0, 1000.0, arrived, alloc, alloc / 2, 1000.0 - alloc, 4, 0)
    got = r.levels("allocated", until=8)
    assert got[0] == pytest.approx(0.2)          # mean of 0 and 0.4 %
    assert got[1] == pytest.approx(1.0)
    assert got[2] == pytest.approx((1.0 + 2.0) / 2)  # no record at 2 %: records at 1..3 %
    assert got[5] == pytest.approx(4.0)
    assert got[4] == pytest.approx((2.0 + 4.0) / 2)  # records at 3 and 5 %
    assert got[6] == pytest.approx(4.0)  # records at 5..7 %
    assert np.isnan(got[7]) and np.isnan(got[8])  # nothing at 6..8 % or 7..9 %
    assert r.levels("unallocated", until=6)[5] == pytest.approx(96.0)
    assert r.levels("frag", until=6)[5] == pytest.approx(2.0)
    with pytest.raises(ValueError):
        r.levels("nope")


def test_run_records_every_arrival_and_passes_the_checker(small: object) -> None:
    wl = build_workload(small, 3)  # type: ignore[arg-type]
    for name in ("fgd", "gpu-bestfit"):
        run = run_policy(wl, make_policy(name, wl.dist))
        n = wl.instance.n_containers
        assert len(run.arrived) == len(run.allocated) == len(run.frag) == n + 1
        assert run.placed + run.rejected == n and run.placed > 0
        assert np.all(np.diff(run.arrived) >= 0) and np.all(np.diff(run.allocated) >= 0)
        assert np.all(run.allocated <= run.arrived + 1e-9)
        assert np.all(run.frag >= 0) and np.all(run.frag <= run.idle + 1e-6)
        assert run.frag[0] == pytest.approx(cluster_fragmentation(ClusterState(wl.instance), wl.dist))


@pytest.mark.parametrize("name", ["fgd", "fgd-pack", "gpu-packing", "gpu-clustering"])
def test_compiled_and_numpy_runs_record_the_same(small: object, name: str) -> None:
    """The compiled episode and the decision-by-decision numpy path give the same records; a seed
    always gives the same run (FGD-Pack built from the workload's pod counts)."""
    wl = build_workload(small, 4)  # type: ignore[arg-type]
    fast = run_policy(wl, make_policy(name, wl.dist, wl))
    slow = run_policy(wl, make_policy(name, wl.dist, wl), compiled=False)
    again = run_policy(wl, make_policy(name, wl.dist, wl))
    for a, b in ((fast, slow), (fast, again)):
        assert np.array_equal(a.allocated, b.allocated) and np.array_equal(a.frag, b.frag)
        assert a.placed == b.placed and a.rejected == b.rejected


def test_evaluate_common_workloads(small: object) -> None:
    res = evaluate(small, ["fgd", "gpu-packing"], seeds=[1, 2])  # type: ignore[arg-type]
    assert [r.name for r in res] == ["fgd", "gpu-packing"]
    assert all(len(r.runs) == 2 for r in res)
    assert all(r.published is None for r in res)  # not the paper's cluster
    for r in res:
        c = r.curve("unallocated")
        assert c.shape == (131,)
        assert np.nanmin(c) >= 0


def test_published_table() -> None:
    assert len(PUBLISHED) == 17
    assert PUBLISHED["default"]["06-FGD"][2] == 4.77
    assert PUBLISHED["default"]["05-BestFit"][2] == 7.09
    assert PUBLISHED["default"]["02-DotProd"][2] == 9.44
    assert all(len(v) == 6 for v in PUBLISHED.values())


def gpu_frag(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(cli, ["gpu-frag", *args])
    return r.exit_code, r.output


def test_cli_table_json_and_plot(tmp_path: Path) -> None:
    code, out = gpu_frag(str(OPENB_SMALL), "--seeds", "1", "--policies", "fgd,gpu-bestfit",
                         "--bound-time", "5")
    assert code == 0, out
    assert "fgd" in out and "gpu-bestfit" in out and "pub100" in out
    plot = tmp_path / "fig7.png"
    code, out = gpu_frag(str(OPENB_SMALL), "--seeds", "2", "--policies", "fgd", "--json", "--until", "110",
                         "--plot", str(plot))
    assert code == 0, out
    d = json.loads(out)
    assert d["seeds"] == [42, 43] and d["until"] == 110 and d["pod_list"] == "default"
    p = d["policies"][0]
    assert p["name"] == "fgd" and p["paper_name"] == "06-FGD"
    assert set(p["unallocated_gpu_pct"]) == {str(lv) for lv in LEVELS}
    assert p["unallocated_gpu_pct"]["130"] is None  # beyond --until
    assert p["published"] is None and len(p["per_seed_unallocated_100"]) == 2
    assert plot.stat().st_size > 0
    b = d["unallocated_gpu_bound"]  # the offline bound: below the policy wherever both exist
    assert set(b["median"]) == {str(lv) for lv in LEVELS} and b["median"]["130"] is None
    for lv in ("90", "95", "100"):
        if b["median"][lv] is not None and p["unallocated_gpu_pct"][lv] is not None:
            assert b["median"][lv] <= p["unallocated_gpu_pct"][lv]
    assert b["method"] == "config" and set(b["converged"]) == {str(lv) for lv in LEVELS}
    code, out = gpu_frag(str(OPENB_SMALL), "--seeds", "1", "--policies", "fgd", "--no-bound", "--json")
    assert code == 0 and json.loads(out)["unallocated_gpu_bound"] is None
    code, out = gpu_frag(str(OPENB_SMALL), "--seeds", "1", "--policies", "fgd", "--bound-method", "aggregate",
                         "--json")
    assert code == 0
    agg = json.loads(out)["unallocated_gpu_bound"]
    assert agg["method"] == "aggregate" and agg["converged"] is None
    code, out = gpu_frag(str(OPENB_SMALL), "--seeds", "1", "--policies", "fgd", "--bound-time", "0", "--json")
    assert code == 0  # stopped at once: still a valid bound, at least the aggregated one's unallocated %
    zero = json.loads(out)["unallocated_gpu_bound"]["median"]
    for lv, v in agg["median"].items():
        assert (v is None) == (zero[lv] is None) and (v is None or zero[lv] >= v - 1e-9)
    code, out = gpu_frag(str(OPENB_SMALL), "--seeds", "1", "--policies", "fgd", "--bound-method", "aggregate")
    assert "offline bound" in out


@pytest.mark.parametrize(("args", "words"), [
    (["--pods", "nope"], "no pod list 'nope'"),
    (["--policies", "zzz"], "unknown policy"),
    (["--plot", "fig.txt"], "--plot"),
    (["--pods", "missing.csv"], "no such pod list file"),
    (["--bound-method", "exact"], "--bound-method"),
    (["--bound-time", "-1"], "--bound-time"),
])
def test_bad_options_exit_2(args: list[str], words: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["gpu-frag", str(OPENB_SMALL), *args])
    assert e.value.code == 2
    assert words in capsys.readouterr().err


def test_not_an_openb_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["gpu-frag", str(tmp_path)])
    assert e.value.code == 2 and "not an openb folder" in capsys.readouterr().err
    code, out = gpu_frag(str(OPENB_SMALL), "--seeds", "0")
    assert code == 2


def test_real_openb_workload_and_empty_cluster_fragmentation(shared_data: Path) -> None:
    folder = shared_data / "alibaba-gpu-v2023"
    if not folder.is_dir():
        pytest.skip(f"{folder} is absent")
    inst = load_openb(folder, nodes="gpu")
    wl = build_workload(inst, 42)
    assert wl.capacity == 6_212_000 and wl.n_listed == 8152 and wl.n_resampled > 2000
    total, _ = task_gpu(wl.instance)
    assert 1.29 * wl.capacity < total[pod_sequence(wl.instance)].sum() <= 1.3 * wl.capacity
    # the paper's cached results give 13.88..14.08 % fragmented GPU at the first arrivals
    frag0 = cluster_fragmentation(ClusterState(wl.instance), wl.dist) / wl.capacity * 100
    assert 13.8 < frag0 < 14.1


def test_pods_by_the_file_name_in_the_data_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the file is not in the current folder, only in DATA's csv/ folder
    code, out = gpu_frag(str(OPENB_SMALL), "--pods", "openb_pod_list_multigpu20.csv", "--seeds", "1",
                         "--policies", "fgd", "--no-bound", "--json", "--until", "90")
    assert code == 0, out
    assert json.loads(out)["pod_list"] == "multigpu20"
