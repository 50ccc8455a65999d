"""Shared fixtures: small hand-made instances, the path to ../shared/data (skip if absent), and the
seeded Hypothesis profile."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Property tests draw the same examples on every run (a failure is reproducible and the suite's
# verdict does not depend on luck); VBP_HYPOTHESIS=explore draws fresh ones. No verdict depends on
# wall time: no deadline per example, no health check on slow data generation (a loaded machine).
TIMELESS = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
settings.register_profile("seeded", derandomize=True, **TIMELESS)
settings.register_profile("explore", derandomize=False, **TIMELESS)
settings.load_profile(os.environ.get("VBP_HYPOTHESIS", "seeded"))

REPO = Path(__file__).resolve().parents[1]
TEST_DATA = Path(__file__).resolve().parent / "data"
SHARED_DATA = Path(os.environ.get("VBP_SHARED_DATA", REPO.parent / "shared" / "data"))
COMPILED_PACKAGES = ("packing", "policies", "solvers")


def _numba_sources_digest() -> str:
    """SHA-256 over the source files that import numba (compiled code calls only compiled code)."""
    h = hashlib.sha256()
    for pkg in COMPILED_PACKAGES:
        for f in sorted((REPO / pkg).rglob("*.py")):
            text = f.read_bytes()
            if b"import numba" in text:
                h.update(str(f.relative_to(REPO)).encode())
                h.update(text)
    return h.hexdigest()


def _drop_stale_numba_cache() -> None:
    """Drop numba's on-disk cache when any source of the compiled packages changed.

    numba's ``cache=True`` checks only the source file of the compiled function itself: a caller
    compiled against an older callee in another module is reused stale (a changed signature in
    ``solvers/search/tabu.py`` once passed here and failed on a clean clone).
    """
    stamp = REPO / "packing" / "__pycache__" / "vbp-numba-sources.sha256"
    digest = _numba_sources_digest()
    if stamp.is_file() and stamp.read_text().strip() == digest:
        return
    for pkg in COMPILED_PACKAGES:
        for f in (REPO / pkg).rglob("__pycache__/*.nb[ic]"):
            f.unlink(missing_ok=True)
    stamp.parent.mkdir(exist_ok=True)
    stamp.write_text(digest + "\n")


def pytest_configure(config: pytest.Config) -> None:
    """Drop a stale numba cache, then compile the solvers' numba code into it.

    Runs once, in the xdist controller (or the only process), before any test imports a compiled
    module. Compiling (15-40 s on a fresh clone, about a second of imports once cached) happens
    here rather than inside the first test that solves under a time limit (:mod:`tests.solvers.warm`).
    """
    if hasattr(config, "workerinput"):
        return
    _drop_stale_numba_cache()
    from tests.solvers.warm import warm_compiled

    warm_compiled()


@pytest.fixture
def shared_data() -> Path:
    """The real data sets; the test is skipped when they are absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"{SHARED_DATA} is absent")
    return SHARED_DATA


@pytest.fixture(autouse=True)
def _replay_every_kubernetes_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every plan a test writes as Kubernetes objects (``--k8s-out``, ``write_objects``: both
    through ``dump_yaml``) is replayed by the independent scheduler replay
    (``tests/k8s_replay.py``) and every object is checked against the Kubernetes OpenAPI schemas
    (``kubernetes-validate``, strict)."""
    from packing.plan import k8s_out

    dump = k8s_out.dump_yaml

    def checked(objects):  # type: ignore[no-untyped-def]
        from tests.k8s_replay import replay

        problems = replay(objects) + schema_problems(objects)
        assert problems == [], f"the Kubernetes objects written fail: {problems[:5]}"
        return dump(objects)

    monkeypatch.setattr(k8s_out, "dump_yaml", checked)


KUBERNETES_VERSION = "1.33"
"""The API version the objects written are validated against (``kubernetes-validate``)."""


def schema_problems(objects: list) -> list[str]:
    """Every object that the Kubernetes OpenAPI schema refuses (strict: no unknown field)."""
    import kubernetes_validate

    out = []
    for o in objects:
        try:
            kubernetes_validate.validate(o, KUBERNETES_VERSION, strict=True)
        except kubernetes_validate.ValidationError as e:
            out.append(f"{o.get('kind')}/{o.get('metadata', {}).get('name')}: "
                       f"{str(e).splitlines()[0]}")
    return out
