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
"""

from __future__ import annotations

import json
import math
import os
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from packing.atomic import write_text
from packing.errors import InputError, Problem
from packing.model import UNPLACED, App, HostType, Instance, Placement, Request, Rule
from packing.selection import (
    NODE_OPERATORS,
    Labels,
    Requirement,
    Taint,
    Term,
    Toleration,
    labels_of,
    requirement_problem,
    taint_problem,
    toleration_problem,
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
    name_list,
    reported_as,
)
from packing.validation import describe as _kind
from packing.validation import short as _short

INSTANCE_FORMAT = "vbp-instance/1"
PLACEMENT_FORMAT = "vbp-placement/1"

MAX_DEPTH = 64
"""Deepest nesting of lists and objects in a file."""
MAX_FILE_BYTES = 2**30
"""Largest instance or placement file read (1 GiB)."""


class _ParseError(Exception):
    """A problem found while parsing (duplicate key, YAML alias), with its location."""

    def __init__(self, where: str, reason: str) -> None:
        super().__init__(reason)
        self.where = where
        self.reason = reason


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` for :func:`json.loads`: a key twice in one object is an error."""
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise _ParseError(f"key {k!r}", "appears twice in the same object (the first value "
                              "would be silently dropped)")
        out[k] = v
    return out


def _yaml_loader() -> type:
    """A safe YAML loader that refuses duplicate keys and aliases (``*name``)."""
    import yaml

    class StrictLoader(yaml.SafeLoader):
        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                ev = self.peek_event()
                raise _ParseError(_mark(ev.start_mark), "YAML aliases (*name) are not supported")
            return super().compose_node(parent, index)

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen: set[Any] = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                try:
                    dup = key in seen
                    seen.add(key)
                except TypeError:
                    raise _ParseError(_mark(key_node.start_mark),
                                      "keys must be plain values") from None
                if dup:
                    raise _ParseError(_mark(key_node.start_mark),
                                      f"key {key!r} appears twice in the same object (the first "
                                      "value would be silently dropped)")
            return super().construct_mapping(node, deep=deep)

    return StrictLoader


def _mark(m: Any) -> str:
    return f"line {m.line + 1}, column {m.column + 1}" if m is not None else ""


def _depth_problem(doc: Any) -> str | None:
    """``None`` if ``doc`` nests at most :data:`MAX_DEPTH` deep, else the reason (iterative)."""
    stack: list[tuple[Any, int]] = [(doc, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, dict | list):
            if d > MAX_DEPTH:
                return f"lists and objects are nested more than {MAX_DEPTH} deep"
            children = v.values() if isinstance(v, dict) else v
            stack.extend((c, d + 1) for c in children if isinstance(c, dict | list))
    return None


# ------------------------------------------------------------------------------------------------
# reading raw documents
def read_bytes_limited(path: str | Path, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes, read without ever holding more.

    The file is opened without blocking and examined before any read: a folder, a FIFO, a device
    or a socket is refused (``/dev/zero`` would never end, a FIFO could wait forever). At most
    ``limit + 1`` bytes are read, so a file that grows while it is read is refused too.

    Raises:
        InputError: missing, not a regular file, larger than ``limit``, or unreadable.
    """
    src = str(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    too_large = f"file is larger than {limit:,} bytes, the most vbp reads (packing.io.MAX_FILE_BYTES)"
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise InputError([Problem(src, "", "no such file")]) from None
    except IsADirectoryError:
        raise InputError([Problem(src, "", "is a folder, expected a file")]) from None
    except OSError as e:
        raise InputError([Problem(src, "", f"cannot read: {e.strerror or e}")]) from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise InputError([Problem(src, "", "is a folder, expected a file")])
        if not stat.S_ISREG(st.st_mode):
            kind = ("a FIFO (named pipe)" if stat.S_ISFIFO(st.st_mode) else
                    "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) else
                    "a socket" if stat.S_ISSOCK(st.st_mode) else "not a regular file")
            raise InputError([Problem(src, "", f"is {kind}; vbp reads regular files only "
                                      "(save the data to a file first)")])
        if st.st_size > limit:
            raise InputError([Problem(src, "", too_large)])
        chunks: list[bytes] = []
        left = limit + 1
        while left > 0:
            b = os.read(fd, min(left, 1 << 24))
            if not b:
                break
            chunks.append(b)
            left -= len(b)
    except OSError as e:
        raise InputError([Problem(src, "", f"cannot read: {e.strerror or e}")]) from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        raise InputError([Problem(src, "", too_large)])
    return data


def read_text_limited(path: str | Path, limit: int = MAX_FILE_BYTES,
                      encoding: str = "utf-8") -> str:
    """:func:`read_bytes_limited`, decoded (``utf-8-sig`` drops a byte-order mark).

    Raises:
        InputError: as :func:`read_bytes_limited`; also text that is not valid in ``encoding``.
    """
    data = read_bytes_limited(path, limit)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as e:
        raise InputError([Problem(str(path), f"byte {e.start}",
                                  f"cannot read: not {encoding.removesuffix('-sig').upper()} "
                                  f"text ({e.reason})")]) from None


def read_document(path: str | Path) -> Any:
    """Parse a JSON or YAML file (by extension: ``.yaml``/``.yml`` is YAML, else JSON).

    At most :data:`MAX_FILE_BYTES` are read; only regular files are read
    (:func:`read_bytes_limited`).

    Raises:
        InputError: the file is missing, not a regular file, too large, unreadable, empty or
            malformed (with line and column).
    """
    docs = read_documents(path, multi=False)
    if not docs:
        raise InputError([Problem(str(path), "", "file is empty")])
    return docs[0]


def read_documents(path: str | Path, *, multi: bool = True) -> list[Any]:
    """Every document of a JSON or YAML file (YAML may hold several, separated by ``---``).

    The same strict parse as :func:`read_document`: bounded read, duplicate keys and YAML aliases
    refused, nesting at most :data:`MAX_DEPTH` deep. With ``multi``, empty documents are dropped.

    Args:
        path: the file (``.yaml``/``.yml`` is YAML, anything else JSON).
        multi: accept several YAML documents (else a second one is an error).

    Raises:
        InputError: as :func:`read_document`.
    """
    p = Path(path)
    src = str(p)
    text = read_text_limited(p)
    if not text.strip():
        return []
    too_deep = f"lists and objects are nested more than {MAX_DEPTH} deep"
    docs: list[Any]
    if p.suffix.lower() in (".yaml", ".yml"):
        import yaml

        try:
            if multi:
                docs = list(yaml.load_all(text, Loader=_yaml_loader()))  # noqa: S506 - SafeLoader
            else:
                docs = [yaml.load(text, Loader=_yaml_loader())]  # noqa: S506 - a SafeLoader subclass
        except _ParseError as e:
            raise InputError([Problem(src, e.where, e.reason)]) from None
        except RecursionError:
            raise InputError([Problem(src, "", too_deep)]) from None
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None)
            reason = getattr(e, "problem", None) or str(e)
            raise InputError([Problem(src, _mark(mark), f"malformed YAML: {reason}")]) from None
    else:
        try:
            docs = [json.loads(text, object_pairs_hook=_no_duplicates)]
        except _ParseError as e:
            raise InputError([Problem(src, e.where, e.reason)]) from None
        except RecursionError:
            raise InputError([Problem(src, "", too_deep)]) from None
        except json.JSONDecodeError as e:
            raise InputError(
                [Problem(src, f"line {e.lineno}, column {e.colno}", f"malformed JSON: {e.msg}")]
            ) from None
        except ValueError as e:  # e.g. an integer with more than 4300 digits
            raise InputError([Problem(src, "", f"malformed JSON: {e}")]) from None
    out = []
    for doc in docs:
        if doc is None and multi:
            continue
        bad = _depth_problem(doc)
        if bad is not None:
            raise InputError([Problem(src, "", bad)])
        out.append(doc)
    return out


def write_document(path: str | Path, doc: Any) -> None:
    """Write ``doc`` as JSON or YAML (by extension) atomically (:func:`packing.atomic.write_text`).

    The content goes to a temporary file in the target's folder, renamed over the target when
    complete; an interruption leaves the previous file as it was.

    Raises:
        InputError: the file cannot be written, or would be larger than :data:`MAX_FILE_BYTES`
            (which vbp would refuse to read).
    """
    p = Path(path)
    if p.suffix.lower() in (".yaml", ".yml"):
        import yaml

        text = yaml.safe_dump(doc, sort_keys=False, default_flow_style=None, width=100)
    else:
        text = json.dumps(doc, indent=1, allow_nan=False) + "\n"
    if len(text) > MAX_FILE_BYTES or (
            len(text) * 4 > MAX_FILE_BYTES and len(text.encode("utf-8")) > MAX_FILE_BYTES):
        raise InputError([Problem(str(p), "", f"would be larger than {MAX_FILE_BYTES:,} bytes, "
                                  "the most vbp reads (packing.io.MAX_FILE_BYTES); not written")])
    write_text(p, text)


# ------------------------------------------------------------------------------------------------
# a small validating reader
class _Reader:
    """Reads fields of a raw document, collecting problems instead of raising."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.problems: list[Problem] = []
        self._indices: dict[int, tuple[Sequence[str], dict[str, int]]] = {}

    def bad(self, field: str, reason: str) -> None:
        self.problems.append(Problem(self.source, field, reason))

    def obj(self, v: Any, field: str) -> Mapping[str, Any] | None:
        if not isinstance(v, Mapping):
            self.bad(field, f"expected an object, got {_kind(v)}")
            return None
        return v

    def seq(self, v: Any, field: str) -> Sequence[Any] | None:
        if not isinstance(v, list):
            self.bad(field, f"expected a list, got {_kind(v)}")
            return None
        return v

    def string(self, v: Any, field: str) -> str | None:
        if not isinstance(v, str) or not v:
            self.bad(field, f"expected a non-empty string, got {_kind(v)}")
            return None
        if has_control(v):
            self.bad(field, f"must not contain control characters (newline, tab, ...), got {v!r}")
            return None
        return v

    def _too_large(self, v: float, field: str) -> bool:
        if abs(v) > MAX_NUMBER:
            self.bad(field, f"is beyond the supported range (magnitude at most 2^53 = "
                     f"{MAX_NUMBER}), got {_short(v)}")
            return True
        return False

    def integer(self, v: Any, field: str, minimum: int = 0, maximum: int | None = None,
                what: str = "") -> int | None:
        if isinstance(v, bool) or not isinstance(v, int | float) or (
            isinstance(v, float) and not v.is_integer()
        ):
            self.bad(field, f"expected a whole number, got {_kind(v)}")
            return None
        if self._too_large(v, field):
            return None
        if v < minimum:
            self.bad(field, f"must be at least {minimum}, got {v:g}")
            return None
        if maximum is not None and v > maximum:
            self.bad(field, f"at most {maximum:,} {what} are supported, got {int(v):,}")
            return None
        return int(v)

    def number(self, v: Any, field: str, minimum: float = 0.0) -> float | None:
        if isinstance(v, bool) or not isinstance(v, int | float):
            self.bad(field, f"expected a number, got {_kind(v)}")
            return None
        if isinstance(v, float) and not math.isfinite(v):
            self.bad(field, f"must be finite, got {v}")
            return None
        if self._too_large(v, field):
            return None
        if v < minimum:
            reason = "must not be negative" if minimum == 0 else f"must be at least {minimum:g}"
            self.bad(field, f"{reason}, got {v:g}")
            return None
        return float(v)

    def vector(self, v: Any, field: str, names: Sequence[str]) -> tuple[float, ...] | None:
        """A vector given as a list in ``names`` order or as an object keyed by name.

        An object costs time in the keys it gives, not in the number of resources (missing keys
        are 0): a short file naming many resources expands cheaply.
        """
        if isinstance(v, Mapping):
            index = self._index(names)
            out = [0.0] * len(names)
            ok = True
            for k, x in v.items():
                i = index.get(k) if isinstance(k, str) else None
                if i is None:
                    self.bad(f"{field}.{k}", f"unknown resource {k!r}; resources are "
                             f"{name_list(names)}")
                    ok = False
                    continue
                val = self.number(x, f"{field}.{k}")
                if val is None:
                    ok = False
                else:
                    out[i] = val
            return tuple(out) if ok else None
        if isinstance(v, list):
            if len(v) != len(names):
                self.bad(field, f"has {len(v)} values, expected {len(names)} "
                         f"({name_list(names)})")
                return None
            vals = [self.number(x, f"{field}[{i}]") for i, x in enumerate(v)]
        else:
            self.bad(field, f"expected a list or an object of numbers, got {_kind(v)}")
            return None
        if any(x is None for x in vals):
            return None
        return tuple(x for x in vals if x is not None)

    def _index(self, names: Sequence[str]) -> dict[str, int]:
        """``{name: position}`` of ``names``, built once per list of names."""
        key = id(names)
        cached = self._indices.get(key)
        if cached is None or cached[0] is not names:
            cached = (names, {n: i for i, n in enumerate(names)})
            self._indices[key] = cached
        return cached[1]

    def unknown_keys(self, d: Mapping[str, Any], field: str, allowed: set[str]) -> None:
        for k in d:
            if k not in allowed:
                self.bad(f"{field}.{k}" if field else k,
                         f"unknown field; allowed: {', '.join(sorted(allowed))}")


# ------------------------------------------------------------------------------------------------
# instances
_TOP = {"format", "name", "resources", "gpu_resources", "host_types", "apps", "rules",
        "exclusions", "initial", "requests", "meta"}
_HT = {"name", "capacity", "count", "cost", "cluster", "gpus", "gpu_capacity", "gpu_model",
       "host_names", "labels", "taints"}
_APP = {"name", "demand", "count", "max_per_host", "gpu", "node_selector", "node_affinity",
        "tolerations", "domain_caps", "spreads"}
_GPU = {"cards", "per_card", "whole", "models"}


def instance_from_dict(doc: Any, source: str = "<instance>") -> Instance:
    """Build and validate an :class:`Instance` from a parsed document.

    Raises:
        InputError: with one :class:`Problem` per thing wrong.
    """
    r = _Reader(source)
    d = r.obj(doc, "")
    if d is None:
        raise InputError(r.problems)
    r.unknown_keys(d, "", _TOP)
    fmt = d.get("format", INSTANCE_FORMAT)
    if fmt != INSTANCE_FORMAT:
        r.bad("format", f"expected {INSTANCE_FORMAT!r}, got {fmt!r}")
    name = r.string(d.get("name", Path(source).stem or "instance"), "name") or "instance"
    resources = _names(r, d.get("resources"), "resources", allow_empty=False)
    gpu_res = _names(r, d.get("gpu_resources", []), "gpu_resources", allow_empty=True)
    too_many = _cells_problems(d, len(resources), source)
    if too_many:
        raise InputError(too_many)  # before any per-host or per-app work
    host_types: list[HostType] = []
    seen_types: set[str] = set()
    seen_hosts: set[str] = set()
    for i, raw in enumerate(r.seq(d.get("host_types"), "host_types") or []):
        ht = _host_type(r, raw, f"host_types[{i}]", resources, gpu_res, seen_types, seen_hosts)
        if ht is not None:
            host_types.append(ht)
    apps: list[App] = []
    seen_apps: set[str] = set()
    raw_apps = r.seq(d.get("apps"), "apps") or []
    for i, raw in enumerate(raw_apps):
        app = _app(r, raw, f"apps[{i}]", resources, gpu_res, seen_apps)
        if app is not None:
            apps.append(app)
    if raw_apps and d.get("host_types") == []:
        r.bad("host_types", "is empty: an instance with apps needs at least one host type (no "
              "container could be placed)")
    rules: list[Rule] = []
    for i, raw in enumerate(r.seq(d.get("rules", []), "rules") or []):
        f = f"rules[{i}]"
        if isinstance(raw, list):
            if len(raw) != 3:
                r.bad(f, f"expected [A, B, k] or {{\"a\": A, \"b\": B, \"k\": k}}, got a list "
                      f"of {len(raw)} values")
                continue
            raw = {"a": raw[0], "b": raw[1], "k": raw[2]}
        if not isinstance(raw, Mapping):
            r.bad(f, f"expected [A, B, k] or {{\"a\": A, \"b\": B, \"k\": k}}, got {_kind(raw)}")
            continue
        o = raw
        r.unknown_keys(o, f, {"a", "b", "k"})
        a, b = _app_ref(r, o.get("a"), f"{f}.a", seen_apps), _app_ref(r, o.get("b"), f"{f}.b",
                                                                     seen_apps)
        k = r.integer(o.get("k"), f"{f}.k")
        if a is not None and b is not None and k is not None:
            rules.append(Rule(a, b, k))
    exclusions: list[tuple[str, str]] = []
    for i, raw in enumerate(r.seq(d.get("exclusions", []), "exclusions") or []):
        f = f"exclusions[{i}]"
        if not isinstance(raw, list) or len(raw) != 2:
            r.bad(f, f"expected a pair of app names, got {_kind(raw)}")
            continue
        a, b = _app_ref(r, raw[0], f"{f}[0]", seen_apps), _app_ref(r, raw[1], f"{f}[1]", seen_apps)
        if a is not None and b is not None:
            if a == b:
                r.bad(f, f"an app cannot exclude itself ({a!r}); use max_per_host")
            else:
                exclusions.append((a, b))
    requests: list[Request] = []
    for i, raw in enumerate(r.seq(d.get("requests", []), "requests") or []):
        req = _request(r, raw, f"requests[{i}]", seen_apps)
        if req is not None:
            requests.append(req)
    meta = d.get("meta", {})
    if not isinstance(meta, Mapping):
        r.bad("meta", f"expected an object, got {_kind(meta)}")
        meta = {}
    else:
        _plain(r, meta, "meta")
    if r.problems:
        raise InputError(r.problems)
    with reported_as(source):  # checked when built (packing.validation), named by the file
        inst = Instance(name, tuple(resources), tuple(host_types), tuple(apps), tuple(rules),
                        tuple(exclusions), tuple(gpu_res), None, tuple(requests), dict(meta))
    if d.get("initial") is not None:
        initial = placement_from_dict(d["initial"], inst, source, field="initial")
        with reported_as(source):
            inst = inst.replace(initial=initial)
    return inst


def _cells_problems(d: Mapping[str, Any], n_resources: int, source: str) -> list[Problem]:
    """Sizes of a raw document beyond :data:`MAX_CELLS`, found before any vector is read."""
    out: list[Problem] = []
    apps = d.get("apps")
    n_apps = len(apps) if isinstance(apps, list) else 0
    hts = d.get("host_types")
    n_hosts = 0
    for t in hts if isinstance(hts, list) else []:
        c = t.get("count") if isinstance(t, Mapping) else None
        if isinstance(c, int) and not isinstance(c, bool) and 0 < c <= MAX_HOSTS:
            n_hosts += c
    for what, n in (("hosts", n_hosts), ("apps", n_apps)):
        if n * n_resources > MAX_CELLS:
            out.append(Problem(source, "resources", f"{n:,} {what} x {n_resources:,} resources is "
                               f"{n * n_resources:,} values, more than the {MAX_CELLS:,} vbp "
                               "supports (packing.io.MAX_CELLS)"))
    return out


def _plain(r: _Reader, v: Any, field: str) -> None:
    """Free-form data (``meta``): JSON values only, finite numbers (iterative)."""
    stack: list[tuple[Any, str]] = [(v, field)]
    while stack:
        x, f = stack.pop()
        if isinstance(x, Mapping):
            for k, y in x.items():
                if not isinstance(k, str):
                    r.bad(f, f"keys must be strings, got {_kind(k)}")
                else:
                    stack.append((y, f"{f}.{k}"))
        elif isinstance(x, list):
            stack.extend((y, f"{f}[{i}]") for i, y in enumerate(x))
        elif isinstance(x, float) and not math.isfinite(x):
            r.bad(f, f"must be finite, got {x}")
        elif x is not None and not isinstance(x, str | int | float | bool):
            r.bad(f, f"expected a JSON value (string, number, boolean, list, object), got "
                  f"{_kind(x)}")


def _names(r: _Reader, v: Any, field: str, allow_empty: bool) -> list[str]:
    seq = r.seq(v, field)
    if seq is None:
        return []
    if len(seq) > MAX_RESOURCES:
        r.bad(field, f"{len(seq):,} names; at most {MAX_RESOURCES:,} are supported")
        return []
    if not seq and not allow_empty:
        r.bad(field, "must name at least one resource")
    out: list[str] = []
    for i, x in enumerate(seq):
        s = r.string(x, f"{field}[{i}]")
        if s is not None:
            if s in out:
                r.bad(f"{field}[{i}]", f"duplicate name {s!r}")
            out.append(s)
    return out


def _host_type(r: _Reader, raw: Any, f: str, resources: Sequence[str], gpu_res: Sequence[str],
               seen: set[str], seen_hosts: set[str]) -> HostType | None:
    o = r.obj(raw, f)
    if o is None:
        return None
    r.unknown_keys(o, f, _HT)
    name = r.string(o.get("name"), f"{f}.name")
    if name is not None:
        if name in seen:
            r.bad(f"{f}.name", f"duplicate host type {name!r}")
        seen.add(name)
        f = f"{f} ({name})"
    cap = r.vector(o.get("capacity"), f"{f}.capacity", resources)
    count = r.integer(o.get("count"), f"{f}.count", maximum=MAX_HOSTS, what="hosts")
    cost = r.number(o.get("cost", 1.0), f"{f}.cost")
    cluster = o.get("cluster")
    if cluster is not None:
        cluster = r.string(cluster, f"{f}.cluster")
    gpus = r.integer(o.get("gpus", 0), f"{f}.gpus", maximum=MAX_GPUS, what="GPU cards per host")
    gcap: tuple[float, ...] | None = ()
    if gpus:
        if not gpu_res:
            r.bad(f"{f}.gpus", "host type has GPU cards but the instance names no gpu_resources")
        gcap = r.vector(o.get("gpu_capacity"), f"{f}.gpu_capacity", gpu_res)
    elif o.get("gpu_capacity") is not None and gpus == 0:
        r.bad(f"{f}.gpu_capacity", "is given but the host type has no GPU cards (gpus is 0)")
    model = o.get("gpu_model")
    if model is not None:
        model = r.string(model, f"{f}.gpu_model")
    names = None
    if o.get("host_names") is not None:
        seq = r.seq(o["host_names"], f"{f}.host_names")
        if seq is not None:
            good = [r.string(x, f"{f}.host_names[{j}]") for j, x in enumerate(seq)]
            if count is not None and len(seq) != count:
                r.bad(f"{f}.host_names", f"has {len(seq)} names for {count} hosts")
            for j, x in enumerate(good):
                if x is not None and x in seen_hosts:
                    r.bad(f"{f}.host_names[{j}]", f"duplicate host name {x!r}")
                    break
                if x is not None:
                    seen_hosts.add(x)
            if all(x is not None for x in good):
                names = tuple(x for x in good if x is not None)
            else:
                return None
    labels = _labels(r, o.get("labels"), f"{f}.labels")
    taints = _taints(r, o.get("taints"), f"{f}.taints")
    if None in (name, cap, count, cost, gpus, gcap, labels, taints):
        return None
    return HostType(name, cap, count, cost, cluster, gpus, gcap, model, names,  # type: ignore[arg-type]
                    labels, taints)  # type: ignore[arg-type]


def _labels(r: _Reader, v: Any, f: str) -> Labels | None:
    """A label map ``{key: value}`` (keys non-empty strings, values strings)."""
    if v is None:
        return ()
    o = r.obj(v, f)
    if o is None:
        return None
    n = len(r.problems)
    for k, x in o.items():
        if r.string(k, f"{f} key") is not None and not isinstance(x, str):
            r.bad(f"{f}.{k}", f"expected a string, got {_kind(x)} (quote numbers and booleans)")
    return labels_of(o) if len(r.problems) == n else None


def _taints(r: _Reader, v: Any, f: str) -> tuple[Taint, ...] | None:
    """Taints ``[{"key", "value", "effect"}]``."""
    if v is None:
        return ()
    out: list[Taint] = []
    n = len(r.problems)
    for i, raw in enumerate(r.seq(v, f) or []):
        o = r.obj(raw, f"{f}[{i}]")
        if o is None:
            continue
        r.unknown_keys(o, f"{f}[{i}]", {"key", "value", "effect"})
        vals = [o.get(k, "") for k in ("key", "value", "effect")]
        if not all(isinstance(x, str) for x in vals):
            r.bad(f"{f}[{i}]", "key, value and effect are strings")
            continue
        t = Taint(*vals)
        why = taint_problem(t)
        if why is not None:
            r.bad(f"{f}[{i}]", why)
        out.append(t)
    return tuple(out) if len(r.problems) == n else None


def _tolerations(r: _Reader, v: Any, f: str) -> tuple[Toleration, ...] | None:
    """Tolerations ``[{"key", "operator", "value", "effect"}]`` (operator Equal by default)."""
    if v is None:
        return ()
    out: list[Toleration] = []
    n = len(r.problems)
    for i, raw in enumerate(r.seq(v, f) or []):
        o = r.obj(raw, f"{f}[{i}]")
        if o is None:
            continue
        r.unknown_keys(o, f"{f}[{i}]", {"key", "operator", "value", "effect"})
        vals = [o.get("key", ""), o.get("operator", "Equal"), o.get("value", ""),
                o.get("effect", "")]
        if not all(isinstance(x, str) for x in vals):
            r.bad(f"{f}[{i}]", "key, operator, value and effect are strings")
            continue
        t = Toleration(*vals)
        why = toleration_problem(t)
        if why is not None:
            r.bad(f"{f}[{i}]", why)
        out.append(t)
    return tuple(out) if len(r.problems) == n else None


def _affinity(r: _Reader, v: Any, f: str) -> tuple[Term, ...] | None:
    """Required node affinity: a list of terms (ORed), each a list of requirements (ANDed)."""
    out: list[Term] = []
    n = len(r.problems)
    for i, raw in enumerate(r.seq(v, f) or []):
        term: list[Requirement] = []
        for j, e in enumerate(r.seq(raw, f"{f}[{i}]") or []):
            fe = f"{f}[{i}][{j}]"
            o = r.obj(e, fe)
            if o is None:
                continue
            r.unknown_keys(o, fe, {"key", "operator", "values"})
            key = r.string(o.get("key"), f"{fe}.key")
            op = o.get("operator")
            values = o.get("values", [])
            if not isinstance(values, list) or not all(isinstance(x, str) for x in values):
                r.bad(f"{fe}.values", "expected a list of strings (quote numbers)")
                continue
            why = requirement_problem(str(op), tuple(values), NODE_OPERATORS)
            if why is not None:
                r.bad(fe, why)
            elif key is not None:
                term.append(Requirement(key, str(op), tuple(values)))
        out.append(tuple(term))
    return tuple(out) if len(r.problems) == n else None


def _app(r: _Reader, raw: Any, f: str, resources: Sequence[str], gpu_res: Sequence[str],
         seen: set[str]) -> App | None:
    o = r.obj(raw, f)
    if o is None:
        return None
    r.unknown_keys(o, f, _APP)
    name = r.string(o.get("name"), f"{f}.name")
    if name is not None:
        if name in seen:
            r.bad(f"{f}.name", f"duplicate app {name!r}")
        seen.add(name)
        f = f"{f} ({name})"
    demand = r.vector(o.get("demand"), f"{f}.demand", resources)
    count = r.integer(o.get("count"), f"{f}.count", maximum=MAX_CONTAINERS, what="containers")
    mph = o.get("max_per_host")
    if mph is not None:
        mph = r.integer(mph, f"{f}.max_per_host")
    cards, whole = 0, False
    per_card: tuple[float, ...] = ()
    models: tuple[str, ...] = ()
    g = o.get("gpu")
    if g is not None:
        go = r.obj(g, f"{f}.gpu")
        if go is not None:
            r.unknown_keys(go, f"{f}.gpu", _GPU)
            if not gpu_res:
                r.bad(f"{f}.gpu", "app asks for GPU cards but the instance names no gpu_resources")
            cards = r.integer(go.get("cards", 1), f"{f}.gpu.cards", minimum=1,
                              maximum=MAX_GPUS, what="GPU cards") or 0
            whole = go.get("whole", False)
            if not isinstance(whole, bool):
                r.bad(f"{f}.gpu.whole", f"expected true or false, got {_kind(whole)}")
                whole = False
            if not whole:
                per_card = r.vector(go.get("per_card"), f"{f}.gpu.per_card", gpu_res) or ()
            ms = r.seq(go.get("models", []), f"{f}.gpu.models") or []
            ok_models = [r.string(m, f"{f}.gpu.models[{j}]") for j, m in enumerate(ms)]
            models = tuple(m for m in ok_models if m is not None)
    selector = _labels(r, o.get("node_selector"), f"{f}.node_selector")
    affinity = (_affinity(r, o["node_affinity"], f"{f}.node_affinity")
                if o.get("node_affinity") is not None else None)
    tolerations = _tolerations(r, o.get("tolerations"), f"{f}.tolerations")
    caps = _key_ints(r, o.get("domain_caps"), f"{f}.domain_caps", 0)
    spreads = _key_ints(r, o.get("spreads"), f"{f}.spreads", 1)
    if (None in (name, demand, count, selector, tolerations, caps, spreads)
            or (g is not None and not cards)
            or (o.get("node_affinity") is not None and affinity is None)):
        return None
    return App(name, demand, count, mph, cards, per_card, whole, models,  # type: ignore[arg-type]
               selector, affinity, tolerations, caps, spreads)  # type: ignore[arg-type]


def _key_ints(r: _Reader, v: Any, f: str, minimum: int) -> tuple[tuple[str, int], ...] | None:
    """A map ``{label key: integer >= minimum}`` as sorted pairs (domain caps, spreads)."""
    if v is None:
        return ()
    o = r.obj(v, f)
    if o is None:
        return None
    n = len(r.problems)
    out = []
    for k, x in o.items():
        if r.string(k, f"{f} key") is not None:
            i = r.integer(x, f"{f}.{k}", minimum=minimum)
            if i is not None:
                out.append((k, i))
    return tuple(sorted(out)) if len(r.problems) == n else None


def _app_ref(r: _Reader, v: Any, f: str, apps: set[str]) -> str | None:
    s = r.string(v, f)
    if s is not None and s not in apps:
        r.bad(f, f"unknown app {s!r}")
        return None
    return s


def _request(r: _Reader, raw: Any, f: str, apps: set[str]) -> Request | None:
    o = r.obj(raw, f)
    if o is None:
        return None
    r.unknown_keys(o, f, {"time", "app", "count", "end"})
    t = r.number(o.get("time", 0.0), f"{f}.time")
    app = _app_ref(r, o.get("app"), f"{f}.app", apps)
    count = r.integer(o.get("count", 1), f"{f}.count", minimum=1, maximum=MAX_CONTAINERS,
                      what="containers")
    end = o.get("end")
    if end is not None:
        end = r.number(end, f"{f}.end")
        if end is not None and t is not None and end < t:
            r.bad(f"{f}.end", f"departure {end:g} is before arrival {t:g}")
            end = None
    if t is None or app is None or count is None:
        return None
    return Request(t, app, count, end)


def _num(x: float) -> float | int:
    """Write whole floats as integers, keeping the file short and round-trips exact."""
    return int(x) if float(x).is_integer() and abs(x) < 2**53 else float(x)


def instance_to_dict(inst: Instance) -> dict[str, Any]:
    """The document :func:`save_instance` writes (lists in resource order, defaults omitted)."""
    doc: dict[str, Any] = {"format": INSTANCE_FORMAT, "name": inst.name,
                           "resources": list(inst.resources)}
    if inst.gpu_resources:
        doc["gpu_resources"] = list(inst.gpu_resources)
    hts = []
    for t in inst.host_types:
        h: dict[str, Any] = {"name": t.name, "capacity": [_num(x) for x in t.capacity],
                             "count": t.count}
        if t.cost != 1.0:
            h["cost"] = _num(t.cost)
        if t.cluster is not None:
            h["cluster"] = t.cluster
        if t.gpus:
            h["gpus"] = t.gpus
            h["gpu_capacity"] = [_num(x) for x in t.gpu_capacity]
        if t.gpu_model is not None:
            h["gpu_model"] = t.gpu_model
        if t.host_names is not None:
            h["host_names"] = list(t.host_names)
        if t.labels:
            h["labels"] = dict(t.labels)
        if t.taints:
            h["taints"] = [{"key": x.key, "value": x.value, "effect": x.effect} for x in t.taints]
        hts.append(h)
    doc["host_types"] = hts
    apps = []
    for a in inst.apps:
        o: dict[str, Any] = {"name": a.name, "demand": [_num(x) for x in a.demand],
                             "count": a.count}
        if a.max_per_host is not None:
            o["max_per_host"] = a.max_per_host
        if a.gpu_cards:
            g: dict[str, Any] = {"cards": a.gpu_cards}
            if a.gpu_whole:
                g["whole"] = True
            else:
                g["per_card"] = [_num(x) for x in a.gpu_per_card]
            if a.gpu_models:
                g["models"] = list(a.gpu_models)
            o["gpu"] = g
        if a.node_selector:
            o["node_selector"] = dict(a.node_selector)
        if a.node_affinity is not None:
            o["node_affinity"] = [[{"key": q.key, "operator": q.operator, "values": list(q.values)}
                                   for q in term] for term in a.node_affinity]
        if a.tolerations:
            o["tolerations"] = [{"key": x.key, "operator": x.operator, "value": x.value,
                                 "effect": x.effect} for x in a.tolerations]
        if a.domain_caps:
            o["domain_caps"] = dict(a.domain_caps)
        if a.spreads:
            o["spreads"] = dict(a.spreads)
        apps.append(o)
    doc["apps"] = apps
    if inst.rules:
        doc["rules"] = [[r.a, r.b, r.k] for r in inst.rules]
    if inst.exclusions:
        doc["exclusions"] = [list(p) for p in inst.exclusions]
    if inst.initial is not None:
        doc["initial"] = placement_to_dict(inst.initial, inst)
    if inst.requests:
        reqs = []
        for q in inst.requests:
            rq: dict[str, Any] = {"time": _num(q.time), "app": q.app}
            if q.count != 1:
                rq["count"] = q.count
            if q.end is not None:
                rq["end"] = _num(q.end)
            reqs.append(rq)
        doc["requests"] = reqs
    if inst.meta:
        doc["meta"] = dict(inst.meta)
    return doc


def load_instance(path: str | Path) -> Instance:
    """Load and validate an instance file (JSON or YAML).

    Raises:
        InputError: naming the file, the field and the reason for every problem.
    """
    return instance_from_dict(read_document(path), str(path))


def save_instance(inst: Instance, path: str | Path) -> None:
    """Save an instance as JSON or YAML (by extension), atomically.

    Raises:
        InputError: the instance is one :func:`load_instance` would refuse (beyond the limits,
            bad names, ...; :func:`check_instance`), or the file cannot be written.
    """
    check_instance(inst, str(path))
    write_document(path, instance_to_dict(inst))


# ------------------------------------------------------------------------------------------------
# placements
def placement_to_dict(p: Placement, inst: Instance) -> dict[str, Any]:
    """A placement document: host names per container (``null`` = unplaced), GPU cards per app."""
    names = inst.host_names

    def host_ref(h: int) -> str | int | None:
        if h == UNPLACED:
            return None
        return names[h] if 0 <= h < len(names) else h

    doc: dict[str, Any] = {"format": PLACEMENT_FORMAT, "instance": inst.name,
                           "hosts": {a: [host_ref(h) for h in hs] for a, hs in p.hosts.items()}}
    gpus = {a: [list(c) for c in cs] for a, cs in p.gpus.items() if cs}
    if gpus:
        doc["gpus"] = gpus
    return doc


def placement_from_dict(doc: Any, inst: Instance, source: str = "<placement>",
                        field: str = "") -> Placement:
    """Build a placement from a document; hosts may be given by name or by index.

    A container is unplaced only when its entry is ``null``; a host index must be one of
    ``0 .. n_hosts - 1`` (``-1`` is an error, not "unplaced"). GPU card lists must belong to apps
    the placement lists, one list per container at most, with card indices the container's host
    has. Unknown app names and wrong container counts are kept: the checker reports them.

    Raises:
        InputError: with one :class:`Problem` per thing wrong.
    """
    r = _Reader(source)
    pre = f"{field}." if field else ""
    d = r.obj(doc, field)
    if d is None:
        raise InputError(r.problems)
    r.unknown_keys(d, field, {"format", "instance", "hosts", "gpus", "meta"})
    fmt = d.get("format", PLACEMENT_FORMAT)
    if fmt != PLACEMENT_FORMAT:
        r.bad(f"{pre}format", f"expected {PLACEMENT_FORMAT!r}, got {fmt!r}")
    if d.get("instance") is not None:
        r.string(d["instance"], f"{pre}instance")
    if d.get("meta") is not None:
        if isinstance(d["meta"], Mapping):
            _plain(r, d["meta"], f"{pre}meta")
        else:
            r.bad(f"{pre}meta", f"expected an object, got {_kind(d['meta'])}")
    idx = inst.host_index
    n_hosts = inst.n_hosts
    hosts: dict[str, tuple[int, ...]] = {}
    ho = r.obj(d.get("hosts"), f"{pre}hosts") or {}
    for app, seq in ho.items():
        if r.string(app, f"{pre}hosts") is None:
            continue
        f = f"{pre}hosts.{app}"
        lst = r.seq(seq, f)
        if lst is None:
            continue
        if len(lst) > MAX_CONTAINERS:
            r.bad(f, f"at most {MAX_CONTAINERS:,} containers are supported, got {len(lst):,}")
            continue
        out = []
        for j, h in enumerate(lst):
            if h is None:
                out.append(UNPLACED)
            elif isinstance(h, str):
                if h not in idx:
                    r.bad(f"{f}[{j}]", f"unknown host {h!r}")
                    out.append(UNPLACED)
                else:
                    out.append(idx[h])
            elif isinstance(h, int) and not isinstance(h, bool):
                if not 0 <= h < n_hosts:
                    hint = "; write null for an unplaced container" if h < 0 else ""
                    span = f"0..{n_hosts - 1}" if n_hosts else "none: the instance has no hosts"
                    r.bad(f"{f}[{j}]", f"host index {_short(h)} is out of range ({span}){hint}")
                    out.append(UNPLACED)
                else:
                    out.append(h)
            else:
                r.bad(f"{f}[{j}]", f"expected a host name, index or null, got {_kind(h)}")
                out.append(UNPLACED)
        hosts[app] = tuple(out)
    gpus: dict[str, tuple[tuple[int, ...], ...]] = {}
    go = r.obj(d.get("gpus", {}), f"{pre}gpus") or {}
    host_gpus = inst.host_gpus
    for app, seq in go.items():
        if r.string(app, f"{pre}gpus") is None:
            continue
        f = f"{pre}gpus.{app}"
        lst = r.seq(seq, f)
        if lst is None:
            continue
        if app not in hosts:
            r.bad(f, f"GPU cards for app {app!r}, which the placement's hosts do not list")
            continue
        hs = hosts[app]
        if len(lst) > len(hs):
            r.bad(f, f"has {len(lst)} card lists for the {len(hs)} containers of app {app!r}")
            continue
        cs = []
        for j, c in enumerate(lst):
            if not isinstance(c, list) or not all(isinstance(x, int) and not isinstance(x, bool)
                                                  for x in c):
                r.bad(f"{f}[{j}]", f"expected a list of card indices, got {_kind(c)}")
                c = []
            h = hs[j]
            if c and h == UNPLACED:
                r.bad(f"{f}[{j}]", f"cards {c} for container {j}, which is not on a host")
                c = []
            elif c:
                n_cards = int(host_gpus[h])
                wrong = [x for x in c if not 0 <= x < n_cards]
                if wrong:
                    have = f"cards 0..{n_cards - 1}" if n_cards else "no GPU cards"
                    r.bad(f"{f}[{j}]", f"card {_short(wrong[0])} on host "
                          f"{inst.host_names[h]!r}, which has {have}")
                    c = []
            cs.append(tuple(c))
        gpus[app] = tuple(cs)
    if r.problems:
        raise InputError(r.problems)
    return Placement(hosts, gpus)


def load_placement(path: str | Path, inst: Instance) -> Placement:
    """Load a placement file for ``inst``."""
    return placement_from_dict(read_document(path), inst, str(path))


def save_placement(p: Placement, inst: Instance, path: str | Path) -> None:
    """Save a placement as JSON or YAML (by extension), atomically."""
    write_document(path, placement_to_dict(p, inst))


__all__: list[str] = [
    "INSTANCE_FORMAT", "MAX_CONTAINERS", "MAX_DEPTH", "MAX_GPUS", "MAX_HOSTS", "MAX_NUMBER",
    "MAX_RESOURCES", "PLACEMENT_FORMAT", "check_instance", "escape_control", "has_control",
    "instance_from_dict", "instance_problems", "instance_to_dict",
    "load_instance", "load_placement", "placement_from_dict", "placement_to_dict",
    "read_bytes_limited", "read_document", "read_text_limited", "save_instance", "save_placement",
    "write_document",
]
