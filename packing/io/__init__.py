"""Files: bounded reads, the strict JSON/YAML parse, instance and placement files, safe writes.

Lives here: raw documents (:mod:`~packing.io.documents`), the field reader
(:mod:`~packing.io.fields`), instance and placement files (:mod:`~packing.io.instance_file`,
:mod:`~packing.io.placement_file`), atomic writes that never lose an input
(:mod:`~packing.io.atomic`) and the built-in instances (:mod:`~packing.io.builtin`). This package's
face gathers the public names of those modules (``from packing.io import load_instance``).
Data-set loaders live in :mod:`packing.loaders`.

The file format is documented in ``docs/file-format.md``. Loading validates everything and raises
:class:`packing.errors.InputError` listing every problem (file, field, reason); saving writes to a
temporary file first and renames it, so an existing file is never left half-written. Loading what
:func:`save_instance` wrote gives back an equal :class:`~packing.model.instance.Instance`.

May import: packing.errors, packing.model.
"""

from __future__ import annotations

from packing.io.documents import (
    MAX_DEPTH,
    MAX_FILE_BYTES,
    document_text,
    read_bytes_limited,
    read_document,
    read_documents,
    read_text_limited,
    write_document,
)
from packing.io.instance_file import (
    INSTANCE_FORMAT,
    instance_from_dict,
    instance_to_dict,
    load_instance,
    save_instance,
)
from packing.io.placement_file import (
    PLACEMENT_FORMAT,
    load_placement,
    placement_from_dict,
    placement_to_dict,
    save_placement,
)
from packing.model.validation import (
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
    "document_text", "escape_control", "has_control", "instance_from_dict", "instance_problems",
    "instance_to_dict",
    "load_instance", "load_placement", "placement_from_dict", "placement_to_dict",
    "read_bytes_limited", "read_document", "read_documents", "read_text_limited", "save_instance",
    "save_placement", "write_document",
]
