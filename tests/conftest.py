"""Shared fixtures: small hand-made instances and the path to ../shared/data (skip if absent)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TEST_DATA = Path(__file__).resolve().parent / "data"
SHARED_DATA = Path(os.environ.get("VBP_SHARED_DATA", REPO.parent / "shared" / "data"))


@pytest.fixture
def shared_data() -> Path:
    """The real data sets; the test is skipped when they are absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"{SHARED_DATA} is absent")
    return SHARED_DATA
