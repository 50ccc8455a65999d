"""``solvers.search.jit.ready``: compiled in this process, or loadable from numba's disk cache, or neither."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

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
