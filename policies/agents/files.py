"""Agent model files: one format, one loader that dispatches on the file's ``kind``.

Every learned agent saves a ``.pt`` file with :func:`save_agent`: a ``torch.save`` of a dict of
plain tensors, numbers, strings and lists, with the key ``"kind"`` naming the agent (``"eade"``,
``"gcn-placement"``...) and ``"format"`` the file version. :func:`load_agent` reads a file with
``torch.load(weights_only=True)`` only (a file a user gives never runs code), checks ``kind``
and ``format``, then every stored hyper-parameter, tensor shape and string with the check
registered for that kind in :data:`CHECKS` (so a file cannot make vbp build a network larger than
the architecture allows), and hands the dict to the loader registered in :data:`KINDS`. The
loaded policy's ``source`` is the file, so a later refusal (an instance of another shape) names it.
:mod:`policies.registry` registers :func:`load_agent` for ``.pt``, so ``vbp simulate --policy
model.pt`` and ``vbp compare --policies bf,model.pt`` accept any trained agent.

Torch is imported inside the functions: importing this module stays free of it.
"""

from __future__ import annotations

import importlib
import io
import re
import warnings
from pathlib import Path
from typing import Any

from packing.errors import InputError, input_error
from packing.io import escape_control
from packing.sim.policy import Policy

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

CHECKS: dict[str, str] = {
    "eade": "policies.agents.eade:check_file",
    "eade-m": "policies.agents.eade_masked:check_file",
    "sb3-td3": "policies.agents.sb3:check_file",
    "sb3-sac": "policies.agents.sb3:check_file",
    "sb3-ppo": "policies.agents.sb3:check_file",
    "gcn-placement": "policies.agents.gcn_placement:check_file",
    "jobfusion": "policies.agents.jobfusion:check_file",
}
"""Agent kind -> ``"module:function"`` checking a loaded dict before anything is built from it.

The function raises :class:`policies.agents.checks.FileFieldError` for a hyper-parameter out of its
range (a network larger than the architecture allows), a tensor whose shape the hyper-parameters
do not give, or a bad string (see :mod:`policies.agents.checks`).
"""


def save_agent(kind: str, data: dict[str, Any], path: str | Path) -> None:
    """Write ``data`` (tensors, numbers, strings, lists, dicts of those) as a ``kind`` agent file.

    The write is atomic (:mod:`packing.io.atomic`): a temporary file in the same folder, then a
    rename, so an interrupted save never leaves a half-written model where a good one was.
    """
    import torch

    if kind not in KINDS:
        raise ValueError(f"unknown agent kind {kind!r}; known: {sorted(KINDS)}")
    from packing.io.atomic import write_with

    write_with(path, lambda tmp: torch.save({"kind": kind, "format": FORMAT, **data}, tmp))


def _blocked_global(text: str) -> str | None:
    """The global (``module.name``) torch's weights-only unpickler refused, if its message names one."""
    m = re.search(r"GLOBAL ([\w.]+)", text)
    return m.group(1).rstrip(".") if m else None


def _load_reason(e: Exception) -> str:
    """A short reason for a failed weights-only load, without torch's advice to load unsafely.

    A refused pickle payload is named by the global it asks for (e.g. ``posix.system``).
    """
    text = str(e).strip()
    if "WeightsUnpickler error:" in text or "Weights only load failed" in text:
        name = _blocked_global(text)
        if name is not None:
            return (f"it asks for the Python object {name}, which a weights-only load does not "
                    "allow (vbp never runs code from a model file)")
        advice = ("weights_only", "Weights only load failed", "Check the documentation", "trusted source",
                  "two options")
        lines = [" ".join(ln.split()) for ln in text.splitlines()]
        detail = next((ln for ln in lines if ln and not any(a in ln for a in advice)), "")
        detail = detail.removeprefix("WeightsUnpickler error: ")
        detail = detail[:160] or "it holds more than tensors, numbers and strings"
        return f"not a weights-only torch file: {detail} (vbp never runs code from a model file)"
    first = text.splitlines()[0] if text else type(e).__name__
    return first[:200]


MAX_UNPACKED = 2**31
"""Most bytes an agent file may unpack to (a ``torch.save`` file is a zip archive)."""


def _check_unpacked_size(path: str, raw: bytes) -> None:
    """Refuse a zip archive that unpacks to more than :data:`MAX_UNPACKED` bytes (a zip bomb).

    Read from the archive's directory before torch reads any entry; a file that is not a zip
    archive is left to ``torch.load``.
    """
    import zipfile

    try:
        if not zipfile.is_zipfile(io.BytesIO(raw)):
            return
        with zipfile.ZipFile(io.BytesIO(raw)) as z:
            total = sum(i.file_size for i in z.infolist())
    except (OSError, zipfile.BadZipFile, ValueError):
        return  # torch.load says what is wrong
    if total > MAX_UNPACKED:
        raise input_error(path, "", f"not a vbp agent file: unpacks to {total:,} bytes; at most "
                          f"{MAX_UNPACKED:,}")


def read_agent_file(path: str | Path) -> dict[str, Any]:
    """The dict of an agent file, read with ``torch.load(weights_only=True)``.

    Raises:
        InputError: missing, not a regular file, larger than :data:`packing.io.MAX_FILE_BYTES`,
            not readable as a weights-only torch file, or no known ``kind``/``format``.
    """
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is an optional dependency
        raise input_error(str(path), "", "learned agents need torch (pip install 'vbp-toolkit[rl]')"
                         ) from None
    from packing.io import read_bytes_limited

    raw = read_bytes_limited(path)  # a regular file of at most MAX_FILE_BYTES (no FIFO, no device)
    _check_unpacked_size(str(path), raw)
    try:
        with warnings.catch_warnings():  # torch warns about the pickle protocol of foreign files
            warnings.simplefilter("ignore", UserWarning)
            data = torch.load(io.BytesIO(raw), weights_only=True, map_location="cpu")
    except Exception as e:  # noqa: BLE001 - any failure means: not a model file we can trust
        raise input_error(str(path), "", f"not a vbp agent file: {_load_reason(e)}") from None
    if not isinstance(data, dict):
        raise input_error(str(path), "", "not a vbp agent file (no dict at the top)")
    kind = data.get("kind")
    if not isinstance(kind, str) or kind not in KINDS:
        shown = escape_control(repr(kind))[:60]
        raise input_error(str(path), "kind", f"unknown agent kind {shown}; known: {sorted(KINDS)}")
    if data.get("format") != FORMAT:
        raise input_error(str(path), "format",
                         f"file format {escape_control(repr(data.get('format')))[:60]}, this vbp "
                         f"reads {FORMAT}")
    check_file(str(path), data)
    return data


def check_file(path: str, data: dict[str, Any]) -> None:
    """Run the check of ``data``'s kind (:data:`CHECKS`); a failure names ``path`` and the field.

    Raises:
        InputError: a hyper-parameter out of range, a tensor of the wrong shape, a bad string.
    """
    from policies.agents.checks import FileFieldError
    from policies.agents.limits import precheck

    module, _, attr = CHECKS[data["kind"]].partition(":")
    try:
        precheck(data)  # config ranges first: the graph agents' modules take seconds to import
        getattr(importlib.import_module(module), attr)(data)
    except FileFieldError as e:
        raise input_error(path, e.field, e.reason) from None


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
    except InputError:
        raise
    except (KeyError, TypeError, ValueError, RuntimeError) as e:
        raise input_error(str(path), data["kind"], f"bad agent file: {escape_control(str(e))[:300]}"
                          ) from None
    try:
        policy.source = str(path)  # type: ignore[attr-defined]
    except AttributeError:  # pragma: no cover - a policy class with slots
        pass
    return policy


__all__ = ["CHECKS", "FORMAT", "KINDS", "MAX_UNPACKED", "check_file", "load_agent", "read_agent_file",
           "save_agent"]
