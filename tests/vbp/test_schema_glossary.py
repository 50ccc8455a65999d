"""No output name means two things: every name of every schema is defined once, in ``docs/glossary.json``.

The glossary holds one definition per name (a name given twice is refused when it is read), for every
property of ``docs/schemas/*.json`` and every column of the ``vbp sweep`` table; aggregates over runs
(``hosts_mean``, ``hosts_max``...) take the definition of their name. A name with a formula (``gap``:
``(value - bound) / value``; ``excess``: ``(value - optimum) / optimum``...) is described with that
formula in every schema that uses it, and no property is described with the formula of another name,
so a ``gap`` that means the excess, or an ``excess`` described as a gap, fails. Values of one name
are of one kind (number, string, boolean, or a collection: list or object) across the schemas,
except the names of :data:`CLASHES`. The planted schemas below show each rule failing.
"""

from __future__ import annotations

import copy
import json
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from packing.report.run_table import COLUMNS, OPTIMUM_COLUMNS

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "docs" / "schemas"
GLOSSARY = ROOT / "docs" / "glossary.json"
AGGREGATES = ("_mean", "_min", "_max", "_range", "_std")
"""Suffixes of aggregates over runs: ``<name><suffix>`` means the aggregate of ``<name>``."""

CLASHES: dict[str, str] = {}
"""Names allowed to hold values of two kinds, each with where (none: every name holds one kind). A
name listed here that no longer clashes fails, so the list only shrinks."""


def read_glossary(text: str) -> dict[str, dict[str, str]]:
    """The glossary's names; a name defined twice is an error (JSON would keep the last silently)."""

    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [k for k, _ in pairs]
        twice = sorted({k for k in keys if keys.count(k) > 1})
        if twice:
            raise ValueError(f"defined more than once: {', '.join(twice)}")
        return dict(pairs)

    names: dict[str, dict[str, str]] = json.loads(text, object_pairs_hook=unique)["names"]
    return names


def definition(name: str, names: dict[str, dict[str, str]]) -> tuple[str, dict[str, str]] | None:
    """``(defined name, entry)`` of ``name``: its own, else its name without an aggregate suffix."""
    if name in names:
        return name, names[name]
    for suffix in AGGREGATES:
        base = name.removesuffix(suffix)
        if base != name and base in names:
            return base, names[base]
    return None


def properties(node: Any, path: str = "") -> Iterator[tuple[str, str, Any]]:
    """Every ``(name, path, property schema)`` under ``node``, through items, $defs, oneOf..."""
    if isinstance(node, dict):
        for name, sub in node.get("properties", {}).items():
            yield name, f"{path}.{name}", sub
            yield from properties(sub, f"{path}.{name}")
        for key, sub in node.items():
            if key != "properties" and isinstance(sub, dict | list):
                yield from properties(sub, path)
    elif isinstance(node, list):
        for sub in node:
            yield from properties(sub, path)


JSON_KINDS = {bool: "boolean", int: "number", float: "number", str: "string", type(None): "null",
              list: "collection", dict: "collection"}
TYPE_KINDS = {"integer": "number", "number": "number", "string": "string", "boolean": "boolean",
              "null": "null", "array": "collection", "object": "collection"}


def kinds(prop: Any, root: dict[str, Any]) -> set[str]:
    """The kinds of value a property schema allows (``null`` left out), following ``$ref``."""
    if not isinstance(prop, dict):
        return set()
    if "$ref" in prop:
        target: Any = root
        for part in prop["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        return kinds(target, root)
    t = prop.get("type", [])
    out = {TYPE_KINDS[x] for x in ([t] if isinstance(t, str) else t)}
    values = [*prop.get("enum", []), *([prop["const"]] if "const" in prop else [])]
    out |= {JSON_KINDS[type(v)] for v in values}
    for key in ("oneOf", "anyOf", "allOf"):
        for sub in prop.get(key, []):
            out |= kinds(sub, root)
    return out - {"null"}


def schema_problems(schemas: dict[str, dict[str, Any]], names: dict[str, dict[str, str]],
                    clashes: dict[str, str]) -> list[str]:
    """What breaks the rules of this module, one line each (empty: nothing)."""
    problems: list[str] = []
    formulas = {n: e["formula"] for n, e in names.items() if "formula" in e}
    seen: dict[str, dict[str, str]] = defaultdict(dict)
    for file, root in sorted(schemas.items()):
        for name, path, prop in properties(root):
            where = f"{file}: {path[1:]}"
            found = definition(name, names)
            if found is None:
                problems.append(f"{where}: {name!r} is not in docs/glossary.json")
                continue
            base, entry = found
            text = prop.get("description", "") if isinstance(prop, dict) else ""
            if "formula" in entry and entry["formula"] not in text:
                problems.append(f"{where}: the description of {name!r} does not state its formula "
                                f"{entry['formula']}")
            problems += [f"{where}: {name!r} is described with the formula of {other!r} ({f})"
                         for other, f in formulas.items() if other != base and f in text]
            for kind in kinds(prop, root):
                seen[name].setdefault(kind, where)
    for name, where in sorted(seen.items()):
        if len(where) > 1 and name not in clashes:
            problems.append(f"{name!r} holds values of different kinds: "
                            + "; ".join(f"{k} in {w}" for k, w in sorted(where.items())))
    problems += [f"{name!r} is listed as a clash but no longer is one" for name in clashes
                 if len(seen.get(name, {})) < 2]
    return problems


def load_schemas() -> dict[str, dict[str, Any]]:
    return {p.name: json.loads(p.read_text()) for p in sorted(SCHEMAS.glob("*.json"))}


def test_every_schema_name_has_one_definition() -> None:
    names = read_glossary(GLOSSARY.read_text(encoding="utf-8"))
    assert schema_problems(load_schemas(), names, CLASHES) == []


def test_every_sweep_column_and_every_definition_is_used() -> None:
    names = read_glossary(GLOSSARY.read_text(encoding="utf-8"))
    assert [c for c in COLUMNS + OPTIMUM_COLUMNS if definition(c, names) is None] == []
    used = {found[0] for s in load_schemas().values() for n, _, _ in properties(s)
            if (found := definition(n, names)) is not None}
    assert sorted(set(names) - used - set(COLUMNS + OPTIMUM_COLUMNS)) == []


def test_gap_and_excess_are_two_names_for_two_quantities() -> None:
    names = read_glossary(GLOSSARY.read_text(encoding="utf-8"))
    assert names["gap"]["formula"] == "(value - bound) / value"
    assert names["excess"]["formula"] == "(value - optimum) / optimum"
    compare = load_schemas()["vbp-compare-3.json"]["properties"]["policies"]["items"]["properties"]
    assert "excess" in compare and "gap" not in compare


# -- the rules fail on planted schemas -----------------------------------------------------------------
def planted(prop: dict[str, Any], name: str = "gap") -> dict[str, dict[str, Any]]:
    """The real schemas with one property ``name`` added to the rows of ``vbp compare``."""
    schemas = copy.deepcopy(load_schemas())
    schemas["vbp-compare-3.json"]["properties"]["policies"]["items"]["properties"][name] = prop
    return schemas


def test_a_gap_that_means_the_excess_fails() -> None:
    names = read_glossary(GLOSSARY.read_text(encoding="utf-8"))
    bad = schema_problems(planted({"type": "number", "description": "(value - optimum) / optimum"}),
                          names, CLASHES)
    assert len(bad) == 2, bad
    assert "does not state its formula (value - bound) / value" in bad[0]
    assert "described with the formula of 'excess'" in bad[1]
    assert any("does not state its formula" in p  # a gap with no description: its meaning is unsaid
               for p in schema_problems(planted({"type": "number"}), names, CLASHES))


def test_an_excess_described_as_a_gap_fails() -> None:
    names = read_glossary(GLOSSARY.read_text(encoding="utf-8"))
    prop = {"type": "number", "description": "(value - optimum) / optimum, i.e. (value - bound) / value"}
    bad = schema_problems(planted(prop, "excess"), names, CLASHES)
    assert bad == ["vbp-compare-3.json: policies.excess: 'excess' is described with the formula of 'gap' "
                   "((value - bound) / value)"]


def test_an_unknown_name_and_a_new_clash_fail() -> None:
    names = read_glossary(GLOSSARY.read_text(encoding="utf-8"))
    bad = schema_problems(planted({"type": "number"}, "slack"), names, CLASHES)
    assert bad == ["vbp-compare-3.json: policies.slack: 'slack' is not in docs/glossary.json"]
    bad = schema_problems(planted({"type": "string"}, "seconds"), names, CLASHES)
    assert len(bad) == 1 and bad[0].startswith("'seconds' holds values of different kinds: number in ")
    assert "string in vbp-compare-3.json: policies.seconds" in bad[0]
    assert schema_problems(load_schemas(), names, {**CLASHES, "hosts": "x"}) == [
        "'hosts' is listed as a clash but no longer is one"]


def test_a_name_defined_twice_fails() -> None:
    with pytest.raises(ValueError, match="defined more than once: gap"):
        read_glossary('{"names": {"gap": {"meaning": "a"}, "gap": {"meaning": "b"}}}')
