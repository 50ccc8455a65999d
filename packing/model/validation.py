"""One set of rules for every instance: files, data-set loaders and objects built in Python.

Every :class:`packing.model.instance.Instance` is checked when it is built (``Instance.__post_init__``
calls :func:`validate`), so no solver, simulator or study ever receives an invalid one. A problem
is a :class:`packing.errors.Problem` whose field is named as in an instance file
(``apps[3] (web).demand[1]``, ``exclusions[0][1]``, ``requests[2].time``); all problems are
collected and raised together as one :class:`packing.errors.InputError`. The source is the
instance's name (``"<instance>"`` when the name itself is bad); file and data-set readers build
under :func:`reported_as` so that the problems name the file instead.

Before checking, :func:`validate` brings Python input to the canonical form:

* lists become tuples (``resources``, ``apps``, vectors, exclusion pairs, ``host_names``...);
* a demand or capacity given as a mapping by resource name (``{"cpu": 4, "mem": 8}``) becomes
  the vector in ``Instance.resources`` order, missing names 0, unknown names a problem (as in
  files); the same for ``gpu_per_card`` and ``gpu_capacity`` over ``Instance.gpu_resources``;
* NumPy integers and floats become ``int`` and ``float``;
* host labels and node selectors given as mappings become sorted ``(key, value)`` pairs.

Checked (the limits first: nothing per host or per container is computed beyond them): types
(whole numbers are ``int``, not ``float`` or ``None``), names (non-empty strings without control
characters, unique; host names unique after expansion), numbers (finite, not negative, at most
:data:`MAX_NUMBER`), vector lengths, GPU fields that a file could not hold, rules and exclusions
(known apps, no self-exclusion), node selection (labels and node selectors map strings to
strings; taints, tolerations and node affinity requirements as :mod:`packing.model.selection` allows
them), the request stream (known apps, times not negative,
``end >= time``, never more containers of an app alive at once than its count, counting the
snapshot) and the initial placement's structure (host indices in range, card lists of known
apps, card indices the host has). Whether the snapshot breaks a constraint is the checker's job.

Cost. The numeric checks run on NumPy arrays (the demand array is kept as ``Instance.demand``),
and :meth:`packing.model.instance.Instance.replace` re-runs only the checks that depend on the fields it
changes (the rest passed when the original was built): that is the one internal fast path, and
it is as strict as a full check. ``dataclasses.replace`` and the constructor run every check.
"""

from __future__ import annotations

import dataclasses
import heapq
import math
import numbers
import re
import unicodedata
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from itertools import chain
from typing import Any

import numpy as np

from packing.errors import InputError, Problem
from packing.model.selection import (
    Requirement,
    Taint,
    Toleration,
    requirement_problem,
    taint_problem,
    toleration_problem,
)

MAX_NUMBER = 2**53
"""Largest magnitude of any number in an instance (beyond it floats lose whole numbers)."""
MAX_CONTAINERS = 10_000_000
"""Most containers an instance may have (all apps together)."""
MAX_HOSTS = 10_000_000
"""Most hosts an instance may have (all host types together)."""
MAX_RESOURCES = 10_000
"""Most resources (and GPU resources) an instance may name."""
MAX_CELLS = 10_000_000
"""Most entries of the ``hosts x resources`` and ``apps x resources`` arrays."""
MAX_GPUS = 64
"""Most GPU cards on one host."""

Instance = Any
"""A :class:`packing.model.instance.Instance` (this module does not import the model, which builds on it)."""


@dataclasses.dataclass(frozen=True)
class ModelTypes:
    """The classes of :mod:`packing.model.instance`, which registers them here when it is imported.

    The model calls :func:`validate` whenever an instance is built, so this module cannot import
    the model (that would be an import cycle); it receives the classes instead.
    """

    app: Any
    host_type: Any
    rule: Any
    request: Any
    placement: Any
    unplaced: int


_MODEL: ModelTypes | None = None


def register_model(types: ModelTypes) -> None:
    """Called once by :mod:`packing.model.instance` with its classes."""
    global _MODEL
    _MODEL = types


def _types() -> ModelTypes:
    if _MODEL is None:  # pragma: no cover - packing.model.instance registers itself on import
        raise RuntimeError("packing.model.instance is not imported")
    return _MODEL


CONTROL_CATEGORIES = ("Cc", "Zl", "Zp")
"""Unicode categories of characters that names may not contain (newlines, escapes, ...)."""


_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
"""Exactly the characters of :data:`CONTROL_CATEGORIES` (``Cc`` is U+0000-001F and U+007F-009F,
``Zl`` and ``Zp`` one character each); a test compares it with :mod:`unicodedata`."""


def has_control(s: str) -> bool:
    """Whether ``s`` holds a control character (newline, tab, escape, line separator, ...)."""
    return _CONTROL.search(s) is not None


def escape_control(s: str) -> str:
    r"""``s`` with every control character written as an escape (``\n``, ``\x1b``, ...).

    Used for messages, so a name holding a newline cannot split one error into two lines.
    """
    if not has_control(s):
        return s
    return "".join(repr(c)[1:-1] if unicodedata.category(c) in CONTROL_CATEGORIES else c
                   for c in s)


def name_list(names: Sequence[str], shown: int = 8) -> str:
    """``names`` for a message: all of them, or the first ``shown`` and how many more."""
    if len(names) <= shown:
        return str(list(names))
    return "[" + ", ".join(repr(n) for n in names[:shown]) + f", ... ({len(names):,} in all)]"


def short(v: float) -> str:
    """A number for a message, short even when it has thousands of digits."""
    if isinstance(v, int) and abs(v) >= 10**16:
        return f"an integer of {len(str(abs(v)))} digits"
    return f"{v:g}"


def describe(v: Any) -> str:
    """What a value from a file is, for a message (``"a string ('x')"``, ``"nothing (null)"``)."""
    if v is None:
        return "nothing (null)"
    if isinstance(v, bool):
        return f"a boolean ({v})"
    if isinstance(v, int | float):
        return f"a number ({short(v)})"
    if isinstance(v, str):
        return f"a string ({v!r})" if len(v) < 40 else "a string"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, Mapping):
        return "an object"
    return type(v).__name__


def _pykind(v: Any) -> str:
    """What a Python value is, for a message (``"None"``, ``"a float (2.5)"``, ``"a dict"``)."""
    if v is None:
        return "None"
    if isinstance(v, bool):
        return f"a boolean ({v})"
    if isinstance(v, int):
        return f"an int ({short(v)})"
    if isinstance(v, float):
        return f"a float ({v!r})"
    if isinstance(v, str):
        return f"a string ({v!r})" if len(v) < 40 else "a string"
    name = type(v).__name__
    return f"an {name}" if name[:1].lower() in "aeiou" else f"a {name}"


def _source(inst: Instance) -> str:
    name = inst.name
    if isinstance(name, str) and name and not has_control(name):
        return name
    return "<instance>"


@contextmanager
def reported_as(source: str) -> Iterator[None]:
    """Report the problems of instances built in this block as coming from ``source``.

    File and data-set readers build their :class:`~packing.model.instance.Instance` in this block so that
    every problem names the file or folder (instead of the instance's name).

    Raises:
        InputError: the problems raised in the block, with ``source`` as their source.
    """
    try:
        yield
    except InputError as e:
        raise InputError([Problem(source, p.field, p.reason) for p in e.problems]) from None


# ------------------------------------------------------------------------------------------------
# which checks depend on which fields (for Instance.replace)
_DEPENDS: dict[str, frozenset[str]] = {
    "limits": frozenset({"resources", "gpu_resources", "host_types", "apps"}),
    "name": frozenset({"name"}),
    "resources": frozenset({"resources", "gpu_resources"}),
    "host_types": frozenset({"host_types", "resources", "gpu_resources"}),
    "apps": frozenset({"apps", "resources", "gpu_resources"}),
    "rules": frozenset({"rules", "apps"}),
    "exclusions": frozenset({"exclusions", "apps"}),
    "initial": frozenset({"initial", "host_types"}),
    "requests": frozenset({"requests", "apps", "initial"}),
    "meta": frozenset({"meta"}),
}
_SEQUENCES = ("resources", "gpu_resources", "host_types", "apps", "rules", "exclusions",
              "requests")


def _groups(changed: Collection[str] | None) -> frozenset[str]:
    if changed is None:
        return frozenset(_DEPENDS)
    ch = set(changed)
    return frozenset(g for g, deps in _DEPENDS.items() if deps & ch)


def validate(inst: Instance, changed: Collection[str] | None = None,
             base: Instance | None = None) -> None:
    """Bring ``inst`` to canonical form and check it (called by ``Instance`` when built).

    Args:
        inst: the new instance; its fields may be rewritten (``object.__setattr__``) to the
            canonical form (see the module docstring).
        changed: the fields that differ from ``base``, an instance that passed every check
            (:meth:`~packing.model.instance.Instance.replace`): only the checks that depend on them run.
            ``None``: every check.
        base: that instance. An app of ``inst`` that is an app of ``base`` with only another
            count (every other field the same object, as solvers derive sub-instances) gets
            only its name and count checked.

    Raises:
        InputError: listing every problem, the instance's name as source.
    """
    groups = _groups(changed)
    source = _source(inst)
    derived = None
    if (base is not None and changed is not None and "apps" in changed
            and not {"resources", "gpu_resources"} & set(changed)):
        derived = _derived_apps(inst, base)
        if (derived is not None and all(derived) and len(derived) == len(base.apps)
                and len({a.name for a in inst.apps}) == len(derived)):
            # the same app names as base: the rules and exclusions that passed for base pass
            # unless they changed too
            groups -= {g for g in ("rules", "exclusions") if g not in changed}
    problems, fatal = _normalize(inst, source, groups, derived)
    if not fatal:
        problems += _problems(inst, source, groups, derived)
    if problems:
        raise InputError(problems)


def _derived_apps(inst: Instance, base: Instance) -> list[bool] | None:
    """Per app of ``inst``: whether it is an app of ``base`` up to its count (see :func:`validate`)."""
    App = _types().app
    if type(inst.apps) is not tuple:
        return None
    index, olds = base.app_index, base.apps
    same_order = len(olds) == len(inst.apps)
    out = []
    for i, a in enumerate(inst.apps):
        if type(a) is not App or type(a.name) is not str:
            out.append(False)
            continue
        if same_order and olds[i].name == a.name:
            o = olds[i]
        else:
            j = index.get(a.name)
            o = olds[j] if j is not None else None
        out.append(o is not None and (a is o or (
            a.demand is o.demand and a.max_per_host is o.max_per_host
            and a.gpu_cards is o.gpu_cards and a.gpu_per_card is o.gpu_per_card
            and a.gpu_whole is o.gpu_whole and a.gpu_models is o.gpu_models
            and a.node_selector is o.node_selector and a.node_affinity is o.node_affinity
            and a.tolerations is o.tolerations)))
    return out


def _as_tuple(v: Any) -> tuple[Any, ...] | None:
    """``v`` as a tuple if it is a list, a tuple or another non-string sequence, else ``None``."""
    if type(v) is tuple:
        return v
    if isinstance(v, list | tuple) or (isinstance(v, Sequence) and not isinstance(v, str | bytes)):
        return tuple(v)
    return None


def _plain_int(v: Any) -> Any:
    """NumPy and other integers as ``int`` (booleans and everything else unchanged)."""
    if type(v) is not int and isinstance(v, numbers.Integral) and not isinstance(v, bool):
        return int(v)
    return v


def _plain_number(v: Any) -> Any:
    if type(v) is float or type(v) is int:
        return v
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        return v
    return int(v) if isinstance(v, numbers.Integral) else float(v)


def _vector(v: Any, names: Sequence[str], field: str, source: str, out: list[Problem]) -> Any:
    """A vector given as a sequence or as a mapping by name, as a tuple (else ``v`` unchanged)."""
    if isinstance(v, Mapping):
        unknown = [k for k in v if k not in names]
        for k in unknown:
            out.append(Problem(source, f"{field}.{k}",
                               f"unknown resource {k!r}; resources are {list(names)}"))
        return tuple(_plain_number(v.get(n, 0.0)) for n in names)
    t = _as_tuple(v)
    if t is None:
        return v
    if all(type(x) is float or type(x) is int for x in t):
        return t
    return tuple(_plain_number(x) for x in t)


def _normalize(inst: Instance, source: str, groups: frozenset[str],
               derived: list[bool] | None = None) -> tuple[list[Problem], bool]:
    """Rewrite ``inst`` into canonical form (module docstring).

    Returns:
        ``(problems, fatal)``: what cannot be resolved (unknown resource names are dropped after
        being reported, so the other checks can still run), and whether a top-level field is
        not even a sequence (then no other check runs).
    """
    m = _types()
    App, HostType, Request, Rule = m.app, m.host_type, m.request, m.rule

    out: list[Problem] = []
    for f in _SEQUENCES:
        v = getattr(inst, f)
        if type(v) is tuple:
            continue
        t = _as_tuple(v)
        if t is None:
            out.append(Problem(source, f, f"expected a tuple or a list, got {_pykind(v)}"))
        else:
            object.__setattr__(inst, f, t)
    if out:
        return out, True
    if "exclusions" in groups and any(type(p) is not tuple for p in inst.exclusions):
        object.__setattr__(inst, "exclusions", tuple(
            _as_tuple(p) if _as_tuple(p) is not None else p for p in inst.exclusions))
    resources = inst.resources
    gpu_res = inst.gpu_resources
    if "host_types" in groups:
        types = list(inst.host_types)
        changed = False
        for i, t in enumerate(types):
            if not isinstance(t, HostType):
                continue
            f = f"host_types[{i}] ({t.name})" if isinstance(t.name, str) else f"host_types[{i}]"
            ch: dict[str, Any] = {}
            for k, names in (("capacity", resources), ("gpu_capacity", gpu_res)):
                v = getattr(t, k)
                if type(v) is not tuple or any(type(x) is not float and type(x) is not int
                                               for x in v):
                    ch[k] = _vector(v, names, f"{f}.{k}", source, out)
            if t.host_names is not None and type(t.host_names) is not tuple:
                hn = _as_tuple(t.host_names)
                if hn is not None:
                    ch["host_names"] = hn
            for k in ("count", "gpus"):
                v = getattr(t, k)
                if type(v) is not int and _plain_int(v) is not v:
                    ch[k] = _plain_int(v)
            if type(t.cost) is not float and type(t.cost) is not int:
                ch["cost"] = _plain_number(t.cost)
            ch = {k: v for k, v in ch.items() if v is not getattr(t, k)}
            if ch:
                types[i] = dataclasses.replace(t, **ch)
                changed = True
        if changed:
            object.__setattr__(inst, "host_types", tuple(types))
    if "apps" in groups:
        apps = list(inst.apps)
        changed = False
        for i, a in enumerate(apps):
            if not isinstance(a, App) or (derived is not None and derived[i]
                                          and type(a.count) is int):
                continue
            if (type(a.demand) is tuple and type(a.count) is int and type(a.gpu_per_card) is tuple
                    and type(a.gpu_models) is tuple and type(a.gpu_cards) is int
                    and (a.max_per_host is None or type(a.max_per_host) is int)):
                continue  # elements are checked (and converted if needed) below, in bulk
            f = f"apps[{i}] ({a.name})" if isinstance(a.name, str) else f"apps[{i}]"
            ch = {}
            if type(a.demand) is not tuple:
                ch["demand"] = _vector(a.demand, resources, f"{f}.demand", source, out)
            if type(a.gpu_per_card) is not tuple:
                ch["gpu_per_card"] = _vector(a.gpu_per_card, gpu_res, f"{f}.gpu.per_card",
                                             source, out)
            if type(a.gpu_models) is not tuple and not isinstance(a.gpu_models, str):
                gm = _as_tuple(a.gpu_models)
                if gm is not None:
                    ch["gpu_models"] = gm
            for k in ("count", "gpu_cards", "max_per_host"):
                v = getattr(a, k)
                if _plain_int(v) is not v:
                    ch[k] = _plain_int(v)
            ch = {k: v for k, v in ch.items() if v is not getattr(a, k)}
            if ch:
                apps[i] = dataclasses.replace(a, **ch)
                changed = True
        fresh = [a for i, a in enumerate(apps) if isinstance(a, App)
                 and not (derived is not None and derived[i])]
        vectors = [v for a in fresh for v in (a.demand, a.gpu_per_card) if type(v) is tuple]
        if not set(map(type, chain.from_iterable(vectors))) <= {float, int}:
            for i, a in enumerate(apps):  # NumPy (or other) numbers: as int and float
                if not isinstance(a, App):
                    continue
                ch = {k: tuple(_plain_number(x) for x in v) for k in ("demand", "gpu_per_card")
                      if type(v := getattr(a, k)) is tuple
                      and any(type(x) is not float and type(x) is not int for x in v)}
                if ch:
                    apps[i] = dataclasses.replace(a, **ch)
                    changed = True
        if changed:
            object.__setattr__(inst, "apps", tuple(apps))
    if "rules" in groups and any(isinstance(r, Rule) and type(r.k) is not int
                                 and _plain_int(r.k) is not r.k for r in inst.rules):
        object.__setattr__(inst, "rules", tuple(
            dataclasses.replace(r, k=_plain_int(r.k)) if isinstance(r, Rule) else r
            for r in inst.rules))
    if "requests" in groups and any(
            isinstance(q, Request) and (type(q.count) is not int or type(q.time) is not float
                                        and type(q.time) is not int)
            for q in inst.requests):
        object.__setattr__(inst, "requests", tuple(
            dataclasses.replace(q, count=_plain_int(q.count), time=_plain_number(q.time),
                                end=_plain_number(q.end) if q.end is not None else None)
            if isinstance(q, Request) else q for q in inst.requests))
    return out, False


# ------------------------------------------------------------------------------------------------
# the checks
def _is_int(v: Any) -> bool:
    return type(v) is int or (isinstance(v, int) and not isinstance(v, bool))


def _limit_problems(inst: Instance, source: str) -> list[Problem]:
    """Sizes beyond the documented limits (checked before any per-host or per-container work)."""
    m = _types()
    App, HostType = m.app, m.host_type

    out: list[Problem] = []
    try:  # the common case: every count is an int (others are reported by the checks below)
        n_containers = sum([a.count for a in inst.apps])
    except (AttributeError, TypeError):
        n_containers = None
    if type(n_containers) is not int:
        n_containers = sum(a.count for a in inst.apps if isinstance(a, App) and _is_int(a.count))
    n_hosts = sum(t.count for t in inst.host_types
                  if isinstance(t, HostType) and _is_int(t.count))
    if n_containers > MAX_CONTAINERS:
        out.append(Problem(source, "apps", f"{n_containers:,} containers in all; at most "
                           f"{MAX_CONTAINERS:,} are supported"))
    if n_hosts > MAX_HOSTS:
        out.append(Problem(source, "host_types", f"{n_hosts:,} hosts in all; at most "
                           f"{MAX_HOSTS:,} are supported"))
    for what, names in (("resources", inst.resources), ("gpu_resources", inst.gpu_resources)):
        if len(names) > MAX_RESOURCES:
            out.append(Problem(source, what, f"{len(names):,} names; at most {MAX_RESOURCES:,} "
                               "are supported"))
    for what, n in (("hosts", n_hosts), ("apps", len(inst.apps))):
        if n * len(inst.resources) > MAX_CELLS:
            out.append(Problem(source, "resources", f"{n:,} {what} x {len(inst.resources):,} "
                               f"resources is more than {MAX_CELLS:,} values"))
    for i, t in enumerate(inst.host_types):
        if isinstance(t, HostType) and _is_int(t.gpus) and t.gpus > MAX_GPUS:
            out.append(Problem(source, f"host_types[{i}] ({t.name}).gpus",
                               f"at most {MAX_GPUS} GPU cards per host are supported, got {t.gpus}"))
    return out


class _Checker:
    """Collects the problems of one instance (the pieces of :func:`instance_problems`)."""

    def __init__(self, inst: Instance, source: str) -> None:
        self.inst = inst
        self.source = source
        self.out: list[Problem] = []

    def bad(self, field: str, reason: str) -> None:
        self.out.append(Problem(self.source, field, reason))

    def name_ok(self, v: Any, field: str) -> bool:
        if not isinstance(v, str) or not v:
            self.bad(field, f"expected a non-empty string, got {_pykind(v)}")
            return False
        if has_control(v):
            self.bad(field, f"must not contain control characters (newline, tab, ...), got {v!r}")
            return False
        return True

    def number_ok(self, x: Any, field: str) -> bool:
        if isinstance(x, bool) or not isinstance(x, int | float):
            self.bad(field, f"expected a finite number, got {_pykind(x)}")
        elif not math.isfinite(x):
            self.bad(field, f"expected a finite number, got {x}")
        elif x < 0:
            self.bad(field, f"must not be negative, got {x:g}")
        elif x > MAX_NUMBER:
            self.bad(field, f"is beyond the supported range (at most 2^53 = {MAX_NUMBER}), got "
                     f"{short(x)}")
        else:
            return True
        return False

    def int_ok(self, v: Any, field: str, minimum: int = 0, maximum: int | None = None,
               what: str = "") -> bool:
        if not _is_int(v):
            if isinstance(v, float):
                self.bad(field, f"expected a whole number (an int), got {_pykind(v)}")
            else:
                self.bad(field, f"expected a whole number, got {_pykind(v)}")
            return False
        if v < minimum:
            self.bad(field, f"must not be negative, got {v}" if minimum == 0 else
                     f"must be at least {minimum}, got {v}")
            return False
        if maximum is not None and v > maximum:
            self.bad(field, f"at most {maximum:,} {what} are supported, got {v:,}")
            return False
        return True

    def vector_ok(self, v: Any, n: int, field: str, names: str) -> bool:
        """A tuple of ``n`` numbers (``names``: what the values are for, in messages)."""
        if type(v) is not tuple:
            self.bad(field, f"expected a tuple of numbers (one per {names}) or a mapping by "
                     f"name, got {_pykind(v)}")
            return False
        ok = True
        if len(v) != n:
            self.bad(field, f"has {len(v)} values, expected {n}")
            ok = False
        for j, x in enumerate(v):
            ok = self.number_ok(x, f"{field}[{j}]") and ok
        return ok

    # --------------------------------------------------------------------------------------------
    def resources(self) -> None:
        for what, names in (("resources", self.inst.resources),
                            ("gpu_resources", self.inst.gpu_resources)):
            seen: set[str] = set()
            for i, n in enumerate(names):
                if self.name_ok(n, f"{what}[{i}]") and n in seen:
                    self.bad(f"{what}[{i}]", f"duplicate name {n!r}")
                seen.add(n)
        if not self.inst.resources:
            self.bad("resources", "must name at least one resource")

    def host_types(self) -> bool:
        """Check the host types; whether the host counts (and GPUs) are usable."""
        HostType = _types().host_type

        inst = self.inst
        n_r, n_g = len(inst.resources), len(inst.gpu_resources)
        hosts_ok = True
        types: set[str] = set()
        where: dict[str, str] = {}
        explicit = any(isinstance(t, HostType) and t.host_names is not None
                       for t in inst.host_types)
        for i, t in enumerate(inst.host_types):
            f = f"host_types[{i}]"
            if not isinstance(t, HostType):
                self.bad(f, f"expected a HostType, got {_pykind(t)}")
                hosts_ok = False
                continue
            if self.name_ok(t.name, f"{f}.name"):
                if t.name in types:
                    self.bad(f"{f}.name", f"duplicate host type {t.name!r}")
                types.add(t.name)
                f = f"{f} ({t.name})"
            self.vector_ok(t.capacity, n_r, f"{f}.capacity", "resource")
            self.number_ok(t.cost, f"{f}.cost")
            count_ok = self.int_ok(t.count, f"{f}.count", maximum=MAX_HOSTS, what="hosts")
            gpus_ok = self.int_ok(t.gpus, f"{f}.gpus", maximum=MAX_GPUS,
                                  what="GPU cards per host")
            hosts_ok = hosts_ok and count_ok and gpus_ok
            if gpus_ok and t.gpus:
                if not n_g:
                    self.bad(f"{f}.gpus",
                             "host type has GPU cards but the instance names no gpu_resources")
                else:
                    self.vector_ok(t.gpu_capacity, n_g, f"{f}.gpu_capacity", "GPU resource")
            elif gpus_ok and t.gpu_capacity != ():
                self.bad(f"{f}.gpu_capacity",
                         "is given but the host type has no GPU cards (gpus is 0)")
            for what, v in (("cluster", t.cluster), ("gpu_model", t.gpu_model)):
                if v is not None:
                    self.name_ok(v, f"{f}.{what}")
            if not count_ok:
                continue
            if t.host_names is not None:
                if type(t.host_names) is not tuple:
                    self.bad(f"{f}.host_names",
                             f"expected a tuple of names, got {_pykind(t.host_names)}")
                    continue
                if len(t.host_names) != t.count:
                    self.bad(f"{f}.host_names", f"has {len(t.host_names)} names for {t.count} hosts")
                    continue
                names_t: Sequence[str] = t.host_names
            elif not explicit:
                continue  # '<type>#<i>' names are unique when the type names are
            else:
                names_t = [f"{t.name}#{k}" for k in range(t.count)]
            for k, n in enumerate(names_t):
                hf = f"{f}.host_names[{k}]" if t.host_names is not None else f"{f} host {n!r}"
                if not self.name_ok(n, hf):
                    continue
                if n in where:
                    self.bad(hf, f"host name {n!r} is also the name of a host of {where[n]}; "
                             "host names must be unique (the default names are '<type>#<i>')")
                else:
                    where[n] = f"host_types[{i}]"
        return hosts_ok

    def apps(self, derived: list[bool] | None = None) -> tuple[set[str], bool]:
        """Check the apps; their names, and whether every count is usable.

        Args:
            derived: per app, whether only its name and count need checking (:func:`validate`).
        """
        App = _types().app

        inst = self.inst
        n_r, n_g = len(inst.resources), len(inst.gpu_resources)
        names: set[str] = set()
        counts_ok = True
        good = [isinstance(a, App) for a in inst.apps]
        if derived is None:
            d = _numbers([a.demand for a in inst.apps], n_r) if all(good) else None
            if d is not None and "demand" not in inst.__dict__:
                d.setflags(write=False)
                inst.__dict__["demand"] = d  # the cached Instance.demand, computed once here
        else:
            fresh = [a.demand for a, old in zip(inst.apps, derived, strict=True) if not old]
            d = _numbers(fresh, n_r) if all(good) else None
        numbers_ok = d is not None
        for i, a in enumerate(inst.apps):
            if derived is not None and derived[i]:
                if a.name in names:
                    self.bad(f"apps[{i}].name", f"duplicate app {a.name!r}")
                names.add(a.name)
                if not (type(a.count) is int and 0 <= a.count <= MAX_CONTAINERS):
                    counts_ok = self.int_ok(a.count, f"apps[{i}] ({a.name}).count",
                                            maximum=MAX_CONTAINERS, what="containers") and counts_ok
                continue
            if (numbers_ok and type(a) is App and type(a.name) is str and a.name
                    and a.name not in names and type(a.count) is int
                    and 0 <= a.count <= MAX_CONTAINERS
                    and (a.max_per_host is None
                         or (type(a.max_per_host) is int and a.max_per_host >= 0))
                    and type(a.gpu_cards) is int and a.gpu_cards == 0 and a.gpu_per_card == ()
                    and a.gpu_whole is False and a.gpu_models == () and not has_control(a.name)):
                names.add(a.name)
                continue  # the common case (no GPU), without building field names
            f = f"apps[{i}]"
            if not good[i]:
                self.bad(f, f"expected an App, got {_pykind(a)}")
                counts_ok = False
                continue
            if self.name_ok(a.name, f"{f}.name"):
                if a.name in names:
                    self.bad(f"{f}.name", f"duplicate app {a.name!r}")
                names.add(a.name)
                f = f"{f} ({a.name})"
            if not numbers_ok:
                self.vector_ok(a.demand, n_r, f"{f}.demand", "resource")
            if not self.int_ok(a.count, f"{f}.count", maximum=MAX_CONTAINERS, what="containers"):
                counts_ok = False
            if a.max_per_host is not None:
                self.int_ok(a.max_per_host, f"{f}.max_per_host")
            if not isinstance(a.gpu_whole, bool):
                self.bad(f"{f}.gpu.whole", f"expected True or False, got {_pykind(a.gpu_whole)}")
            if not self.int_ok(a.gpu_cards, f"{f}.gpu.cards", maximum=MAX_GPUS,
                               what="GPU cards"):
                continue
            if isinstance(a.gpu_models, str) or type(a.gpu_models) is not tuple:
                self.bad(f"{f}.gpu.models",
                         f"expected a tuple of model names, got {_pykind(a.gpu_models)}")
                models: tuple[Any, ...] = ()
            else:
                models = a.gpu_models
            if a.gpu_cards:
                if not n_g:
                    self.bad(f"{f}.gpu",
                             "app asks for GPU cards but the instance names no gpu_resources")
                elif a.gpu_whole is True:
                    if a.gpu_per_card != ():
                        self.bad(f"{f}.gpu.per_card", "is given but the app takes whole cards "
                                 "(gpu_whole is True)")
                else:
                    self.vector_ok(a.gpu_per_card, n_g, f"{f}.gpu.per_card", "GPU resource")
            for j, m in enumerate(models):
                self.name_ok(m, f"{f}.gpu.models[{j}]")
            if not a.gpu_cards:
                for what, v, empty in (("per_card", a.gpu_per_card, ()), ("whole", a.gpu_whole, False)):
                    if v != empty:
                        self.bad(f"{f}.gpu.{what}",
                                 "is given but the app asks for no GPU cards (gpu_cards is 0)")
        return names, counts_ok

    def rules(self, apps: set[str]) -> None:
        Rule = _types().rule

        for i, rule in enumerate(self.inst.rules):
            if (type(rule) is Rule and rule.a in apps and rule.b in apps and type(rule.k) is int
                    and rule.k >= 0):
                continue  # the common case, without building field names
            f = f"rules[{i}]"
            if not isinstance(rule, Rule):
                self.bad(f, f"expected a Rule, got {_pykind(rule)}")
                continue
            for what, v in (("a", rule.a), ("b", rule.b)):
                if v not in apps and self.name_ok(v, f"{f}.{what}"):
                    self.bad(f"{f}.{what}", f"unknown app {v!r}")
            self.int_ok(rule.k, f"{f}.k")

    def exclusions(self, apps: set[str]) -> None:
        for i, pair in enumerate(self.inst.exclusions):
            f = f"exclusions[{i}]"
            if type(pair) is not tuple or len(pair) != 2:
                self.bad(f, f"expected a pair of app names, got {_pykind(pair)}")
                continue
            for j, v in enumerate(pair):
                if v not in apps and self.name_ok(v, f"{f}[{j}]"):
                    self.bad(f"{f}[{j}]", f"unknown app {v!r}")
            if pair[0] == pair[1] and isinstance(pair[0], str):
                self.bad(f, f"an app cannot exclude itself ({pair[0]!r}); use max_per_host")

    def initial(self) -> None:
        m = _types()
        UNPLACED, Placement = m.unplaced, m.placement

        inst, p = self.inst, self.inst.initial
        if p is None:
            return
        if not isinstance(p, Placement):
            self.bad("initial", f"expected a Placement or None, got {_pykind(p)}")
            return
        if not isinstance(p.hosts, Mapping) or not isinstance(p.gpus, Mapping):
            what = "hosts" if not isinstance(p.hosts, Mapping) else "gpus"
            self.bad(f"initial.{what}",
                     f"expected a mapping by app name, got {_pykind(getattr(p, what))}")
            return
        n_hosts = inst.n_hosts
        ok_hosts: dict[str, Sequence[int]] = {}
        for app, hs in p.hosts.items():
            if not isinstance(app, str) or has_control(app):
                self.bad("initial.hosts", f"bad app name {app!r}")
                continue
            f = f"initial.hosts.{app}"
            if app not in inst.app_index:
                self.bad(f, f"unknown app {app!r}; the instance's apps are "
                         + name_list([a.name for a in inst.apps]))
                continue
            if not isinstance(hs, tuple | list):
                self.bad(f, f"expected a tuple of host indices, got {_pykind(hs)}")
                continue
            if not set(map(type, hs)) <= {int}:
                wrong = next(j for j, h in enumerate(hs) if type(h) is not int)
                self.bad(f"{f}[{wrong}]",
                         f"expected a host index (an int), got {_pykind(hs[wrong])}")
                continue
            if hs and (min(hs) < UNPLACED or max(hs) >= n_hosts):
                for j, h in enumerate(hs):
                    if h != UNPLACED and not 0 <= h < n_hosts:
                        self.bad(f"{f}[{j}]",
                                 f"host index {h} is out of range (0..{n_hosts - 1})")
                        break
                continue
            ok_hosts[app] = hs
        for app, cs in p.gpus.items():
            f = f"initial.gpus.{app}"
            listed = p.hosts.get(app)
            if listed is None:
                self.bad(f, f"GPU cards for app {app!r}, which the snapshot does not list")
                continue
            if app not in ok_hosts:
                continue
            hs = ok_hosts[app]
            if not isinstance(cs, tuple | list):
                self.bad(f, f"expected a tuple of card tuples, got {_pykind(cs)}")
                continue
            if len(cs) > len(hs):
                self.bad(f, f"has {len(cs)} card lists for the {len(hs)} containers of app {app!r}")
                continue
            for j, c in enumerate(cs):
                if not isinstance(c, tuple | list) or not all(_is_int(x) for x in c):
                    self.bad(f"{f}[{j}]", f"expected a tuple of card indices, got {_pykind(c)}")
                    break
                h = hs[j]
                if not c:
                    continue
                if h == UNPLACED:
                    self.bad(f"{f}[{j}]", f"cards {list(c)} for a container that is not on a host")
                    break
                n_cards = int(inst.host_gpus[h])
                if any(not 0 <= x < n_cards for x in c):
                    self.bad(f"{f}[{j}]", f"cards {list(c)} on host {inst.host_names[h]!r}, "
                             f"which has {n_cards} cards")
                    break

    def requests(self, apps: set[str], alive_check: bool) -> None:
        """Requests: known apps, times, and never more containers alive at once than the count.

        Containers alive at once are counted in the stream's own order as the engine replays it:
        requests sorted by time (ties in stream order), departures at a time ``<=`` an
        arrival's time first, snapshot containers alive from the start.
        """
        m = _types()
        UNPLACED, Placement, Request = m.unplaced, m.placement, m.request

        inst = self.inst
        events: dict[str, list[tuple[float, int, int, int]]] = {}
        for i, q in enumerate(inst.requests):
            f = f"requests[{i}]"
            if not isinstance(q, Request):
                self.bad(f, f"expected a Request, got {_pykind(q)}")
                continue
            ok = True
            if not isinstance(q.app, str) or q.app not in apps:
                if self.name_ok(q.app, f"{f}.app"):
                    self.bad(f"{f}.app", f"unknown app {q.app!r}")
                ok = False
            time_ok = (isinstance(q.time, int | float) and not isinstance(q.time, bool)
                       and math.isfinite(q.time) and q.time >= 0)
            if not time_ok:
                self.bad(f"{f}.time", f"must be a finite number, not negative, got {q.time!r}")
                ok = False
            if q.end is not None:
                if (isinstance(q.end, bool) or not isinstance(q.end, int | float)
                        or not math.isfinite(q.end)):
                    self.bad(f"{f}.end", f"must be a finite number or None, got {q.end!r}")
                    ok = False
                elif time_ok and q.end < q.time:
                    self.bad(f"{f}.end", f"departure {q.end:g} is before arrival {q.time:g}")
                    ok = False
            if not _is_int(q.count) or q.count < 1:
                self.bad(f"{f}.count", f"must be at least 1, got {q.count!r}"
                         if _is_int(q.count) else
                         f"expected a whole number, got {_pykind(q.count)}")
                ok = False
            elif q.count > MAX_CONTAINERS:
                self.bad(f"{f}.count", f"at most {MAX_CONTAINERS:,} containers are supported, "
                         f"got {q.count:,}")
                ok = False
            if not ok:
                continue
            ev = events.setdefault(q.app, [])
            ev.append((q.time, 1, i, q.count))
            if q.end is not None:
                ev.append((q.end, 0, i, -q.count))
        if not alive_check or not events:
            return
        idx = inst.app_index
        p = inst.initial
        for name, ev in events.items():
            a = idx[name]
            count = inst.apps[a].count
            placed = 0
            if isinstance(p, Placement) and isinstance(p.hosts, Mapping):
                hs = p.hosts.get(name)
                if hs is not None:
                    placed = sum(1 for h in hs[:count] if h != UNPLACED)
            alive = placed
            for t, _, i, delta in heapq.nsmallest(len(ev), ev):
                alive += delta
                if alive > count:
                    snap = f" (with {placed} in the snapshot)" if placed else ""
                    self.bad(f"requests[{i}].count",
                             f"{alive} containers of app {name!r} would be alive at once at "
                             f"time {t:g}{snap}, more than its count {count}")
                    break


def _numbers(vectors: list[Any], n: int) -> np.ndarray | None:
    """The vectors as one array, shape ``(len(vectors), n)``, if they are all fine, else ``None``.

    Fine: a tuple of ``n`` finite numbers in ``[0, MAX_NUMBER)``. With ``None`` the caller
    checks each value, naming the bad ones.
    """
    if not all(type(v) is tuple and len(v) == n for v in vectors):
        return None
    if not set(map(type, chain.from_iterable(vectors))) <= {float, int}:
        return None
    try:
        a = np.array(vectors, dtype=np.float64).reshape(len(vectors), n)
    except (OverflowError, ValueError, TypeError):
        return None
    if np.isfinite(a).all() and (a >= 0).all() and (a < MAX_NUMBER).all():
        return a
    return None


def instance_problems(inst: Instance, source: str,
                      changed: Collection[str] | None = None) -> list[Problem]:
    """Everything wrong with an :class:`Instance` however it was built (file, loader, code).

    The checks are listed in the module docstring; the limits come first (nothing per host or
    per container is computed beyond them, so then only they are reported).

    Args:
        inst: the instance (in canonical form: :func:`validate` brings Python input to it).
        source: the file, folder or instance it came from, for the messages.
        changed: run only the checks that depend on these fields (``None``: every check).

    Returns:
        One :class:`Problem` per thing wrong (empty: fine).
    """
    return _problems(inst, source, _groups(changed), None)


def _problems(inst: Instance, source: str, groups: frozenset[str], derived: list[bool] | None
              ) -> list[Problem]:
    if "limits" in groups:
        out = _limit_problems(inst, source)
        if out:
            return out
    c = _Checker(inst, source)
    if "name" in groups:
        c.name_ok(inst.name, "name")
    if "resources" in groups:
        c.resources()
    hosts_ok = c.host_types() if "host_types" in groups else True
    if "apps" in groups:
        names, counts_ok = c.apps(derived)
    else:
        names, counts_ok = set(inst.app_index), True
    if "apps" in groups:
        _topology_problems(inst, c)
    _selection_problems(inst, c, hosts="host_types" in groups, apps="apps" in groups,
                        derived=derived)
    if "rules" in groups:
        c.rules(names)
    if "exclusions" in groups:
        c.exclusions(names)
    if "meta" in groups and not isinstance(inst.meta, Mapping):
        c.bad("meta", f"expected a mapping, got {_pykind(inst.meta)}")
    if "initial" in groups and hosts_ok:
        c.initial()
    if "requests" in groups:
        c.requests(names, alive_check=counts_ok and not c.out)
    return c.out


def _topology_problems(inst: Instance, c: _Checker) -> None:
    """Bring ``App.domain_caps``/``App.spreads`` to sorted tuples of pairs and check them."""
    App = _types().app
    apps = list(inst.apps)
    changed = False
    for i, a in enumerate(apps):
        if type(a) is not App or not (a.domain_caps or a.spreads):
            continue
        f = f"apps[{i}] ({a.name})"
        ch: dict[str, Any] = {}
        for what, least in (("domain_caps", 0), ("spreads", 1)):
            v = getattr(a, what)
            pairs = _as_tuple(v) if not isinstance(v, str) else None
            if pairs is None:
                c.bad(f"{f}.{what}", f"expected (label key, integer) pairs, got {_pykind(v)}")
                continue
            norm = []
            for j, p in enumerate(pairs):
                pt = _as_tuple(p) if not isinstance(p, str) else None
                if pt is None or len(pt) != 2:
                    c.bad(f"{f}.{what}[{j}]", f"expected a (label key, integer) pair, got "
                          f"{_pykind(p)}")
                    continue
                key, k = pt[0], _plain_int(pt[1])
                if c.name_ok(key, f"{f}.{what}[{j}].key") and c.int_ok(
                        k, f"{f}.{what}[{j}] ({key})", minimum=least):
                    norm.append((key, k))
            keys = [k for k, _ in norm]
            for key in sorted({k for k in keys if keys.count(k) > 1}):
                c.bad(f"{f}.{what}", f"names label key {key!r} twice")
            t = tuple(sorted(norm))
            if t != v:
                ch[what] = t
        if ch:
            apps[i] = dataclasses.replace(a, **ch)
            changed = True
    if changed:
        object.__setattr__(inst, "apps", tuple(apps))


def _label_pairs(v: Any, f: str, c: _Checker) -> tuple[tuple[str, str], ...] | None:
    """Labels or a node selector (a mapping or ``(key, value)`` pairs) as sorted pairs.

    Returns:
        The canonical form, or ``None`` after reporting what is wrong.
    """
    if (type(v) is tuple and all(type(p) is tuple and len(p) == 2 and type(p[0]) is str
                                 and type(p[1]) is str and p[0] and not has_control(p[0])
                                 for p in v)
            and all(v[j][0] < v[j + 1][0] for j in range(len(v) - 1))):
        return v  # canonical: sorted pairs of strings, keys unique
    items = list(v.items()) if isinstance(v, Mapping) else _as_tuple(v) if not isinstance(
        v, str) else None
    if items is None:
        c.bad(f, f"expected a mapping of strings or (key, value) pairs, got {_pykind(v)}")
        return None
    ok, keys = True, set()
    for j, p in enumerate(items):
        pt = _as_tuple(p) if not isinstance(p, str) else None
        if pt is None or len(pt) != 2:
            c.bad(f"{f}[{j}]", f"expected a (key, value) pair of strings, got {_pykind(p)}")
            ok = False
            continue
        key, value = pt
        if not c.name_ok(key, f"{f} key"):
            ok = False
        elif not isinstance(value, str):
            c.bad(f"{f}.{key}", f"expected a string, got {_pykind(value)} (quote numbers and "
                  "booleans)")
            ok = False
        elif key in keys:
            c.bad(f"{f}.{key}", f"names key {key!r} twice")
            ok = False
        keys.add(key)
    return tuple(sorted((k, x) for k, x in items)) if ok else None


def _records(v: Any, f: str, kind: type, fields: tuple[str, ...], problem: Any,
             c: _Checker) -> tuple[Any, ...] | None:
    """Taints or tolerations: a sequence of ``kind`` objects with string fields, each valid."""
    items = _as_tuple(v) if not isinstance(v, str) else None
    if items is None:
        c.bad(f, f"expected a tuple of {kind.__name__} objects, got {_pykind(v)}")
        return None
    ok = True
    for j, x in enumerate(items):
        if not isinstance(x, kind):
            c.bad(f"{f}[{j}]", f"expected a {kind.__name__}, got {_pykind(x)}")
        elif not all(isinstance(getattr(x, k), str) for k in fields):
            c.bad(f"{f}[{j}]", f"{', '.join(fields)} are strings")
        elif (why := problem(x)) is not None:
            c.bad(f"{f}[{j}]", why)
        else:
            continue
        ok = False
    return items if ok else None


def _affinity(v: Any, f: str, c: _Checker) -> tuple[Any, ...] | None:
    """Required node affinity: terms (ORed) of :class:`~packing.model.selection.Requirement` (ANDed)."""
    terms = _as_tuple(v) if not isinstance(v, str) else None
    if terms is None:
        c.bad(f, f"expected a tuple of terms (tuples of Requirement) or None, got {_pykind(v)}")
        return None
    ok, out = True, []
    for i, term in enumerate(terms):
        reqs = _as_tuple(term) if not isinstance(term, str) else None
        if reqs is None:
            c.bad(f"{f}[{i}]", f"expected a tuple of Requirement, got {_pykind(term)}")
            ok = False
            continue
        norm = []
        for j, q in enumerate(reqs):
            fq = f"{f}[{i}][{j}]"
            values = _as_tuple(q.values) if isinstance(q, Requirement) and not isinstance(
                q.values, str) else None
            if not isinstance(q, Requirement):
                c.bad(fq, f"expected a Requirement, got {_pykind(q)}")
            elif not c.name_ok(q.key, f"{fq}.key"):
                pass
            elif (not isinstance(q.operator, str) or values is None
                  or not all(isinstance(x, str) for x in values)):
                c.bad(fq, "operator is a string and values a tuple of strings")
            elif (why := requirement_problem(q.operator, values)) is not None:
                c.bad(fq, why)
            else:
                norm.append(q if values is q.values else dataclasses.replace(q, values=values))
                continue
            ok = False
        out.append(tuple(norm))
    return tuple(out) if ok else None


def _selection_problems(inst: Instance, c: _Checker, hosts: bool, apps: bool,
                        derived: list[bool] | None = None) -> None:
    """Check node selection as a file's is checked, in canonical form (:mod:`packing.model.selection`).

    Labels, taints, node selectors, node affinity and tolerations of every host type (with
    ``hosts``) and app (with ``apps``; not the apps ``derived`` marks, whose fields passed in the
    instance they come from).
    """
    m = _types()
    for what, on, kind, checks in (
            ("host_types", hosts, m.host_type, (("labels", "labels"), ("taints", "taints"))),
            ("apps", apps, m.app, (("node_selector", "labels"), ("node_affinity", "affinity"),
                                   ("tolerations", "tolerations")))):
        if not on:
            continue
        items = list(getattr(inst, what))
        changed = False
        for i, x in enumerate(items):
            if type(x) is not kind or (what == "apps" and derived is not None and derived[i]):
                continue
            ch: dict[str, Any] = {}
            for name, how in checks:
                v = getattr(x, name)
                if v == () or v is None:
                    continue
                f = f"{what}[{i}] ({x.name}).{name}"
                if how == "labels":
                    new = _label_pairs(v, f, c)
                elif how == "affinity":
                    new = _affinity(v, f, c)
                elif how == "taints":
                    new = _records(v, f, Taint, ("key", "value", "effect"), taint_problem, c)
                else:
                    new = _records(v, f, Toleration, ("key", "operator", "value", "effect"),
                                   toleration_problem, c)
                if new is not None and (new != v or type(new) is not type(v)):
                    ch[name] = new
            if ch:
                items[i] = dataclasses.replace(x, **ch)
                changed = True
        if changed:
            object.__setattr__(inst, what, tuple(items))


def check_instance(inst: Instance, source: str) -> Instance:
    """Raise :class:`InputError` if :func:`instance_problems` finds anything; else return ``inst``."""
    problems = instance_problems(inst, source)
    if problems:
        raise InputError(problems)
    return inst


__all__ = [
    "CONTROL_CATEGORIES", "MAX_CELLS", "MAX_CONTAINERS", "MAX_GPUS", "MAX_HOSTS", "MAX_NUMBER",
    "MAX_RESOURCES", "ModelTypes", "check_instance", "describe", "escape_control", "has_control",
    "instance_problems", "name_list", "register_model", "reported_as", "short", "validate",
]
