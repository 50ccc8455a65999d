"""vbp.plan and ``vbp plan``: optimal plans agree with an independent model, headroom and reserve
hold exactly, the JSON follows its schema, bad input is one line and exit 2."""

from __future__ import annotations

import json
import math
import random
from fractions import Fraction
from pathlib import Path

import pytest

from packing.feasibility.checker import check
from packing.io import load_placement
from packing.model.instance import App, Rule
from packing.plan.model import Demand, HostOffer
from tests.vbp.plan_oracle import optimum
from vbp import plan
from vbp.cli import main

GI, MI = 2**30, 2**20
SCHEMA = Path(__file__).resolve().parents[2] / "docs" / "schemas" / "vbp-plan-3.json"


def _case(rng: random.Random) -> tuple[Demand, list[HostOffer], list[tuple[int, int, int]]]:
    """Apps in millicores and MiB, host types in cores and GiB (priced or not), maybe a rule."""
    apps = []
    for i in range(rng.randint(2, 4)):
        milli, mib = rng.choice([500, 1000, 1500, 2000, 3000]), rng.choice([512, 1024, 2048, 3072])
        apps.append(App(f"a{i}", (milli / 1000, mib / 1024, 0.0), rng.randint(1, 4),
                        max_per_host=rng.choice([None, None, 1, 2])))
    priced = rng.random() < 0.5
    offers = [HostOffer(f"t{t}", 1000 * rng.choice([2, 4, 6, 8]), GI * rng.choice([4, 6, 8]),
                        price=rng.choice([0.8, 1.5, 2.5, 4.0]) if priced else None)
              for t in range(rng.randint(2, 3))]
    rules = [(0, 1, rng.randint(0, 1))] if rng.random() < 0.4 else []
    demand = Demand(tuple(apps), tuple(Rule(f"a{a}", f"a{b}", k) for a, b, k in rules))
    return demand, offers, rules


def _oracle(demand: Demand, offers: list[HostOffer], rules: list[tuple[int, int, int]],
            headroom: Fraction, reserve: tuple[int, int]) -> Fraction | None:
    """The optimum of the independent model, capacities computed here from the raw numbers."""
    n = sum(a.count for a in demand.apps)
    types = []
    for o in offers:
        cpu = math.floor((o.cpu_milli - reserve[0]) * (1 - headroom))
        mem = math.floor(Fraction(o.memory_bytes - reserve[1], MI) * (1 - headroom))  # MiB
        types.append(([cpu, mem], Fraction(str(o.price)) if o.price is not None else Fraction(1),
                      n))
    apps = [([round(a.demand[0] * 1000), round(a.demand[1] * 1024)], a.count, a.max_per_host)
            for a in demand.apps]
    return optimum(types, apps, rules)[0]


@pytest.mark.parametrize("seed", range(10))
def test_optimal_plans_agree_with_an_independent_model(seed: int) -> None:
    rng = random.Random(seed)
    demand, offers, rules = _case(rng)
    headroom = rng.choice([Fraction(0), Fraction(15, 100)])
    reserve = rng.choice([(0, 0), (250, 256 * MI)])
    res = plan(demand, offers, headroom=float(headroom) or None,
               reserve=f"{reserve[0]}m,{reserve[1] // MI}Mi" if reserve[0] else None,
               time_limit=20, seed=seed)
    (s,) = res.scenarios
    truth = _oracle(demand, offers, rules, headroom, reserve)
    if truth is None:
        assert s.status == "infeasible"
        return
    assert s.status in ("optimal", "feasible")
    value = s.cost if s.objective_kind == "cost" else s.hosts
    assert value is not None
    if s.status == "optimal":
        assert math.isclose(value, float(truth), rel_tol=1e-9), (value, truth)
    assert s.bound <= float(truth) + 1e-9 <= value + 2e-9
    assert s.instance is not None and s.placement is not None
    assert check(s.instance, s.placement, require_all=True) == []


DEPLOYMENTS = """name,replicas,cpu,memory,max_per_host
web,9,700m,1536Mi,
api,5,1300m,2Gi,2
cache,4,250m,3G,
"""
# the same demand, exactly: millicores and bytes
EXACT = {"web": (9, 700, 1536 * MI), "api": (5, 1300, 2 * GI), "cache": (4, 250, 3 * 10**9)}


def test_headroom_and_reserve_hold_exactly(tmp_path: Path) -> None:
    d = tmp_path / "d.csv"
    d.write_text(DEPLOYMENTS)
    hosts = ["std:4c8g", "big:8c12g"]
    raw = {"std": (4000, 8 * GI), "big": (8000, 12 * GI)}
    res = plan(d, hosts, headroom="cpu=20%,memory=10%", reserve="250m,512Mi", time_limit=20)
    (s,) = res.scenarios
    assert s.instance is not None and s.placement is not None
    assert check(s.instance, s.placement, require_all=True) == []
    # independent check: per host, the real demand within (capacity - reserve) * (1 - headroom)
    load: dict[str, list[int]] = {}
    for app, hs in s.placement.hosts.items():
        assert len(hs) == EXACT[app][0]
        for h in hs:
            name = s.instance.host_names[h]
            cur = load.setdefault(name, [0, 0])
            cur[0] += EXACT[app][1]
            cur[1] += EXACT[app][2]
    for name, (cpu, mem) in load.items():
        c_cpu, c_mem = raw[name.split("#")[0]]
        assert cpu <= (c_cpu - 250) * Fraction(8, 10), name
        assert mem <= (c_mem - 512 * MI) * Fraction(9, 10), name
    # the headroom bites: planning against the full capacity needs fewer hosts
    full = plan(d, hosts, time_limit=20).scenarios[0]
    assert full.hosts is not None and s.hosts is not None and full.hosts < s.hosts
    assert "reserve cpu=250m, memory=512Mi" in res.planned_against


def test_growth_scenarios_json_schema_and_out(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    d = tmp_path / "d.csv"
    d.write_text(DEPLOYMENTS + "huge,1,64,1Gi,\n")
    out, fig = tmp_path / "pl.json", tmp_path / "p.png"
    with pytest.raises(SystemExit) as e:
        main(["plan", str(d), "--hosts", "std:4c8g:0.5", "--hosts", "big:80c12g:3:1", "--growth",
              "1,2", "--time-limit", "20", "--json", "--out", str(out), "--plot", str(fig)])
    assert e.value.code == 3  # a scenario without a plan
    doc = json.loads(capsys.readouterr().out)
    jsonschema.validate(doc, json.loads(SCHEMA.read_text()))
    one, two = doc["scenarios"]
    assert (one["growth"], two["growth"]) == (1, 2)
    assert one["objective_kind"] == "cost" and one["per_type"][1]["hosts"] == 1
    # growth 2 needs 2 huge containers but only one big host exists: infeasible
    assert two["status"] == "infeasible" and two["bound"] is None
    assert "huge" in two["reason"] or two["hosts"] is None
    assert (tmp_path / "pl-x1.json").is_file() and not (tmp_path / "pl-x2.json").exists()
    assert fig.stat().st_size > 5000
    # the placement written is the plan's, on the plan's instance
    res = plan(d, ["std:4c8g:0.5", "big:80c12g:3:1"], time_limit=20)
    inst = res.scenarios[0].instance
    assert inst is not None
    assert check(inst, load_placement(tmp_path / "pl-x1.json", inst), require_all=True) == []


def test_infeasible_app_and_exit_status(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = tmp_path / "d.csv"
    d.write_text("name,replicas,cpu,memory\nbig,1,32,1Gi\n")
    res = plan(d, ["std:16c64g"])
    (s,) = res.scenarios
    assert s.status == "infeasible" and s.reason is not None and "'big'" in s.reason
    assert res.to_dict()["scenarios"][0]["bound"] is None
    with pytest.raises(SystemExit) as e:
        main(["plan", str(d), "--hosts", "std:16c64g"])
    assert e.value.code == 3
    assert "fits on no host type" in capsys.readouterr().out


@pytest.mark.parametrize(("csv_text", "args", "needle"), [
    ("name,replicas,cpu,memory\nweb,1,2x,1Gi\n", [], "unknown unit"),
    ("name,replicas,cpu,memory,disk\nweb,1,2,1Gi,3\n", [], "unknown column"),
    ("name,replicas,cpu,memory\nweb,1,2,1Gi\nweb,1,2,1Gi\n", [], "duplicate name"),
    ("name,replicas,cpu,memory\nweb,1,2,1Gi\n", ["--growth", "0"], "greater than 0"),
    ("name,replicas,cpu,memory\nweb,1,2,1Gi\n", ["--growth", "1,-2"], "greater than 0"),
    ("name,replicas,cpu,memory\nweb,1,2,1Gi\n", ["--hosts", "zero:0c8g"], "needs CPU"),
    ("name,replicas,cpu,memory\nweb,1,2,1Gi\n", ["--headroom", "15"], "percentage"),
    ("name,replicas,cpu,memory\nweb,1,2,1Gi\n", ["--reserve", "16,1Gi"], "leaves no cpu"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          csv_text: str, args: list[str], needle: str) -> None:
    d = tmp_path / "d.csv"
    d.write_text(csv_text)
    out = tmp_path / "pl.json"
    with pytest.raises(SystemExit) as e:
        main(["plan", str(d), "--hosts", "std:16c64g", *args, "--out", str(out)])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and needle in err[0], err
    assert not out.exists() and not any(tmp_path.glob("pl*"))


def _two_scenarios(tmp_path: Path, **kw: object) -> object:
    d = tmp_path / "d.csv"
    d.write_text(DEPLOYMENTS)
    return plan(d, ["std:4c8g", "big:8c16g"], growth=(1, 1.5), time_limit=10, **kw)  # type: ignore[arg-type]


@pytest.mark.slow
def test_process_executor_agrees(tmp_path: Path) -> None:
    serial = _two_scenarios(tmp_path)
    proc = _two_scenarios(tmp_path, executor="process", workers=2)
    assert [(s.status, s.hosts, s.cost) for s in serial.scenarios] == [  # type: ignore[attr-defined]
        (s.status, s.hosts, s.cost) for s in proc.scenarios]  # type: ignore[attr-defined]


def test_frame(tmp_path: Path) -> None:
    serial = _two_scenarios(tmp_path)
    pd = pytest.importorskip("pandas")
    frame = serial.to_frame()  # type: ignore[attr-defined]
    assert isinstance(frame, pd.DataFrame) and len(frame) == 4
    assert {"growth", "type", "hosts", "util_cpu", "stranded_memory"} <= set(frame.columns)


def test_demand_overhead_adds_to_the_reserve() -> None:
    # one DaemonSet pod of 1 core per host, plus a reserve of 1 core: 4 - 2 = 2 cores per host
    # are left, so six 1-core replicas need exactly 3 hosts (2 without the DaemonSet)
    apps = (App("w", (1.0, 0.5, 0.0), 6),)
    with_daemon = Demand(apps, overhead=(1000, 0, 0))
    res = plan(with_daemon, ["h:4c8g"], reserve="1,0Mi", time_limit=10)
    (s,) = res.scenarios
    assert s.status == "optimal" and s.hosts == 3
    assert s.per_type[0].capacity["cpu"] == 2.0
    assert "cpu=2" in res.planned_against
    assert plan(Demand(apps), ["h:4c8g"], reserve="1,0Mi", time_limit=10).scenarios[0].hosts == 2


def test_gpu_cards_by_hand(tmp_path: Path) -> None:
    d = tmp_path / "d.csv"
    d.write_text("name,replicas,cpu,memory,gpu\ntrain,3,8,64Gi,4\nweb,4,1,2Gi,\n")
    hosts = ["std:16c64g:1", "gpu:32c256g8gpu:10"]
    # 12 cards need two 8-card hosts (cost 20); the web replicas fit beside them
    (s,) = plan(d, hosts, time_limit=10).scenarios
    assert (s.status, s.hosts, s.cost) == ("optimal", 2, 20.0)
    gpu = s.per_type[1]
    assert gpu.hosts == 2 and gpu.utilisation["gpu"] == 0.75 and gpu.bottleneck == "gpu"
    # a bare percentage leaves GPU cards alone; a named one halves them: one train per host
    (h,) = plan(d, hosts, headroom="15%", time_limit=10).scenarios
    assert h.cost == 20.0 and h.per_type[1].capacity["gpu"] == 8.0
    (g,) = plan(d, hosts, headroom="gpu=50%", time_limit=10).scenarios
    assert (g.status, g.cost, g.per_type[1].capacity["gpu"]) == ("optimal", 30.0, 4.0)


def test_text_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = tmp_path / "d.csv"
    d.write_text(DEPLOYMENTS)
    fig = tmp_path / "hosts.png"
    with pytest.raises(SystemExit) as e:
        main(["plan", str(d), "--hosts", "std:4c8g", "--growth", "1,2", "--time-limit", "10",
              "--reserve", "cpu=100m", "--plot", str(fig)])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("planned against: capacity minus reserve cpu=100m")
    lines = out.splitlines()
    assert lines[2].split() == ["growth", "status", "hosts", "cost", "bound", "gap", "time"]
    one = lines[3].split()
    assert one[:2] == ["1", "optimal"] and one[3] == "-"  # no prices: no cost
    assert "growth 2 per host type (hosts used / hosts allowed):" in out
    assert fig.stat().st_size > 5000


def test_instance_file_demand_keeps_rules_and_caps() -> None:
    """Sigma as DEMAND (its host types ignored): the same optimum as solving it on its own hosts."""
    from packing.io.builtin import builtin_instance
    from solvers import solve

    sigma = Path(__file__).resolve().parents[2] / "packing" / "data" / "sigma.json"
    (s,) = plan(sigma, ["h:96c512g"], time_limit=20).scenarios
    ref = solve(builtin_instance("sigma"), time_limit=20)
    assert ref.status == "optimal" and s.status == "optimal"
    assert s.hosts == ref.objective == 15
    assert s.max_hosts["h"] <= 30  # first fit's bound, below sigma's own 30 hosts
