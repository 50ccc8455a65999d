"""packing.model.host_spec: one grammar of inline host types, read the same by every reader.

Source: the specs are written here; the expected numbers are read off the text by hand.
"""

from __future__ import annotations

import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from packing.errors import InputError
from packing.loaders.host_types import load_hosts, parse_inline
from packing.loaders.tianchi import parse_fleet
from packing.model.host_spec import parse_host_spec, parse_host_specs

GI = 2**30


@pytest.mark.parametrize(("text", "want"), [
    ("16c64g", (None, "16", "64", 0, None, None)),
    ("16c64g:10", (None, "16", "64", 0, 10, None)),
    ("16c64g:count=10", (None, "16", "64", 0, 10, None)),
    ("std=16c64g", ("std", "16", "64", 0, None, None)),
    ("std=16c64g:price=0.77", ("std", "16", "64", 0, None, 0.77)),
    ("gpu=32c256g8gpu:price=12.5:count=4", ("gpu", "32", "256", 8, 4, 12.5)),
    ("gpu=32c256g8gpu:count=4:price=12.5", ("gpu", "32", "256", 8, 4, 12.5)),
    ("std:16c64g", ("std", "16", "64", 0, None, None)),
    ("std:16c64g:0.77", ("std", "16", "64", 0, None, 0.77)),
    ("gpu:32c256g8gpu:12.5:4", ("gpu", "32", "256", 8, 4, 12.5)),
    ("std:16c64g::10", ("std", "16", "64", 0, 10, None)),
    ("std:16c64g:count=10", ("std", "16", "64", 0, 10, None)),
    ("small:0.5C1.5G", ("small", "0.5", "1.5", 0, None, None)),
])
def test_forms(text: str, want: tuple) -> None:
    s = parse_host_spec(text)
    assert (s.name, s.cores, s.memory, s.gpus, s.count, s.price) == want
    assert s.label == (want[0] or text.split(":")[0])


@pytest.mark.parametrize(("text", "part"), [
    ("std", "std"), ("std:16c", "16c"), ("std=16c", "16c"), (":16c64g", ":16c64g"),
    ("std=16c64g:price=x", "price=x"), ("std=16c64g:cnt=3", "cnt=3"),
    ("std:16c64g:1:2.5", "count=2.5"), ("16c64g:count=2:count=3", "count=3"),
    ("std=16c64g:price=1:7", "7"), ("std:0c64g", "0c64g"), ("count=16c64g", "count=16c64g"),
    ("16c64g:-1", "count=-1"), ("std=16c64g:price=-1", "price=-1"),
])
def test_errors_name_the_bad_part(text: str, part: str) -> None:
    with pytest.raises(InputError) as e:
        parse_host_spec(text)
    (p,) = e.value.problems
    assert (p.source, p.field) == ("--hosts", part)


def test_a_field_puts_the_part_in_the_reason() -> None:
    with pytest.raises(InputError) as e:
        parse_host_spec("16c64g:x", "data/", field="hosts")
    (p,) = e.value.problems
    assert (p.source, p.field) == ("data/", "hosts") and p.reason.startswith("'count=x': ")


def test_features_a_reader_does_not_use_are_refused() -> None:
    assert parse_fleet("92c288g:count=3000").count == 3000
    for text in ("std=64c128g", "64c128g1gpu", "64c128g:price=1"):
        with pytest.raises(InputError, match="is not used here"):
            parse_fleet(text)


def test_every_reader_reads_the_same_spec() -> None:
    text = "std=16c64g:count=3:price=0.5"
    (o,) = load_hosts([text])
    assert (o.name, o.cpu_milli, o.memory_bytes, o.count, o.price) == ("std", 16000, 64 * GI, 3, 0.5)
    assert parse_inline("16c64g:3").name == "16c64g" and parse_inline("16c64g:3").count == 3
    assert [(o.name, o.cpu_milli, o.count) for o in load_hosts("16c64g:3,big=64c256g")] == [
        ("16c64g", 16000, 3), ("big", 64000, None)]
    f = parse_fleet("16c64g:3")
    assert (f.cpu, f.mem, f.count) == (16.0, 64.0, 3)


def test_several_and_none() -> None:
    assert [s.label for s in parse_host_specs("a=1c2g, 4c8g:2")] == ["a", "4c8g"]
    with pytest.raises(InputError, match="expected a host type"):
        parse_host_specs(" , ")


NAMES = st.text(alphabet=string.ascii_lowercase + string.digits + "-.", min_size=1,
                max_size=10).filter(lambda s: s[0].isalpha())
"""Host type names (a letter first: a name never reads as a shape)."""


@settings(max_examples=200, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(NAMES, st.integers(1, 512),
       st.integers(1, 4096), st.integers(0, 16), st.none() | st.integers(0, 10_000),
       st.none() | st.integers(0, 10_000).map(lambda c: c / 100))
def test_keyed_and_positional_forms_agree(name: str, cores: int, mem: int, gpus: int,
                                          count: int | None, price: float | None) -> None:
    shape = f"{cores}c{mem}g" + (f"{gpus}gpu" if gpus else "")
    keyed = f"{name}={shape}" + ("" if count is None else f":count={count}") + (
        "" if price is None else f":price={price}")
    positional = f"{name}:{shape}:{'' if price is None else price}:{'' if count is None else count}"
    a, b = parse_host_spec(keyed), parse_host_spec(positional)
    assert (a.name, a.cores, a.memory, a.gpus, a.count, a.price) == (
        b.name, b.cores, b.memory, b.gpus, b.count, b.price) == (
        name, str(cores), str(mem), gpus, count, price)
