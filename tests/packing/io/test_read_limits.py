"""Reading is bounded and refuses special files; loading refuses sizes and shapes vbp cannot use.

``/dev/zero`` would never end and a FIFO would block; a file larger than the limit is refused
without reading more than the limit; ``"host_types": []``, an ``initial`` naming an unknown app,
and more than :data:`packing.io.MAX_CELLS` values are refused at load, with the field named.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from packing.errors import InputError
from packing.io import (
    MAX_CELLS,
    MAX_HOSTS,
    load_instance,
    read_bytes_limited,
    read_document,
    save_instance,
)
from packing.model.instance import App, HostType, Instance

posix = pytest.mark.skipif(sys.platform == "win32", reason="POSIX special files")


def reasons(e: pytest.ExceptionInfo[InputError]) -> str:
    return " | ".join(f"{p.field}: {p.reason}" for p in e.value.problems)


def test_a_file_within_the_limit_is_read_whole(tmp_path: Path) -> None:
    f = tmp_path / "x.json"
    f.write_bytes(b"0123456789")
    assert read_bytes_limited(f, limit=10) == b"0123456789"


def test_a_file_beyond_the_limit_is_refused_naming_it(tmp_path: Path) -> None:
    f = tmp_path / "x.json"
    f.write_bytes(b"0123456789X")
    with pytest.raises(InputError) as e:
        read_bytes_limited(f, limit=10)
    assert "larger than 10 bytes" in reasons(e)
    assert e.value.problems[0].source == str(f)


@posix
def test_a_device_is_refused_without_reading(tmp_path: Path) -> None:
    with pytest.raises(InputError) as e:
        read_document("/dev/zero")
    assert "a device" in reasons(e) and "regular files only" in reasons(e)


@posix
def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)  # no writer: a blocking open would wait forever
    with pytest.raises(InputError) as e:
        read_document(fifo)
    assert "FIFO" in reasons(e)


def test_a_folder_and_a_missing_file_are_named(tmp_path: Path) -> None:
    with pytest.raises(InputError) as e:
        read_document(tmp_path)
    assert "folder" in reasons(e)
    with pytest.raises(InputError) as e:
        read_document(tmp_path / "nope.json")
    assert "no such file" in reasons(e)


def test_invalid_utf8_names_the_byte(tmp_path: Path) -> None:
    f = tmp_path / "x.json"
    f.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(InputError) as e:
        read_document(f)
    assert e.value.problems[0].field == "byte 7"


def doc(**over: object) -> dict[str, object]:
    d: dict[str, object] = {"resources": ["cpu"],
                            "host_types": [{"name": "h", "capacity": [4], "count": 2}],
                            "apps": [{"name": "a", "demand": [1], "count": 2}]}
    d.update(over)
    return d


def load(tmp_path: Path, d: object) -> Instance:
    f = tmp_path / "i.json"
    f.write_text(json.dumps(d))
    return load_instance(f)


def test_empty_host_types_with_apps_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError) as e:
        load(tmp_path, doc(host_types=[]))
    assert e.value.problems[0].field == "host_types"
    assert "at least one host type" in reasons(e)


def test_no_apps_and_no_host_types_is_an_empty_instance(tmp_path: Path) -> None:
    inst = load(tmp_path, doc(host_types=[], apps=[]))
    assert inst.n_hosts == 0 and inst.n_containers == 0


def test_initial_naming_an_unknown_app_is_refused_at_load(tmp_path: Path) -> None:
    with pytest.raises(InputError) as e:
        load(tmp_path, doc(initial={"hosts": {"ghost": ["h#0"]}}))
    assert e.value.problems[0].field == "initial.hosts.ghost"
    assert "unknown app 'ghost'" in reasons(e)


def test_more_values_than_max_cells_are_refused_before_any_vector_is_read(tmp_path: Path) -> None:
    n_res = 10_000
    n_apps = MAX_CELLS // n_res + 1
    d = doc(resources=[f"r{i}" for i in range(n_res)],
            host_types=[{"name": "h", "capacity": {"r0": 1}, "count": 1}],
            apps=[{"name": f"a{i}", "demand": {}, "count": 1} for i in range(n_apps)])
    with pytest.raises(InputError) as e:
        load(tmp_path, d)
    msg = reasons(e)
    assert f"{n_apps:,} apps x {n_res:,} resources" in msg and "MAX_CELLS" in msg


def test_demands_as_objects_fill_missing_resources_with_zero(tmp_path: Path) -> None:
    inst = load(tmp_path, doc(resources=["cpu", "mem", "disk"],
                              host_types=[{"name": "h", "capacity": {"mem": 8, "cpu": 4},
                                           "count": 1}],
                              apps=[{"name": "a", "demand": {"disk": 2}, "count": 1}]))
    assert inst.host_types[0].capacity == (4.0, 8.0, 0.0)
    assert inst.apps[0].demand == (0.0, 0.0, 2.0)


def test_unknown_resource_in_an_object_is_named(tmp_path: Path) -> None:
    with pytest.raises(InputError) as e:
        load(tmp_path, doc(apps=[{"name": "a", "demand": {"gpu": 1}, "count": 1}]))
    assert e.value.problems[0].field.endswith("demand.gpu")


def test_save_instance_refuses_what_load_would_refuse(tmp_path: Path) -> None:
    # an instance vbp would refuse to read cannot be built in Python either, so it is never saved
    f = tmp_path / "big.json"
    with pytest.raises(InputError) as e:
        inst = Instance("big", ("cpu",), (HostType("h", (1.0,), MAX_HOSTS + 1),), (App("a", (1.0,), 1),))
        save_instance(inst, f)
    assert "hosts in all" in reasons(e)
    assert not f.exists() and list(tmp_path.iterdir()) == []


@posix
def test_load_any_names_a_fifo_instead_of_an_unknown_kind(tmp_path: Path) -> None:
    from packing.loaders import load_any

    fifo = tmp_path / "inst.json"
    os.mkfifo(fifo)
    with pytest.raises(InputError) as e:
        load_any(fifo)
    assert "FIFO" in reasons(e)
