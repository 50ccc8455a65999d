"""``python -m solvers.exact.warmup`` fills numba's disk cache with every part ``auto`` gates on it.

Run against an empty cache (``NUMBA_CACHE_DIR`` in a temporary folder): before, no part is on
disk; after, a new process finds every part there, as ``auto`` checks it (:mod:`solvers.search.jit`).
So a part the warm-up stops exercising fails here.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
PROBE = "from solvers.exact.warmup import PARTS; print(*(w(on_disk=True) for _, w in PARTS.values()))"
PARTS = 5
"""The compiled parts: tabu search, exact cover, stage 1f patterns, the large path, the pricing DP."""


def _run(args: list[str], cache: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    return subprocess.run([sys.executable, *args], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=600, check=False)


def test_warmup_fills_an_empty_cache(tmp_path: Path) -> None:
    cache = tmp_path / "numba"
    before = _run(["-c", PROBE], cache)
    assert before.returncode == 0, before.stderr
    assert before.stdout.split() == ["False"] * PARTS
    warm = _run(["-m", "solvers.exact.warmup"], cache)
    assert warm.returncode == 0, warm.stdout + warm.stderr
    lines = warm.stdout.splitlines()
    assert [ln.split()[-1] for ln in lines] == ["cached"] * PARTS, warm.stdout
    after = _run(["-c", PROBE], cache)
    assert after.stdout.split() == ["True"] * PARTS, after.stdout + after.stderr
