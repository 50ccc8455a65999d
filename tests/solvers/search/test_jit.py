"""``solvers.search.jit.ready``: compiled in this process, or loadable from numba's disk cache, or neither."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

SOURCE = """
import numba


@numba.njit(cache=True)
def plus_one(x):
    return x + 1
"""


def _ask(tmp_path: Path, code: str) -> str:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)]))
    probe = "import jitmod\nfrom solvers.search.jit import ready\n" + code
    done = subprocess.run([sys.executable, "-c", probe],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_ready_sees_the_disk_cache_and_its_invalidation(tmp_path: Path) -> None:
    mod = tmp_path / "jitmod.py"
    mod.write_text(SOURCE)
    assert _ask(tmp_path, "print(ready(jitmod.plus_one))") == "False"  # nothing compiled anywhere
    # compiled in this process (and written to the cache)
    assert _ask(tmp_path, "jitmod.plus_one(1)\nprint(ready(jitmod.plus_one))") == "True"
    assert _ask(tmp_path, "print(ready(jitmod.plus_one))") == "True"  # a fresh process: the cache
    mod.write_text(SOURCE + "\n\n# the source changed: the cache no longer holds it\n")
    assert _ask(tmp_path, "print(ready(jitmod.plus_one))") == "False"


def test_ready_is_false_on_an_unexpected_cache() -> None:
    from solvers.search.jit import ready

    class Odd:  # no compiled signatures and none of numba's cache internals
        signatures: list[object] = []

    assert ready(Odd()) is False


TWIN = """
import json, sys
import numpy as np
from packing.model.instance import App, HostType, Instance, Rule
from solvers.search.jit import python_twin

rng = np.random.default_rng(int(sys.argv[1]))
sizes = rng.integers(20, 101, size=(40, 2))
apps = tuple(App(f"a{k}", (float(w1), float(w2)), 1, max_per_host=2 if k % 7 == 0 else None)
             for k, (w1, w2) in enumerate(sizes.tolist()))
inst = Instance("twin", ("cpu", "mem"), (HostType("h", (150.0, 150.0), 40),), apps,
                rules=(Rule("a1", "a2", 0),))
start = np.arange(inst.n_containers)  # a host each: the search frees many
twin = python_twin("solvers.search.tabu")
with np.errstate(over="ignore"):
    mine = twin.tabu_pack(inst, start, target=1, time_limit=600, max_iters=400, seed=5)
clean = "numba" not in sys.modules
from solvers.search.tabu import tabu_pack
theirs = tabu_pack(inst, start, target=1, time_limit=600, max_iters=400, seed=5)
print(json.dumps({"clean": clean, "mine": None if mine is None else mine.tolist(),
                  "theirs": None if theirs is None else theirs.tolist()}))
"""


@pytest.mark.parametrize("seed", [3, 4])
def test_the_python_twin_loads_no_numba_and_makes_the_compiled_moves(seed: int) -> None:
    from tests.solvers.warm import warm_search

    warm_search()  # the compiled search from numba's cache, not compiled under the test
    done = subprocess.run([sys.executable, "-c", TWIN, str(seed)], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert got["clean"]  # the twin ran without importing numba
    assert got["mine"] is not None  # from a host per container, 400 iterations free many
    assert got["mine"] == got["theirs"]  # the same moves: the same packing


def test_a_twin_is_made_once_and_kept_apart() -> None:
    from solvers.search import jit

    twin = jit.python_twin("solvers.search.tabu")
    assert jit.python_twin("solvers.search.tabu") is twin
    assert sys.modules["solvers.search.tabu" + jit.TWIN_SUFFIX] is twin
    assert not hasattr(twin.tabu_pack, "signatures")  # plain Python functions
    assert twin.tabu_pack is not __import__("solvers.search.tabu", fromlist=["x"]).tabu_pack
