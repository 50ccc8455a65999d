"""Deploying a shipped agent imports no training code.

Each shipped model (``policies/data/*.pt``) is loaded in a fresh interpreter and makes a few
decisions (a short simulation, every placement checked); afterwards no training module
(``policies.agents.*_train``, ``policies.agents.rl``) may be in ``sys.modules``.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("torch_geometric")

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "policies" / "data"
MC_DATA = REPO / "tests" / "data" / "multicluster_small"

TRAINING_MODULES = ("policies.agents.rl",)
"""Training modules besides the ``policies.agents.*_train`` ones."""

SCRIPT = """
import json, sys
from packing.feasibility.checker import check
from packing.sim.simulator import simulate
from policies.agents.files import load_agent, read_agent_file

path, mc_data = sys.argv[1], sys.argv[2]
kind = read_agent_file(path)["kind"]
agent = load_agent(path)
if kind == "gcn-placement":
    from packing.io.builtin import builtin_instance

    inst = builtin_instance("sigma")
elif kind == "eade-m":
    from packing.generators.multicluster import generate_multicluster

    inst = generate_multicluster(mc_data, mc_data, clusters=16, nodes=4, tasks=12, seed=0)
else:
    raise SystemExit(f"no instance for kind {kind}")
res = simulate(inst, agent, seed=0)
assert not check(inst, res.placement), "infeasible placement"
print(json.dumps({"kind": kind, "placed": int(res.placement.n_placed),
                  "modules": sorted(m for m in sys.modules if m.startswith("policies.agents."))}))
"""


@pytest.mark.parametrize("model", sorted(SHIPPED.glob("*.pt")), ids=lambda p: p.stem)
def test_a_shipped_agent_acts_without_training_modules(model: Path) -> None:
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(model), str(MC_DATA)], cwd=REPO,
                         capture_output=True, text=True, timeout=300, check=False)
    assert out.returncode == 0, out.stderr
    row = json.loads(out.stdout.strip().splitlines()[-1])
    assert row["placed"] > 0
    training = [m for m in row["modules"] if m.endswith("_train") or m in TRAINING_MODULES]
    assert not training, f"{model.name} ({row['kind']}) imported training code: {training}"


def test_the_check_sees_a_training_import() -> None:
    """Importing a trainer shows up in ``sys.modules`` (the check above can fail)."""
    code = ("import sys\n"
            "import policies.agents.gcn_placement\n"
            "before = 'policies.agents.gcn_placement_train' in sys.modules\n"
            "import policies.agents.gcn_placement_train\n"
            "print(before, 'policies.agents.gcn_placement_train' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300,
                         check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True"]


@pytest.mark.parametrize("agent", ["eade", "eade_masked", "gcn_placement", "jobfusion", "sb3"])
def test_every_agent_has_a_training_module(agent: str) -> None:
    """Each learned agent's trainer is ``<agent>_train``; its policy module imports no trainer."""
    agents = REPO / "policies" / "agents"
    assert (agents / f"{agent}_train.py").is_file()
    tree = ast.parse((agents / f"{agent}.py").read_text())
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom):
            imported |= {n.module or ""} | {f"{n.module}.{a.name}" for a in n.names}
    assert not [m for m in imported if m.endswith("_train") or m == "policies.agents.rl"]
