"""``packing.io`` is the facade of the file modules: each name it lists is its home's own object."""

from __future__ import annotations

import packing.io
from packing.io import documents, instance_file, placement_file
from packing.model import validation


def test_the_facade_re_exports_the_homes() -> None:
    homes = (documents, instance_file, placement_file)
    for name in packing.io.__all__:
        obj = getattr(packing.io, name)
        owners = [m for m in (*homes, validation) if getattr(m, name, None) is obj]
        assert owners, f"packing.io.{name} is not the object of its home module"
    for m in homes:
        missing = set(m.__all__) - set(packing.io.__all__)
        assert not missing, f"{m.__name__} names {sorted(missing)} that packing.io does not re-export"


def test_the_facade_keeps_the_documented_names() -> None:
    documented = {"load_instance", "save_instance", "load_placement", "save_placement",
                  "instance_from_dict", "instance_to_dict", "placement_from_dict", "placement_to_dict",
                  "read_document", "read_documents", "write_document", "read_bytes_limited",
                  "read_text_limited", "escape_control", "MAX_CELLS", "MAX_CONTAINERS", "MAX_DEPTH",
                  "MAX_FILE_BYTES", "MAX_GPUS", "MAX_HOSTS", "MAX_NUMBER", "MAX_RESOURCES",
                  "INSTANCE_FORMAT", "PLACEMENT_FORMAT"}
    assert documented <= set(packing.io.__all__)
