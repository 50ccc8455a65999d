"""The solver options a Python caller gives get the command line's checks (solvers.solve, vbp.plan)."""

from __future__ import annotations

import numpy as np
import pytest

import vbp
from packing.errors import InputError
from packing.model.instance import App, HostType, Instance
from packing.plan.model import Demand, HostOffer
from solvers import solve

INST = Instance(name="two", resources=("cpu", "mem"), host_types=(HostType("h", (4.0, 4.0), 3),),
                apps=(App("a", (2.0, 1.0), 3),))
BAD = [({"time_limit": -1.0}, "time_limit"), ({"time_limit": float("nan")}, "time_limit"),
       ({"time_limit": 0.0}, "time_limit"), ({"time_limit": True}, "time_limit"),
       ({"seed": -1}, "seed"), ({"seed": 2**32}, "seed"), ({"seed": 1.5}, "seed")]


@pytest.mark.parametrize("kw, field", BAD + [({"workers": 0}, "workers"), ({"workers": 2.0}, "workers")])
def test_solve_refuses_options_the_command_line_refuses(kw: dict[str, object], field: str) -> None:
    with pytest.raises(InputError, match=field):
        solve(INST, "cpsat", **kw)  # type: ignore[arg-type]


def test_solve_takes_numpy_whole_numbers() -> None:
    res = solve(INST, "cpsat", time_limit=np.float64(5.0), workers=np.int64(1), seed=np.int64(3))
    assert res.objective == 2  # 3 containers of 2 cpu on 4-cpu hosts


@pytest.mark.parametrize("kw, field", BAD + [({"threads": 0}, "threads")])
def test_plan_refuses_options_the_command_line_refuses(kw: dict[str, object], field: str) -> None:
    demand = Demand((App("a", (1.0, 1.0, 0.0), 2),))
    with pytest.raises(InputError, match=field):
        vbp.plan(demand, [HostOffer("h", 4000, 8 * 2**30)], **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("kw, field", [({"orders": 0}, "orders"), ({"orders": 1.5}, "orders"),
                                       ({"time_limit": -1.0}, "time_limit"), ({"seed": -2}, "seed"),
                                       ({"snapshots": -1}, "snapshots"), ({"keep": 1.5}, "keep")])
def test_run_compare_refuses_options_the_command_line_refuses(kw: dict[str, object], field: str) -> None:
    from vbp.compare import run_compare

    args: dict[str, object] = {"orders": 2, "time_limit": 5.0, "seed": 0, **kw}
    with pytest.raises(InputError, match=field):
        run_compare(INST, ["bf"], **args)  # type: ignore[arg-type]
