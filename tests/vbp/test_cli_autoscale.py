"""``vbp simulate --autoscale`` and ``vbp compare --autoscale``: the pool's numbers in text and JSON."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.vbp.cli_run import run
from tests.vbp.test_json_schemas import run_json

DAY = str(Path(__file__).resolve().parents[2] / "examples" / "data" / "autoscale-day.json")


def test_simulate_json_and_text(capsys: pytest.CaptureFixture[str]) -> None:
    most = run_json(["simulate", DAY, "--policy", "k8s-most", "--autoscale", "--json"], capsys)
    least = run_json(["simulate", DAY, "--policy", "k8s-least", "--autoscale", "--json"], capsys)
    assert most["autoscale"] == {"scale_down_delay": 0.0}
    (m,), (lst,) = most["runs"], least["runs"]
    assert m["node_hours"] < lst["node_hours"]  # spreading keeps nodes from emptying
    assert m["nodes"] >= m["hosts"] and m["nodes_peak"] >= m["hosts_peak"]
    never = run_json(["simulate", DAY, "--policy", "k8s-most", "--autoscale", "--scale-down-delay", "inf",
                      "--json"], capsys)
    assert never["autoscale"] == {"scale_down_delay": None}
    assert never["runs"][0]["node_hours"] > m["node_hours"]
    fixed = run_json(["simulate", DAY, "--policy", "k8s-most", "--json"], capsys)
    assert fixed["autoscale"] is None and "node_hours" not in fixed["runs"][0]
    code, out, _ = run(["simulate", DAY, "--policy", "k8s-most", "--autoscale"], capsys)
    assert code == 0 and "node-hours" in out and f"{m['node_hours']:.2f}" in out


def test_compare_json_and_text(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["compare", DAY, "--policies", "k8s-least,k8s-most", "--orders", "2", "--keep-departures",
            "--autoscale", "--scale-down-delay", "0.5", "-q", "--time-limit", "5"]
    doc = run_json([*args, "--json"], capsys)
    assert doc["autoscale"] == {"scale_down_delay": 0.5}
    least, most = doc["policies"]
    assert most["node_hours_mean"] < least["node_hours_mean"]
    code, out, _ = run(args, capsys)
    assert code == 0 and "autoscaled pool, scale-down delay 0.5" in out
    assert f"{most['node_hours_mean']:.2f}" in out


def test_delay_without_autoscale(capsys: pytest.CaptureFixture[str]) -> None:
    for cmd in (["simulate", "sigma"], ["compare", "sigma", "-q"]):
        code, _, err = run([*cmd, "--scale-down-delay", "2"], capsys)
        assert code == 2 and "--scale-down-delay: 2: only with --autoscale" in err
    code, _, err = run(["simulate", "sigma", "--autoscale", "--scale-down-delay", "-1"], capsys)
    assert code == 2


def test_plot_draws_the_pool(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from packing.io import load_instance
    from packing.sim.autoscale import Autoscale
    from packing.sim.simulator import simulate
    from policies.registry import get_policy

    out = tmp_path / "pool.png"
    code, text, _ = run(["simulate", DAY, "--policy", "bf", "--autoscale", "--scale-down-delay", "1",
                         "--plot", str(out)], capsys)
    assert code == 0 and out.stat().st_size > 0
    r = simulate(load_instance(DAY), get_policy("bf"), autoscale=Autoscale(1.0))
    assert r.pool is not None
    sizes = r.engine.pool.sizes if r.engine.pool is not None else []
    assert len(sizes) == len(r.trajectory.time) and max(sizes) == r.pool.nodes_peak
    assert all(n >= h for n, h in zip(sizes, r.trajectory.hosts_used, strict=True))


def test_uncounted_host_types_are_a_pool_only_with_autoscale(capsys: pytest.CaptureFixture[str]) -> None:
    """A deployments CSV on an uncounted host type: the fixed pool needs a count (exit 2, naming
    the type), the autoscaled pool opens what it needs (tests/data/front: 9 pods on 4c16g
    nodes, best fit, no departures)."""
    front = Path(__file__).resolve().parents[1] / "data" / "front" / "deployments.csv"
    for cmd in (["simulate", str(front), "--policy", "bf"],
                ["compare", str(front), "--policies", "bf,ff", "--orders", "2", "-q"]):
        code, _, err = run([*cmd, "--hosts", "std=4c16g:price=1"], capsys)
        assert code == 2 and "std.count" in err
        code, out, err = run([*cmd, "--hosts", "std=4c16g:price=1", "--autoscale"], capsys)
        assert code == 0, err
    doc = run_json(["simulate", str(front), "--policy", "bf", "--hosts", "std=4c16g:price=1",
                    "--autoscale", "--json"], capsys)
    assert doc["runs"][0]["nodes_peak"] == doc["runs"][0]["hosts_peak"]
