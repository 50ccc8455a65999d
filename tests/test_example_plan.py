"""The capacity-planning example runs end to end and answers its three questions optimally."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "plan_capacity.py"


def test_plan_capacity(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = importlib.util.spec_from_file_location("example_plan_capacity", EXAMPLE)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = mod.main(time_limit=30.0, plot=str(tmp_path / "p.png"))  # the proofs take about a second
    text = capsys.readouterr().out
    # hand check: 33 cores and 101 GiB of demand need at least ceil(33 / 16) = 3 hosts of
    # 16c64g; three suffice (one search, cache and checkout each on every host, the rest fits)
    assert out["hosts"] == 3
    assert "how many 16c64g hosts" in text and "(optimal" in text
    costs = out["growth_costs"]
    assert costs == sorted(costs) and costs[0] == pytest.approx(out["cost"])
    assert (tmp_path / "p.png").stat().st_size > 5000
