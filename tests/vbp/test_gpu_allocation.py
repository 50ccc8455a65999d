"""On a GPU instance the allocation is shown per resource: the cards' 100% no longer hides the rest.

The instance: ten hosts of 32 cores, 128 GiB and 2 cards; 4 training containers (8 cores, 16 GiB,
2 whole cards), 8 inference containers (2 cores, 8 GiB, half a card), 6 web containers (4 cores,
4 GiB). Together they need 12 cards, so 6 hosts, and then (by hand) the cores are 72 / 192 = 37.50%
allocated, the memory 152 / 768 = 19.79% and the cards 12 / 12 = 100%. Spread over all ten hosts
(`k8s-least`): 72 / 320 = 22.50%, 152 / 1280 = 11.88% and 12 / 20 = 60.00%.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from vbp.cli import cli

GPU = {
    "name": "gpu-small", "resources": ["cpu", "mem"], "gpu_resources": ["gpu_milli"],
    "host_types": [{"name": "g2", "capacity": [32, 128], "count": 10, "gpus": 2, "gpu_capacity": [1000]}],
    "apps": [{"name": "train", "demand": [8, 16], "count": 4, "gpu": {"cards": 2, "whole": True}},
             {"name": "infer", "demand": [2, 8], "count": 8, "gpu": {"cards": 1, "per_card": [500]}},
             {"name": "web", "demand": [4, 4], "count": 6}],
}
PACKED = ["37.50%", "19.79%", "100.00%"]
SPREAD = ["22.50%", "11.88%", "60.00%"]


@pytest.fixture
def gpu(tmp_path: Path) -> str:
    p = tmp_path / "gpu.json"
    p.write_text(json.dumps(GPU))
    return str(p)


def run(*args: str) -> str:
    r = CliRunner().invoke(cli, list(args))
    assert r.exit_code == 0, r.output
    return r.stdout


def test_compare_shows_cpu_memory_and_cards(gpu: str) -> None:
    out = run("compare", gpu, "--policies", "bf,k8s-least", "--orders", "2", "-q", "--time-limit", "10")
    lines = out.splitlines()
    assert lines[1].split() == ["policy", "hosts", "mean", "min", "max", "cpu", "mem", "gpu_milli", "excess",
                                "rejected"]
    rows = {ln.split()[0]: ln.split() for ln in lines if ln.split() and ln.split()[0] in ("optimum", "bf",
                                                                                          "k8s-least")}
    assert rows["optimum"][2:5] == PACKED  # 6 hosts, proven
    assert rows["bf"][4:7] == PACKED and rows["bf"][7] == "+0.0%"
    assert rows["k8s-least"][4:7] == SPREAD and rows["k8s-least"][7] == "+66.7%"
    assert "alloc rate" not in out


def test_compare_json_gives_every_resource(gpu: str) -> None:
    doc = json.loads(run("compare", gpu, "--policies", "bf,k8s-least", "--orders", "2", "--json",
                         "--time-limit", "10"))
    for p in doc["policies"]:
        by = p["allocation_by_resource_mean"]
        assert list(by) == ["cpu", "mem", "gpu_milli"]
        assert max(by.values()) == pytest.approx(p["allocation_mean"])  # the bottleneck: the cards
    spread = doc["policies"][1]["allocation_by_resource_mean"]
    assert spread == pytest.approx({"cpu": 72 / 320, "mem": 152 / 1280, "gpu_milli": 0.6})


def test_simulate_and_sweep_name_the_resource(gpu: str, tmp_path: Path) -> None:
    out = run("simulate", gpu, "--policy", "k8s-least", "--orders", "1")
    head, row = out.splitlines()[1:3]
    assert head.split()[3:6] == ["cpu", "mem", "gpu_milli"] and row.split()[3:6] == SPREAD
    table = tmp_path / "t.csv"
    run("sweep", gpu, "sigma", "--policies", "bf", "--orders", "1", "-q", "--out", str(table))
    rows = list(csv.DictReader(table.open(newline="")))
    assert [(r["instance"], r["bottleneck"], float(r["allocation"])) for r in rows][0] == (
        "gpu-small", "gpu_milli", 1.0)


def test_an_instance_without_cards_keeps_one_column() -> None:
    out = run("simulate", "sigma", "--policy", "bf", "--orders", "1")
    assert out.splitlines()[1].split()[3] == "alloc"
