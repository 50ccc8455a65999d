"""A multi-cluster scenario through ``compare`` and ``sweep``: every arrival counted, one optimum.

The shipped EADE agent chooses WAIT for some tasks; in a stream without departures they are never
placed. They are neither deployed nor rejected (a host could take them), so the outputs count them
as ``waiting``; every arrival is then deployed, rejected, waiting or departed. ``vbp compare`` and
``vbp sweep --optimum`` measure against the same optimum (the most tasks deployed).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from packing.generators.multicluster import generate_multicluster
from packing.io import save_instance
from packing.model.instance import App, HostType, Instance, Request
from packing.sim.evaluation import ProcessExecutor, Scenario, SerialExecutor, make_executor
from packing.sim.simulator import sample_orders
from policies.runner import evaluate_policies
from vbp.cli import cli

pytest.importorskip("torch")

REPO = Path(__file__).resolve().parents[2]
MC_DATA = REPO / "tests" / "data" / "multicluster_small"
EADE = str(REPO / "policies" / "data" / "eade-multicluster.pt")
TASKS = 160


@pytest.fixture(scope="module")
def scenario() -> Instance:
    """16 clusters x 4 nodes (the shipped agent's shape), 160 tasks: more than the cards hold."""
    return generate_multicluster(MC_DATA, MC_DATA, clusters=16, nodes=4, tasks=TASKS, seed=0)


@pytest.fixture(scope="module")
def scenario_file(scenario: Instance, tmp_path_factory: pytest.TempPathFactory) -> str:
    p = tmp_path_factory.mktemp("mc") / "mc.json"
    save_instance(scenario, p)
    return str(p)


def cli_run(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.stdout + r.stderr


def test_compare_json_counts_the_tasks_an_agent_leaves_waiting(scenario_file: str) -> None:
    code, out = cli_run("compare", scenario_file, "--policies", f"mc-util,{EADE}", "--orders", "1",
                        "--json", "-q", "--time-limit", "10")
    assert code == 0, out
    doc = json.loads(out)
    assert doc["optimum"]["objective_kind"] == "deployed"
    util, eade = doc["policies"]
    for p in doc["policies"]:  # every arrival once: deployed, rejected, waiting or departed
        assert p["deployed_mean"] + p["rejected_mean"] + p["waiting_mean"] + p["departed_mean"] == TASKS
        assert p["departed_mean"] == 0  # departures are dropped without --keep-departures
    assert eade["name"] == "eade-multicluster"
    assert eade["waiting_mean"] > 0 and eade["deployed_mean"] < TASKS  # the agent's WAITs
    assert util["rejected_mean"] > 0 and util["waiting_mean"] == 0  # a heuristic never waits


def test_the_lost_column_is_rejected_plus_waiting(scenario: Instance) -> None:
    from packing.report.comparison import ComparisonRow
    from packing.report.text import comparison_lines

    res = SimpleNamespace(objective=150.0, hosts=64, status="optimal", bound_kind="upper", bound=150.0,
                          method="m", objective_kind="deployed")
    rows = [ComparisonRow("agent", 64.0, 64, 64, 64.0, 0.9, 2.0, None, 140.0, 8.0, 10.0)]
    lines = comparison_lines(scenario, res, rows, "1 order(s)", 0)
    line = next(x for x in lines if x.startswith("agent"))
    assert line.split()[1:4] == ["140.0", "-", "10.0"]  # deployed, excess, lost (departed are not lost)


def test_the_serial_record_counts_the_waiting_tasks(scenario: Instance) -> None:
    sc = Scenario(scenario, tuple(sample_orders(scenario, 1, 0)))
    with SerialExecutor() as ex:
        (rec,) = evaluate_policies(sc, [EADE], seed=0, executor=ex)[0]
    assert rec.waiting > 0 and rec.departed == 0 and rec.deployed + rec.rejected + rec.waiting == TASKS


def test_a_process_pool_carries_waiting_and_departed() -> None:
    # one host of 4: two containers of 2 leave at 1; at 2 two more take their place; at 3 the
    # last one finds the host full and is rejected (ff does not wait)
    inst = Instance("dep", ("cpu",), (HostType("h", (4.0,), 1),), (App("a", (2.0,), 5),),
                    requests=(Request(0.0, "a", 2, end=1.0), Request(2.0, "a", 2), Request(3.0, "a", 1)))
    sc = Scenario(inst, tuple(sample_orders(inst, 1, 0)))
    with SerialExecutor() as ex:
        (serial,) = evaluate_policies(sc, ["ff"], seed=0, executor=ex)[0]
    assert (serial.deployed, serial.departed, serial.rejected, serial.waiting) == (2, 2, 1, 0)
    with ProcessExecutor(1) as ex:
        (other,) = evaluate_policies(sc, ["ff"], seed=0, executor=ex)[0]
    assert other.numbers() == serial.numbers()


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["process", "ray"])
def test_every_executor_fills_waiting_in_the_record(scenario: Instance, kind: str) -> None:
    if kind == "ray":
        ray = pytest.importorskip("ray")
        if ray.is_initialized():  # pragma: no cover - another test left Ray running
            pytest.skip("Ray already initialised in this process")
    sc = Scenario(scenario, tuple(sample_orders(scenario, 1, 0)))
    with SerialExecutor() as ex:
        (serial,) = evaluate_policies(sc, [EADE], seed=0, executor=ex)[0]
    with make_executor(kind, 1) as ex:
        (other,) = evaluate_policies(sc, [EADE], seed=0, executor=ex)[0]
    assert other.waiting == serial.waiting > 0 and other.numbers() == serial.numbers()


def test_sweep_optimum_is_the_optimum_of_compare(scenario_file: str, tmp_path: Path) -> None:
    code, out = cli_run("compare", scenario_file, "--policies", "mc-util", "--orders", "1", "--json",
                        "-q", "--time-limit", "10")
    assert code == 0, out
    opt = json.loads(out)["optimum"]
    table = tmp_path / "t.csv"
    code, out = cli_run("sweep", scenario_file, "--policies", "mc-util", "--orders", "1", "--optimum",
                        "--time-limit", "10", "-q", "--out", str(table))
    assert code == 0, out  # the fewest hosts of every task placed does not exist here
    (row,) = list(csv.DictReader(table.open(newline="")))
    assert row["optimum_kind"] == opt["objective_kind"] == "deployed"
    assert float(row["optimum"]) == opt["objective"] and float(row["bound"]) == opt["bound"]
    assert row["optimum_status"] == opt["status"]
    assert float(row["excess"]) == pytest.approx((opt["objective"] - int(row["deployed"])) / opt["objective"])
    assert int(row["deployed"]) + int(row["rejected"]) + int(row["waiting"]) == TASKS


def test_the_hosts_table_notes_waiting_containers() -> None:
    from packing.io.builtin import builtin_instance
    from packing.report.comparison import ComparisonRow
    from packing.report.text import comparison_lines

    res = SimpleNamespace(objective=15.0, objective_kind="hosts", status="optimal", bound=15.0,
                          placement=None)
    rows = [ComparisonRow("bf", 20.0, 20, 20, 20.0, 0.7, 0.0, None, 235.0),
            ComparisonRow("agent", 18.0, 18, 18, 18.0, 0.7, 0.0, None, 230.0, 5.0)]
    out = "\n".join(comparison_lines(builtin_instance("sigma"), res, rows, "1 order(s)", 0))
    assert "left containers waiting (WAIT) at the end, never placed: agent 5." in out
    assert "bf 0" not in out
