"""Shared fixtures of the policy tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture()
def one_thread() -> Iterator[None]:
    """One torch thread for the test: bit-reproducible, and faster on the shared 2-core machine.

    Use with ``pytestmark = pytest.mark.usefixtures("one_thread")`` in a module that needs torch.
    """
    torch = pytest.importorskip("torch")
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)
