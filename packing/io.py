"""Instance and placement files: JSON, or the same structure in YAML.

The format is documented in ``docs/file-format.md``. Loading validates everything and raises
:class:`packing.errors.InputError` listing every problem (file, field, reason); saving writes to a
temporary file first and renames it, so an existing file is never left half-written.
Loading what :func:`save_instance` wrote gives back an equal :class:`Instance`.

Loading checks, once and fully, everything a file can hold: the parse (duplicate keys, nesting
depth, YAML aliases) and every field here; the instance-level checks (limits, names unique after
expansion, no control characters, the request stream, the structure of the initial placement)
live in :mod:`packing.validation` and run whenever an :class:`Instance` is built, from a file, a
data-set loader (:mod:`packing.loaders`) or Python code.

This module gathers the public names of the modules that do the work:

* :mod:`packing.documents`: bounded reads and the strict JSON/YAML parse
  (:func:`read_document`, :func:`write_document`, :data:`MAX_FILE_BYTES`, :data:`MAX_DEPTH`);
* :mod:`packing.instance_file`: the instance schema both ways (:func:`instance_from_dict`,
  :func:`instance_to_dict`, :func:`load_instance`, :func:`save_instance`);
* :mod:`packing.placement_file`: placement files (:func:`placement_from_dict`,
  :func:`placement_to_dict`, :func:`load_placement`, :func:`save_placement`);
* :mod:`packing.validation`: the limits (``MAX_*``) and the instance-level checks.
"""

from __future__ import annotations

from packing.documents import (
    MAX_DEPTH,
    MAX_FILE_BYTES,
    read_bytes_limited,
    read_document,
    read_documents,
    read_text_limited,
    write_document,
)
from packing.instance_file import (
    INSTANCE_FORMAT,
    instance_from_dict,
    instance_to_dict,
    load_instance,
    save_instance,
)
from packing.placement_file import (
    PLACEMENT_FORMAT,
    load_placement,
    placement_from_dict,
    placement_to_dict,
    save_placement,
)
from packing.validation import (
    MAX_CELLS,
    MAX_CONTAINERS,
    MAX_GPUS,
    MAX_HOSTS,
    MAX_NUMBER,
    MAX_RESOURCES,
    check_instance,
    escape_control,
    has_control,
    instance_problems,
)

__all__: list[str] = [
    "INSTANCE_FORMAT", "MAX_CELLS", "MAX_CONTAINERS", "MAX_DEPTH", "MAX_FILE_BYTES", "MAX_GPUS",
    "MAX_HOSTS", "MAX_NUMBER", "MAX_RESOURCES", "PLACEMENT_FORMAT", "check_instance",
    "escape_control", "has_control", "instance_from_dict", "instance_problems", "instance_to_dict",
    "load_instance", "load_placement", "placement_from_dict", "placement_to_dict",
    "read_bytes_limited", "read_document", "read_documents", "read_text_limited", "save_instance",
    "save_placement", "write_document",
]
