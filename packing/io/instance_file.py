"""Instance files: the instance schema both ways, loaded and saved as JSON or YAML.

The format is documented in ``docs/file-format.md``; :mod:`packing.io` re-exports everything here.
Loading checks every field here; the instance-level checks live in :mod:`packing.model.validation` and
run whenever an :class:`Instance` is built.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from packing.errors import InputError, Problem
from packing.io.documents import read_document, write_document
from packing.io.fields import FieldReader, check_plain
from packing.io.placement_file import placement_from_dict, placement_to_dict
from packing.model.instance import App, HostType, Instance, Request, Rule
from packing.model.selection import (
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
from packing.model.validation import (
    MAX_CELLS,
    MAX_CONTAINERS,
    MAX_GPUS,
    MAX_HOSTS,
    MAX_RESOURCES,
    check_instance,
    reported_as,
)
from packing.model.validation import describe as _kind

INSTANCE_FORMAT = "vbp-instance/1"

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
    r = FieldReader(source)
    d = r.obj(doc, "")
    if d is None or r.other_vbp_format(d, "", INSTANCE_FORMAT):
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
        check_plain(r, meta, "meta")
    if r.problems:
        raise InputError(r.problems)
    with reported_as(source):  # checked when built (packing.model.validation), named by the file
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


def _names(r: FieldReader, v: Any, field: str, allow_empty: bool) -> list[str]:
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


def _host_type(r: FieldReader, raw: Any, f: str, resources: Sequence[str], gpu_res: Sequence[str],
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


def _labels(r: FieldReader, v: Any, f: str) -> Labels | None:
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


def _string_records(r: FieldReader, v: Any, f: str, defaults: dict[str, str], make: Any,
                    problem: Any) -> tuple[Any, ...] | None:
    """A list of objects whose keys are ``defaults``' (strings, a missing key takes its default).

    Each object becomes ``make(*values)`` in the keys' order; ``problem(record)`` names what is
    wrong with one (or ``None``). ``None`` is returned when anything was wrong.
    """
    if v is None:
        return ()
    out: list[Any] = []
    n = len(r.problems)
    names = ", ".join(defaults)
    names = names if len(defaults) < 2 else names.rsplit(", ", 1)[0] + " and " + list(defaults)[-1]
    for i, raw in enumerate(r.seq(v, f) or []):
        o = r.obj(raw, f"{f}[{i}]")
        if o is None:
            continue
        r.unknown_keys(o, f"{f}[{i}]", set(defaults))
        vals = [o.get(k, d) for k, d in defaults.items()]
        if not all(isinstance(x, str) for x in vals):
            r.bad(f"{f}[{i}]", f"{names} are strings")
            continue
        rec = make(*vals)
        why = problem(rec)
        if why is not None:
            r.bad(f"{f}[{i}]", why)
        out.append(rec)
    return tuple(out) if len(r.problems) == n else None


def _taints(r: FieldReader, v: Any, f: str) -> tuple[Taint, ...] | None:
    """Taints ``[{"key", "value", "effect"}]``."""
    return _string_records(r, v, f, {"key": "", "value": "", "effect": ""}, Taint, taint_problem)


def _tolerations(r: FieldReader, v: Any, f: str) -> tuple[Toleration, ...] | None:
    """Tolerations ``[{"key", "operator", "value", "effect"}]`` (operator Equal by default)."""
    return _string_records(r, v, f, {"key": "", "operator": "Equal", "value": "", "effect": ""},
                           Toleration, toleration_problem)


def _affinity(r: FieldReader, v: Any, f: str) -> tuple[Term, ...] | None:
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


def _app(r: FieldReader, raw: Any, f: str, resources: Sequence[str], gpu_res: Sequence[str],
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
    cards, whole, gpu_ok = 0, False, True
    per_card: tuple[float, ...] = ()
    models: tuple[str, ...] = ()
    g = o.get("gpu")
    if g is not None:
        go = r.obj(g, f"{f}.gpu")
        if go is not None:
            r.unknown_keys(go, f"{f}.gpu", _GPU)
            got = r.integer(go.get("cards", 1), f"{f}.gpu.cards", minimum=0,
                            maximum=MAX_GPUS, what="GPU cards")
            cards = got or 0
            gpu_ok = got is not None
            ms = r.seq(go.get("models", []), f"{f}.gpu.models") or []
            ok_models = [r.string(m, f"{f}.gpu.models[{j}]") for j, m in enumerate(ms)]
            models = tuple(m for m in ok_models if m is not None)
            if got == 0:  # no cards: only the accepted card models (the host types it may use)
                for key in ("per_card", "whole"):
                    if key in go:
                        r.bad(f"{f}.gpu.{key}", "is given but the app asks for no GPU cards "
                              "(gpu.cards is 0)")
                        gpu_ok = False
                if not ms:
                    r.bad(f"{f}.gpu.models", "is empty but gpu.cards is 0: give the accepted "
                          "card models, or leave out gpu")
                    gpu_ok = False
            elif got is not None:
                if not gpu_res:
                    r.bad(f"{f}.gpu", "app asks for GPU cards but the instance names no "
                          "gpu_resources")
                whole = go.get("whole", False)
                if not isinstance(whole, bool):
                    r.bad(f"{f}.gpu.whole", f"expected true or false, got {_kind(whole)}")
                    whole = False
                if not whole:
                    per_card = r.vector(go.get("per_card"), f"{f}.gpu.per_card", gpu_res) or ()
    selector = _labels(r, o.get("node_selector"), f"{f}.node_selector")
    affinity = (_affinity(r, o["node_affinity"], f"{f}.node_affinity")
                if o.get("node_affinity") is not None else None)
    tolerations = _tolerations(r, o.get("tolerations"), f"{f}.tolerations")
    caps = _key_ints(r, o.get("domain_caps"), f"{f}.domain_caps", 0)
    spreads = _key_ints(r, o.get("spreads"), f"{f}.spreads", 1)
    if (None in (name, demand, count, selector, tolerations, caps, spreads)
            or (g is not None and not gpu_ok)
            or (o.get("node_affinity") is not None and affinity is None)):
        return None
    return App(name, demand, count, mph, cards, per_card, whole, models,  # type: ignore[arg-type]
               selector, affinity, tolerations, caps, spreads)  # type: ignore[arg-type]


def _key_ints(r: FieldReader, v: Any, f: str, minimum: int) -> tuple[tuple[str, int], ...] | None:
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


def _app_ref(r: FieldReader, v: Any, f: str, apps: set[str]) -> str | None:
    s = r.string(v, f)
    if s is not None and s not in apps:
        r.bad(f, f"unknown app {s!r}")
        return None
    return s


def _request(r: FieldReader, raw: Any, f: str, apps: set[str]) -> Request | None:
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
        elif a.gpu_models:  # no cards, restricted to hosts of these card models
            o["gpu"] = {"cards": 0, "models": list(a.gpu_models)}
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
        doc["meta"] = _plain(dict(inst.meta))
    return doc


def _plain(x: Any) -> Any:
    """``meta`` as JSON values: NumPy scalars and arrays become numbers and lists (iterative copy)."""
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, Mapping):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_plain(v) for v in x]
    return x


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
            bad names, ...; :func:`check_instance`; ``meta`` values that are not JSON values, NumPy
            numbers aside), or the file cannot be written.
    """
    check_instance(inst, str(path))
    doc = instance_to_dict(inst)
    r = FieldReader(str(path))
    check_plain(r, doc.get("meta", {}), "meta")  # what load_instance would refuse is not written
    if r.problems:
        raise InputError(r.problems)
    write_document(path, doc)


__all__: list[str] = [
    "INSTANCE_FORMAT", "instance_from_dict", "instance_to_dict", "load_instance", "save_instance",
]
