"""``vbp train swarm`` reports the held-out comparison with Best-Fit and warns when the result is worse."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from policies.agents.heldout import HeldOut
from policies.swarm.train import SWARM_METRICS
from vbp.cli import cli


def _row(policy: str, hosts: float, rejected: float = 0.0) -> dict[str, float | str]:
    return {"policy": policy, "hosts_mean": hosts, "rejected_mean": rejected}


def _worse_than_best_fit(rows: list[dict]) -> tuple[float, float] | None:
    """``(tuned, bf)`` mean hosts when the held-out comparison says the tuned policy is worse."""
    by = {r["policy"]: r for r in rows}
    if "swarm" not in by or "bf" not in by:
        return None
    means = [{"hosts": float(by[k]["hosts_mean"]), "rejected": float(by[k]["rejected_mean"])}
             for k in ("swarm", "bf")]
    cmp = HeldOut("orders", 4, "swarm", "bf", SWARM_METRICS, means[0], means[1])
    return (means[0]["hosts"], means[1]["hosts"]) if cmp.worse else None


@pytest.mark.parametrize(
    ("tuned", "bf", "worse"),
    [
        (_row("swarm", 16.9), _row("bf", 18.8), None),
        (_row("swarm", 18.8), _row("bf", 18.8), None),              # a tie is not worse
        (_row("swarm", 19.0), _row("bf", 18.8), (19.0, 18.8)),
        (_row("swarm", 15.0, 1.0), _row("bf", 18.8), (15.0, 18.8)),  # fewer hosts but rejects more
        (_row("swarm", 19.0, 0.0), _row("bf", 15.0, 2.0), None),     # bf rejects: more hosts is fine
    ],
)
def test_worse_than_best_fit(tuned: dict, bf: dict, worse: tuple[float, float] | None) -> None:
    assert _worse_than_best_fit([tuned, bf, _row("ff", 30.0)]) == worse
    assert _worse_than_best_fit([tuned]) is None


def test_warning_matches_the_held_out_table(tmp_path: Path) -> None:
    out = tmp_path / "tuned.json"
    args = ["train", "swarm", "sigma", "--particles", "2", "--iters", "1", "--samples", "1",
            "--held-out", "4",
            "--init", "none", "--seed", "3", "--json", "--out", str(out)]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    by = {row["policy"]: row for row in d["held_out"]}
    assert d["worse_than_bf"] == (_worse_than_best_fit(d["held_out"]) is not None)
    assert d["worse_than_bf"] == (by["swarm"]["hosts_mean"] > by["bf"]["hosts_mean"]
                                  or by["swarm"]["rejected_mean"] > by["bf"]["rejected_mean"])
    assert ("warning: on the 4 held-out orders" in r.stderr) == d["worse_than_bf"]
    assert d["worse_than_bf"]  # seed 3 with no Best-Fit start and one iteration spreads over every host
