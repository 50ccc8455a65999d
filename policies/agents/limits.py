"""Config ranges of the graph agents, checked before their modules (and torch_geometric) are imported.

:func:`precheck` refuses an out-of-range ``config`` of a ``gcn-placement`` or ``jobfusion`` file
without importing :mod:`policies.agents.gcn_placement` or :mod:`policies.agents.jobfusion`, whose
import of torch_geometric takes seconds; those modules' own ``check_file`` uses the same tables
and then checks the tensors.
"""

from __future__ import annotations

from typing import Any

from policies.agents.checks import Choice, Flag, Num, Spec, check_fields, section

GCN_CONFIG: dict[str, Spec] = {
    "n_resources": Num(1, 64, integer=True),
    "dim": Num(1, 1024, integer=True),
    "layers": Num(1, 16, integer=True),
    "init_scale": Num(0.0, 1e6),
    "lr": Num(0.0, 1.0, lo_open=True),
    "batch": Num(1, 1024, integer=True),
    "entropy": Num(0.0, 1e3),
    "penalty": Num(0.0, 1e6),
    "imitate_lr": Num(0.0, 1.0, lo_open=True),
}
"""The allowed range of every :class:`policies.agents.gcn_placement.Config` field in a file."""

JOBFUSION_CONFIG: dict[str, Spec] = {
    "dim": Num(1, 1024, integer=True),
    "rounds": Num(0, 16, integer=True),
    "levels": Num(1, 64, integer=True),
    "lr": Num(0.0, 1.0, lo_open=True),
    "entropy": Num(0.0, 1e3),
    "entropy_end": Num(0.0, 1e3),
    "anneal": Num(0, 10**9, integer=True),
    "batch": Num(1, 1024, integer=True),
    "partition": Choice(("constrained", "single", "plain")),
    "slack": Flag(),
    "features": Choice((1, 2)),
    "candidates": Num(0, 10**6, integer=True),
}
"""The allowed range of every :class:`policies.agents.jobfusion.Config` field in a file.

Fields a file holds beyond these are ignored (files from other versions), as the loader does."""


def jobfusion_fields(data: dict[str, Any]) -> dict[str, Any]:
    """The checked, known ``config`` fields of a ``jobfusion`` file."""
    cfg = section(data, "config")
    return check_fields("config", {k: v for k, v in cfg.items() if k in JOBFUSION_CONFIG},
                        JOBFUSION_CONFIG)


def precheck(data: dict[str, Any]) -> None:
    """Check the ``config`` of a graph agent's file (other kinds: nothing to do here).

    Raises:
        FileFieldError: a field out of range or unknown.
    """
    if data.get("kind") == "gcn-placement":
        check_fields("config", section(data, "config"), GCN_CONFIG)
    elif data.get("kind") == "jobfusion":
        jobfusion_fields(data)


__all__ = ["GCN_CONFIG", "JOBFUSION_CONFIG", "jobfusion_fields", "precheck"]
