"""Reading and writing raw JSON and YAML documents, strictly and within bounds.

A file is read only if it is a regular file of at most :data:`MAX_FILE_BYTES`; the parse refuses
duplicate keys, YAML aliases and nesting deeper than :data:`MAX_DEPTH`. Writing is atomic
(:mod:`packing.io.atomic`). The schemas of instance and placement documents live in
:mod:`packing.io.instance_file` and :mod:`packing.io.placement_file`; :mod:`packing.io` gathers them.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from packing.errors import InputError, Problem
from packing.io.atomic import write_text

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


ALIASES = "YAML aliases (*name) are not supported"
"""Why a YAML file with an alias is refused."""


def _alias_mark(text: str) -> str:
    """Where the first YAML alias of ``text`` is (a second pass, on the error path only)."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", None) or yaml.SafeLoader
    for ev in yaml.parse(text, Loader=loader):  # noqa: S506 - events only, nothing constructed
        if isinstance(ev, yaml.AliasEvent):
            return _mark(ev.start_mark)
    return ""


def _yaml_loader() -> type:
    """A safe YAML loader that refuses duplicate keys, aliases (``*name``) and ambiguous numbers.

    A number that YAML 1.1 (PyYAML, and the YAML library behind ``kubectl``) and YAML 1.2 read
    differently is refused, not guessed: ``1_0`` (10, or the string "1_0"), ``1:30``
    (base 60: 90, or a string) and ``010`` (octal 8, or 10).
    """
    import yaml

    base: Any = getattr(yaml, "CSafeLoader", None) or yaml.SafeLoader  # libyaml when present

    class StrictLoader(base):
        def compose_node(self, parent: Any, index: Any) -> Any:  # the pure-Python parser only
            if self.check_event(yaml.AliasEvent):
                ev = self.peek_event()
                raise _ParseError(_mark(ev.start_mark), ALIASES)
            return super().compose_node(parent, index)

        def construct_object(self, node: Any, deep: bool = False) -> Any:
            # libyaml composes aliases itself: an aliased node is met a second time here
            if node in self.constructed_objects or node in self.recursive_objects:
                raise _ParseError("", ALIASES)  # read_documents finds where the alias is
            return super().construct_object(node, deep=deep)

        def construct_yaml_int(self, node: Any) -> Any:
            _unambiguous(node)
            return super().construct_yaml_int(node)

        def construct_yaml_float(self, node: Any) -> Any:
            _unambiguous(node)
            return super().construct_yaml_float(node)

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            out = super().construct_mapping(node, deep=deep)
            if len(out) < len(node.value):  # a key given twice: name it
                seen: set[Any] = set()
                for key_node, _ in node.value:
                    key = self.constructed_objects.get(key_node)
                    if key in seen:
                        raise _ParseError(_mark(key_node.start_mark),
                                          f"key {key!r} appears twice in the same object (the "
                                          "first value would be silently dropped)")
                    seen.add(key)
            return out

    StrictLoader.add_constructor("tag:yaml.org,2002:int", StrictLoader.construct_yaml_int)
    StrictLoader.add_constructor("tag:yaml.org,2002:float", StrictLoader.construct_yaml_float)
    return StrictLoader


def _unambiguous(node: Any) -> None:
    """Refuse a YAML number that YAML 1.1 and 1.2 read differently (see :func:`_yaml_loader`)."""
    text = str(node.value)
    digits = text.lstrip("+-")
    why = ("'_' (YAML 1.1 drops it, YAML 1.2 reads a string)" if "_" in text
           else "':' (YAML 1.1 reads base 60, YAML 1.2 a string)" if ":" in text
           else "a leading 0 (YAML 1.1 reads octal, YAML 1.2 decimal)"
           if len(digits) > 1 and digits[0] == "0" and digits.isdigit() else None)
    if why is not None:
        raise _ParseError(_mark(node.start_mark), f"the number {text} has {why}: write it "
                          "without, or quote it to mean a string")


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
            where = e.where or (_alias_mark(text) if e.reason == ALIASES else "")
            raise InputError([Problem(src, where, e.reason)]) from None
        except RecursionError:
            raise InputError([Problem(src, "", too_deep)]) from None
        except yaml.YAMLError as e:
            mark = getattr(e, "problem_mark", None)
            reason = getattr(e, "problem", None) or str(e)
            if "nesting depth" in reason:  # libyaml's own limit (1000) is above MAX_DEPTH
                raise InputError([Problem(src, "", too_deep)]) from None
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
    """Write ``doc`` as JSON or YAML (by extension) atomically (:func:`packing.io.atomic.write_text`).

    The content goes to a temporary file in the target's folder, renamed over the target when
    complete; an interruption leaves the previous file as it was.

    Raises:
        InputError: the file cannot be written, or would be larger than :data:`MAX_FILE_BYTES`
            (which vbp would refuse to read).
    """
    write_text(path, document_text(path, doc))


def document_text(path: str | Path, doc: Any) -> str:
    """``doc`` as the text :func:`write_document` writes to ``path``: YAML or JSON by extension.

    Raises:
        InputError: the text would be larger than :data:`MAX_FILE_BYTES` (which vbp would refuse
            to read).
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
    return text


__all__: list[str] = [
    "MAX_DEPTH", "MAX_FILE_BYTES", "document_text", "read_bytes_limited", "read_document",
    "read_documents", "read_text_limited", "write_document",
]
