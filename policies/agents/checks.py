"""Checks of an agent file's content before anything is built from it.

A model file is user input: its stored hyper-parameters decide how large the networks are, its
tensors are copied into them, its strings are printed. Every agent kind's ``check_file(data)``
(registered in :data:`policies.agents.files.CHECKS`) uses these helpers to check, before any
network exists:

* every stored hyper-parameter against its allowed range (:class:`Num`, :class:`Ints`,
  :class:`Flag`, :class:`Choice`, :class:`Text`; :func:`check_fields`), so a file cannot ask for a
  million layers;
* the parameter count of the network the hyper-parameters describe (:func:`meta_shapes` builds it
  on torch's ``meta`` device, which allocates nothing) against :data:`MAX_PARAMS`;
* every stored tensor against the shape that network expects, and against its own storage (a
  tensor of a huge shape over a one-element storage is refused), and its values (finite)
  (:func:`check_tensors`); the optimiser state of a checkpoint likewise (:func:`check_adam`).

A failed check raises :class:`FileFieldError` (the field and the reason);
:func:`policies.agents.files.read_agent_file` turns it into an
:class:`~packing.errors.InputError` naming the file.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from packing.io import escape_control

MAX_PARAMS = 20_000_000
"""Most parameters (weights) one network of an agent file may have (80 MB as float32)."""

MAX_TEXT = 200
"""Longest name (characters) an agent file may give its agent."""

MAX_LIST = 10_000_000
"""Longest list of numbers (a training curve) an agent file may hold."""


class FileFieldError(ValueError):
    """A field of an agent file is missing, of the wrong type, out of range or inconsistent.

    Args:
        field: where in the file, e.g. ``"config.layers"`` or ``"state_dict['head.0.weight']"``.
        reason: what is wrong, with the allowed range.
    """

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field, self.reason = field, reason


def _fmt(x: float) -> str:
    return f"{int(x):_}" if float(x).is_integer() and abs(x) >= 1e6 else f"{x:g}"


@dataclass(frozen=True)
class Num:
    """A number in ``[lo, hi]`` (``(lo, hi]`` with ``lo_open``); an integer with ``integer``."""

    lo: float
    hi: float
    integer: bool = False
    lo_open: bool = False

    def describe(self) -> str:
        """The allowed range in words, e.g. ``"an integer in 1..16"``."""
        if self.integer:
            return f"an integer in {_fmt(self.lo)}..{_fmt(self.hi)}"
        return f"a number in {'(' if self.lo_open else '['}{_fmt(self.lo)}, {_fmt(self.hi)}]"

    def check(self, field: str, value: Any) -> int | float:
        """``value`` as an int or float, or :class:`FileFieldError`."""
        bad = FileFieldError(field, f"{_show(value)}; expected {self.describe()}")
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise bad
        if self.integer and not isinstance(value, int):
            raise bad
        v = float(value)
        if not math.isfinite(v) or v > self.hi or v < self.lo or (self.lo_open and v == self.lo):
            raise bad
        return int(value) if self.integer else float(value)


@dataclass(frozen=True)
class Ints:
    """A list of ``min_len .. max_len`` integers, each in ``item``'s range."""

    item: Num
    min_len: int
    max_len: int

    def describe(self) -> str:
        """The allowed range in words."""
        n = str(self.min_len) if self.min_len == self.max_len else f"{self.min_len}..{self.max_len}"
        return f"a list of {n} integers, each {self.item.describe()}"

    def check(self, field: str, value: Any) -> tuple[int, ...]:
        """``value`` as a tuple of ints, or :class:`FileFieldError`."""
        if not isinstance(value, list | tuple) or not self.min_len <= len(value) <= self.max_len:
            raise FileFieldError(field, f"{_show(value)}; expected {self.describe()}")
        return tuple(int(self.item.check(f"{field}[{i}]", v)) for i, v in enumerate(value))


@dataclass(frozen=True)
class Flag:
    """``True`` or ``False``."""

    def describe(self) -> str:
        """The allowed values in words."""
        return "true or false"

    def check(self, field: str, value: Any) -> bool:
        """``value`` if a bool, or :class:`FileFieldError`."""
        if not isinstance(value, bool):
            raise FileFieldError(field, f"{_show(value)}; expected {self.describe()}")
        return value


@dataclass(frozen=True)
class Choice:
    """One of ``values`` (strings or numbers)."""

    values: tuple[Any, ...]

    def describe(self) -> str:
        """The allowed values in words."""
        return "one of " + ", ".join(repr(v) for v in self.values)

    def check(self, field: str, value: Any) -> Any:
        """``value`` if allowed, or :class:`FileFieldError`."""
        if isinstance(value, bool) or not isinstance(value, str | int) or value not in self.values:
            raise FileFieldError(field, f"{_show(value)}; expected {self.describe()}")
        return value


@dataclass(frozen=True)
class Text:
    """A string of at most ``max_len`` characters (printed with control characters escaped)."""

    max_len: int = MAX_TEXT

    def describe(self) -> str:
        """The allowed values in words."""
        return f"a text of at most {self.max_len} characters"

    def check(self, field: str, value: Any) -> str:
        """``value`` if a short enough string, or :class:`FileFieldError`."""
        if not isinstance(value, str) or len(value) > self.max_len:
            raise FileFieldError(field, f"{_show(value)}; expected {self.describe()}")
        return value


Spec = Num | Ints | Flag | Choice | Text
"""What a field may hold."""


def _show(value: Any) -> str:
    """A short, escaped rendering of a bad value for a message."""
    if isinstance(value, str):
        text = repr(value if len(value) <= 40 else value[:40] + "...")
    elif isinstance(value, bool | int | float) or value is None:
        text = repr(value)
    elif isinstance(value, list | tuple):
        text = f"a list of {len(value):,} items"
    else:
        text = f"a {type(value).__name__}"
    return f"got {escape_control(text)}"


def section(data: Mapping[str, Any], key: str) -> dict[str, Any]:
    """``data[key]``, which must be a dict with string keys."""
    if key not in data:
        raise FileFieldError(key, "missing")
    value = data[key]
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise FileFieldError(key, f"{_show(value)}; expected a dict")
    return value


def check_fields(where: str, values: Mapping[str, Any], specs: Mapping[str, Spec], *,
                 required: Sequence[str] = (), ignore: Sequence[str] = ()) -> dict[str, Any]:
    """Check every field of ``values`` against ``specs`` (unknown fields are refused).

    Args:
        where: the section's name in messages, e.g. ``"config"``.
        values: the stored fields.
        specs: field -> what it may hold.
        required: fields that must be present (the others have defaults).
        ignore: fields left unchecked and dropped from the result.

    Returns:
        The checked fields (ints, floats, bools, strings, tuples of ints).
    """
    out: dict[str, Any] = {}
    for name in required:
        if name not in values:
            raise FileFieldError(f"{where}.{name}", "missing")
    for name, value in values.items():
        if name in ignore:
            continue
        if name not in specs:
            raise FileFieldError(f"{where}.{escape_control(str(name))[:60]}",
                                 f"unknown field; known: {', '.join(sorted(specs))}")
        out[name] = specs[name].check(f"{where}.{name}", value)
    return out


def meta_shapes(build: Callable[[], nn.Module]) -> tuple[dict[str, tuple[int, ...]], list[tuple[int, ...]]]:
    """The ``state_dict`` shapes and the parameter shapes of ``build()``, built on the meta device.

    Nothing is allocated; the caller has bounded the hyper-parameters, so this is quick.

    Returns:
        ``({name: shape} of the state dict, [shape of each parameter in order])``.

    Raises:
        FileFieldError: the network has more than :data:`MAX_PARAMS` parameters.
    """
    with torch.device("meta"):
        net = build()
    shapes = {k: tuple(v.shape) for k, v in net.state_dict().items()}
    params = [tuple(p.shape) for p in net.parameters()]
    n = sum(math.prod(s) for s in params)
    if n > MAX_PARAMS:
        raise FileFieldError("config", f"describes a network of {n:,} parameters; at most "
                             f"{MAX_PARAMS:,} are allowed")
    return shapes, params


def _check_tensor(field: str, t: Any, shape: tuple[int, ...] | None) -> None:
    if not isinstance(t, torch.Tensor) or t.layout != torch.strided:
        raise FileFieldError(field, f"{_show(t)}; expected a dense tensor")
    if shape is not None and tuple(t.shape) != shape:
        raise FileFieldError(field, f"shape {tuple(t.shape)}, but the stored hyper-parameters give "
                             f"{shape}")
    if t.numel() and t.untyped_storage().nbytes() < t.numel() * t.element_size():
        raise FileFieldError(field, f"shape {tuple(t.shape)} over a storage of "
                             f"{t.untyped_storage().nbytes()} bytes (a tensor must own its values)")
    if t.is_floating_point() and not bool(torch.isfinite(t).all()):
        raise FileFieldError(field, "holds nan or infinite values")
    if not (t.is_floating_point() or t.dtype in (torch.int64, torch.int32, torch.bool)):
        raise FileFieldError(field, f"dtype {t.dtype}, expected a float tensor")


def check_tensors(field: str, stored: Any, expected: Mapping[str, tuple[int, ...]]) -> None:
    """``stored`` must be a dict of dense, finite tensors with exactly ``expected``'s names and shapes."""
    if not isinstance(stored, dict):
        raise FileFieldError(field, f"{_show(stored)}; expected a dict of tensors")
    missing = [k for k in expected if k not in stored]
    extra = [str(k) for k in stored if k not in expected]
    if missing or extra:
        said = ([f"missing {', '.join(missing[:5])}"] if missing else []) + (
            [f"unexpected {escape_control(', '.join(extra[:5]))[:200]}"] if extra else [])
        raise FileFieldError(field, "tensors do not match the stored hyper-parameters: " + "; ".join(said))
    for k, shape in expected.items():
        _check_tensor(f"{field}[{k!r}]", stored[k], shape)


ADAM_GROUP: dict[str, Spec] = {
    "lr": Num(0.0, 10.0, lo_open=True),
    "eps": Num(0.0, 1.0, lo_open=True),
    "weight_decay": Num(0.0, 1e3),
}
"""Ranges of the numbers of an Adam parameter group (``betas`` are checked apart)."""


def check_adam(field: str, stored: Any, params: Sequence[tuple[int, ...]]) -> None:
    """An Adam ``state_dict`` for parameters of shapes ``params`` (in order).

    Checks the parameter groups (indices ``0 .. len(params) - 1`` each once, ``lr``, ``betas``,
    ``eps``, ``weight_decay`` in range) and every moment tensor's shape.
    """
    if not isinstance(stored, dict) or not isinstance(stored.get("state"), dict) \
            or not isinstance(stored.get("param_groups"), list):
        raise FileFieldError(field, f"{_show(stored)}; expected an optimiser state (state, param_groups)")
    seen: list[int] = []
    for i, g in enumerate(stored["param_groups"]):
        where = f"{field}.param_groups[{i}]"
        if not isinstance(g, dict) or not isinstance(g.get("params"), list):
            raise FileFieldError(where, "expected a dict with params")
        for k, spec in ADAM_GROUP.items():
            if k in g:
                spec.check(f"{where}.{k}", g[k])
        betas = g.get("betas", (0.9, 0.999))
        if not isinstance(betas, list | tuple) or len(betas) != 2:
            raise FileFieldError(f"{where}.betas", f"{_show(betas)}; expected two numbers in [0, 1)")
        for j, b in enumerate(betas):
            Num(0.0, 0.999999).check(f"{where}.betas[{j}]", b)
        for p in g["params"]:
            Num(0, len(params) - 1, integer=True).check(f"{where}.params", p)
            seen.append(int(p))
    if sorted(seen) != list(range(len(params))):
        raise FileFieldError(f"{field}.param_groups", f"name {len(seen)} parameters; the network has "
                             f"{len(params)}, each to be named once")
    for key, st in stored["state"].items():
        if isinstance(key, bool) or not isinstance(key, int) or not 0 <= key < len(params):
            raise FileFieldError(f"{field}.state", f"parameter {_show(key)}; expected 0..{len(params) - 1}")
        if not isinstance(st, dict):
            raise FileFieldError(f"{field}.state[{key}]", f"{_show(st)}; expected a dict")
        for name, t in st.items():
            shape = () if name == "step" else params[key]
            if name not in ("step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"):
                shown = escape_control(str(name))[:40]
                raise FileFieldError(f"{field}.state[{key}]", f"unknown entry {shown!r}")
            if name == "step" and not isinstance(t, torch.Tensor):
                Num(0, 1e15).check(f"{field}.state[{key}].step", t)
                continue
            _check_tensor(f"{field}.state[{key}].{name}", t, shape)


def check_numbers(field: str, value: Any, spec: Num, max_len: int = MAX_LIST) -> list[float]:
    """A list of numbers (a training curve), each in ``spec``'s range."""
    if not isinstance(value, list | tuple) or len(value) > max_len:
        raise FileFieldError(field, f"{_show(value)}; expected a list of at most {max_len:,} numbers")
    return [spec.check(f"{field}[{i}]", v) for i, v in enumerate(value)]


def parse_setting(name: str, text: str, spec: Spec) -> Any:
    """A ``NAME=VALUE`` setting's text as the value ``spec`` allows (``--set`` of ``vbp train rl``).

    Integers and numbers are parsed as such (``nan``, ``inf`` refused), flags from ``true``/``false``
    (``1``/``0``), integer lists from ``8,4``.

    Raises:
        FileFieldError: named by ``name``, with the allowed range.
    """
    t = text.strip()
    try:
        value: Any
        if isinstance(spec, Flag):
            if t.lower() not in ("true", "false", "1", "0"):
                raise ValueError
            value = t.lower() in ("true", "1")
        elif isinstance(spec, Num):
            value = int(t) if spec.integer else float(t)
        elif isinstance(spec, Ints):
            value = [int(x) for x in t.split(",")] if t else []
        elif isinstance(spec, Choice):
            value = next((v for v in spec.values if str(v) == t), t)
        else:
            value = t
    except ValueError:
        raise FileFieldError(name, f"got {escape_control(repr(t))[:60]}; expected {spec.describe()}"
                             ) from None
    return spec.check(name, value)


def check_name(data: Mapping[str, Any], key: str = "name") -> None:
    """``data[key]``, when present, is a short text."""
    if key in data:
        Text().check(key, data[key])


def printable(name: str) -> str:
    r"""A stored name as it may be printed: control characters escaped (``\n``, ``\x1b``)."""
    return escape_control(name)


__all__ = ["MAX_LIST", "MAX_PARAMS", "MAX_TEXT", "Choice", "FileFieldError", "Flag", "Ints", "Num",
           "Spec", "Text", "check_adam", "check_fields", "check_name", "check_numbers", "check_tensors",
           "meta_shapes", "parse_setting", "printable", "section"]
