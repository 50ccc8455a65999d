"""The format tag every ``--json`` output carries: ``"format": "vbp-<kind>/<version>"``.

Each format has a JSON Schema in ``docs/schemas/vbp-<kind>-<version>.json``; ``docs/outputs.md``
lists the formats and the names they share (``hosts``, ``cost``, ``allocation``, ``deployed``,
``rejected``, ``delayed``, ``seconds``; aggregates ``<name>_mean``, ``<name>_min``, ``<name>_max``).
A version changes when a key is removed or changes meaning; keys may be added within a version.
"""

from __future__ import annotations

from typing import Any

FORMATS: dict[str, str] = {
    "info": "vbp-info/2",
    "validate": "vbp-validate/1",
    "solve": "vbp-solve/2",
    "simulate": "vbp-simulate/1",
    "compare": "vbp-compare/3",
    "plan": "vbp-plan/3",
    "consolidate": "vbp-consolidate/2",
    "gpu-frag": "vbp-gpu-frag/2",
    "jobs-compare": "vbp-jobs-compare/2",
    "jobs-partition": "vbp-jobs-partition/1",
    "train-swarm": "vbp-train-swarm/1",
    "train-rl": "vbp-train-rl/2",
}
"""The format tag of each command's ``--json`` output."""


def schema_name(fmt: str) -> str:
    """The schema file of a format: ``vbp-solve/2`` -> ``vbp-solve-2.json``."""
    return fmt.replace("/", "-") + ".json"


def tagged(kind: str, doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` with ``"format"`` first (``kind``: a key of :data:`FORMATS`)."""
    return {"format": FORMATS[kind], **doc}


__all__ = ["FORMATS", "schema_name", "tagged"]
