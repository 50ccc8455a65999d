"""Start-up stays light: the libraries and the CLI never import torch."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize("code", [
    "import packing, vbp.cli",
    "import solvers",
    "import policies.registry, policies.swarm.train",
    "from vbp.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass",
])
def test_no_torch(code: str) -> None:
    probe = code + "\nimport sys\nprint('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "False"
