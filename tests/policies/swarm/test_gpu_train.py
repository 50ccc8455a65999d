"""FGD+ / FGD-Pack tuning (policies.swarm.gpu_train): the costs are the protocol's, on any executor."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from packing.gpu.fgd_protocol import build_workload, run_policy
from packing.loaders.openb import load_openb
from packing.model.instance import Instance
from packing.sim.evaluation import SerialExecutor
from policies.gpu import FGDPlus
from policies.swarm.gpu_train import WorkloadCosts, grid_fgd_plus, train_fgd_pack

OPENB_SMALL = Path(__file__).resolve().parents[2] / "data" / "openb_small"


@pytest.fixture(scope="module")
def small() -> Instance:
    return load_openb(OPENB_SMALL, nodes="gpu")


def test_a_cost_is_the_unallocated_gpu_of_the_replay(small: Instance) -> None:
    """Independently: replay each workload with FGD+ here and read the level."""
    weights = [0.0, 0.0, 0.0, 0.0, -0.5]
    want = []
    for seed in (0, 1):
        wl = build_workload(small, seed, 1.3)
        run = run_policy(wl, FGDPlus(shapes=wl.dist, weights=weights))
        want.append(float(run.levels("unallocated", 91)[90]))
    with WorkloadCosts("fgd-plus", small, [0, 1], until=1.3, level=90) as costs:
        got = costs.per_workload([weights])
        mean = costs(np.array([weights]))
    assert got.tolist() == [want]
    assert mean.tolist() == [float(np.mean(want))]


def test_processes_give_the_serial_costs(small: Instance) -> None:
    cands = [[0, 0, 0, 0, -0.5], [1.0, 0, 0, 0, 0]]
    serial = grid_fgd_plus(small, [0, 1], cands, until=1.3, level=90, executor=SerialExecutor())
    procs = grid_fgd_plus(small, [0, 1], cands, until=1.3, level=90, workers=2)
    assert repr(procs) == repr(serial)


def test_a_given_executor_is_used_and_left_open(small: Instance) -> None:
    kw = {"until": 1.3, "level": 90, "particles": 2, "iters": 1, "pso_seed": 3}

    class Recording(SerialExecutor):
        maps = 0
        closed = False

        def map(self, fn: Any, items: Any, progress: Any = None) -> list[Any]:
            self.maps += 1
            return super().map(fn, items, progress)

        def close(self) -> None:
            self.closed = True
            super().close()

    ex = Recording()
    pack = train_fgd_pack(small, [0], executor=ex, **kw)  # type: ignore[arg-type]
    assert ex.maps >= 1 and not ex.closed
    ex.close()
    assert repr(pack) == repr(train_fgd_pack(small, [0], **kw))  # type: ignore[arg-type]


def test_until_must_reach_the_level(small: Instance) -> None:
    with pytest.raises(ValueError, match="stops before level 100"):
        WorkloadCosts("fgd-pack", small, [0], until=1.0, level=100)
