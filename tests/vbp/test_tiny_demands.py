"""Tiny demands (1e-300, subnormal) and tiny capacities: no numpy warning leaks, no crash.

A quotient ``capacity / demand`` overflows to ``inf`` for such demands, which is the right answer
there (capped by the container count); the code says so instead of letting numpy warn on stderr.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

from packing.feasibility.bounds import per_host_max
from packing.io import instance_from_dict
from vbp.cli import main

TINY: dict[str, Any] = {
    "name": "tiny", "resources": ["cpu", "mem"],
    "host_types": [{"name": "h", "capacity": [1e15, 9e15], "count": 3}],
    "apps": [{"name": "a", "demand": [1e-300, 5e-324], "count": 2}, {"name": "b", "demand": [1, 1e-310],
                                                                   "count": 1}],
}
TINY_CAPACITY: dict[str, Any] = {
    "name": "tiny2", "resources": ["cpu"], "host_types": [{"name": "h", "capacity": [1e-300], "count": 3}],
    "apps": [{"name": "a", "demand": [1e-300], "count": 2}, {"name": "b", "demand": [5e-301], "count": 1}],
}


@pytest.mark.filterwarnings("error")
def test_per_host_max_of_tiny_demands_is_the_cap() -> None:
    m = per_host_max(instance_from_dict(TINY))
    assert m.tolist() == [[2.0], [1.0]]  # as many as there are: every container fits on one host


@pytest.mark.parametrize("doc", [TINY, TINY_CAPACITY], ids=["tiny-demand", "tiny-capacity"])
@pytest.mark.parametrize("args", [["solve"], ["solve", "--method", "arcflow", "--time-limit", "5"],
                                  ["simulate"], ["compare", "--orders", "1", "-q", "--time-limit", "5"]])
def test_no_warning_reaches_stderr(doc: dict[str, Any], args: list[str], tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "inst.json"
    path.write_text(json.dumps(doc))
    with warnings.catch_warnings(), pytest.raises(SystemExit) as e:
        warnings.simplefilter("error", RuntimeWarning)  # a numpy warning becomes an internal error
        main([args[0], str(path), *args[1:]])
    out, err = capsys.readouterr()
    assert e.value.code in (0, None), err
    assert "Warning" not in err and "internal error" not in err, err
