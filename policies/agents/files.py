"""Agent model files: one format, one loader that dispatches on the file's ``kind``.

Every learned agent saves a ``.pt`` file with :func:`save_agent`: a ``torch.save`` of a dict of
plain tensors, numbers, strings and lists, with the key ``"kind"`` naming the agent (``"eade"``,
``"gcn-placement"``...) and ``"format"`` the file version. :func:`load_agent` reads a file with
``torch.load(weights_only=True)`` only (a file a user gives never runs code), checks ``kind``
and ``format``, and hands the dict to the loader registered for that kind in :data:`KINDS`.
:mod:`policies.registry` registers :func:`load_agent` for ``.pt``, so ``vbp simulate --policy
model.pt`` and ``vbp compare --policies bf,model.pt`` accept any trained agent.

Torch is imported inside the functions: importing this module stays free of it.
"""

from __future__ import annotations

import importlib
import io
import warnings
from pathlib import Path
from typing import Any

from packing.errors import input_error
from packing.policy import Policy

FORMAT = 1
"""Version of the file layout written by :func:`save_agent`."""

KINDS: dict[str, str] = {
    "eade": "policies.agents.eade:from_checkpoint",
    "eade-m": "policies.agents.eade_masked:from_checkpoint",
    "sb3-td3": "policies.agents.sb3:from_checkpoint",
    "sb3-sac": "policies.agents.sb3:from_checkpoint",
    "sb3-ppo": "policies.agents.sb3:from_checkpoint",
    "gcn-placement": "policies.agents.gcn_placement:from_checkpoint",
    "jobfusion": "policies.agents.jobfusion:from_checkpoint",
}
"""Agent kind -> ``"module:function"``; the function takes the loaded dict and returns a policy."""


def save_agent(kind: str, data: dict[str, Any], path: str | Path) -> None:
    """Write ``data`` (tensors, numbers, strings, lists, dicts of those) as a ``kind`` agent file.

    The write is atomic (:mod:`packing.atomic`): a temporary file in the same folder, then a
    rename, so an interrupted save never leaves a half-written model where a good one was.
    """
    import torch

    if kind not in KINDS:
        raise ValueError(f"unknown agent kind {kind!r}; known: {sorted(KINDS)}")
    from packing.atomic import write_with

    write_with(path, lambda tmp: torch.save({"kind": kind, "format": FORMAT, **data}, tmp))


def _load_reason(e: Exception) -> str:
    """A short reason for a failed weights-only load, without torch's advice to load unsafely."""
    text = str(e).strip()
    if "WeightsUnpickler error:" in text:
        detail = " ".join(text.split("WeightsUnpickler error:", 1)[1].split("Check the docu")[0].split())
        return (f"not a weights-only torch file: {detail[:160]}; vbp never runs code from a model "
                "file")
    first = text.splitlines()[0] if text else type(e).__name__
    return first[:200]


def read_agent_file(path: str | Path) -> dict[str, Any]:
    """The dict of an agent file, read with ``torch.load(weights_only=True)``.

    Raises:
        InputError: missing, not a regular file, larger than :data:`packing.io.MAX_FILE_BYTES`,
            not readable as a weights-only torch file, or no known ``kind``/``format``.
    """
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is an optional dependency
        raise input_error(str(path), "", "learned agents need torch (pip install 'vbp[rl]')"
                         ) from None
    from packing.io import read_bytes_limited

    raw = read_bytes_limited(path)  # a regular file of at most MAX_FILE_BYTES (no FIFO, no device)
    try:
        with warnings.catch_warnings():  # torch warns about the pickle protocol of foreign files
            warnings.simplefilter("ignore", UserWarning)
            data = torch.load(io.BytesIO(raw), weights_only=True, map_location="cpu")
    except Exception as e:  # noqa: BLE001 - any failure means: not a model file we can trust
        raise input_error(str(path), "", f"not a vbp agent file ({_load_reason(e)})") from None
    if not isinstance(data, dict):
        raise input_error(str(path), "", "not a vbp agent file (no dict at the top)")
    kind = data.get("kind")
    if not isinstance(kind, str) or kind not in KINDS:
        raise input_error(str(path), "kind", f"unknown agent kind {kind!r}; known: {sorted(KINDS)}")
    if data.get("format") != FORMAT:
        raise input_error(str(path), "format",
                         f"file format {data.get('format')!r}, this vbp reads {FORMAT}")
    return data


def load_agent(path: str | Path) -> Policy:
    """The trained agent in ``path`` as a vbp policy (see the module docstring).

    Raises:
        InputError: see :func:`read_agent_file`; also a file whose content its kind rejects.
    """
    data = read_agent_file(path)
    module, _, attr = KINDS[data["kind"]].partition(":")
    fn = getattr(importlib.import_module(module), attr)
    try:
        policy: Policy = fn(data)
    except (KeyError, TypeError, ValueError, RuntimeError) as e:
        raise input_error(str(path), data["kind"], f"bad agent file: {e}") from None
    return policy


__all__ = ["FORMAT", "KINDS", "load_agent", "read_agent_file", "save_agent"]
