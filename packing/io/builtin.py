"""Built-in instances shipped with vbp: ``builtin_instance("sigma")``.

The files live in ``packing/data/`` (package data). ``sigma.json`` is the output of
:func:`vbp.instances.generate_sigma` with seed 0 (the generator with vbp's Best-Fit), written by::

    from packing.io import save_instance
    from vbp.instances import generate_sigma
    save_instance(generate_sigma(0), "packing/data/sigma.json")

A test regenerates it and checks the shipped file is identical.
"""

from __future__ import annotations

from importlib import resources

from packing.errors import input_error
from packing.io.documents import read_document
from packing.io.instance_file import instance_from_dict
from packing.model.instance import Instance

BUILTIN_NAMES: tuple[str, ...] = ("sigma",)
"""Names accepted by :func:`builtin_instance` (and by ``vbp compare NAME``)."""


def builtin_instance(name: str = "sigma") -> Instance:
    """Load a built-in instance by name.

    Raises:
        InputError: unknown name.
    """
    if name not in BUILTIN_NAMES:
        raise input_error("builtin", name, f"unknown built-in instance; known: {', '.join(BUILTIN_NAMES)}")
    with resources.as_file(resources.files("packing") / "data" / f"{name}.json") as path:
        return instance_from_dict(read_document(path), f"{name}.json")


__all__ = ["BUILTIN_NAMES", "builtin_instance"]
