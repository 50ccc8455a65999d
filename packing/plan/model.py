"""Capacity planning as model transforms: demand, host offers, headroom, reserve, growth, usage.

A plan places a *demand* (apps with their rules) on *host offers* (host types whose count may be
open). Everything here is pure: it builds an :class:`~packing.model.instance.Instance` to solve and reads
numbers off a placement (:mod:`packing.plan.result` turns them into a scenario's result);
solving a scenario lives in :mod:`solvers.plan.scenario` and the orchestration in ``vbp.plan``.

Units (vbp's planning units, as in :mod:`packing.model.quantity`): CPU in cores, memory in GiB
(``2**30`` bytes), GPU in whole cards, other byte resources (``ephemeral-storage``,
``hugepages-*``) in GiB, pod slots and extended resources in whole units. A demand's vectors
are in :attr:`Demand.resources` order (:data:`PLAN_RESOURCES`, then the other resources its pods
request). An instance built here (:func:`plan_resources`) has ``("cpu", "memory")``, plus
``"gpu"`` when any app or host type has GPU cards, then ``"pods"``: every container is a pod and
takes one of its host's pod slots (``allocatable.pods``, 110 unless the host type says), as every
DaemonSet pod does on the hosts it runs on (the NodeResourcesFit filter counts pods like any
resource, https://kubernetes.io/docs/concepts/scheduling-eviction/resource-bin-packing/ and
``pkg/scheduler/framework/plugins/noderesources/fit.go``), then every other resource some pod
requests. Whole GPU cards are a plain resource: cards are interchangeable and a container
taking ``k`` whole cards needs ``k`` free cards, so a count of cards is exact.

Planned capacity
----------------
Every host offer's capacity is exact (whole millicores, bytes and cards). The capacity a plan
is made against is, per resource::

    planned = floor_g((capacity - reserve) * (1 - headroom))

in that order (the per-host reserve for system daemons comes off first, then the headroom share
of what is left), computed exactly with fractions. ``floor_g`` rounds down to a multiple of ``g``,
the greatest common divisor of the demands of that resource in base units
(:func:`demand_grid`; e.g. 128 MiB when every memory demand is a multiple of 128 MiB): every
sum of demands is a multiple of ``g``, so rounding down loses no packing, and the capacity
stays a short decimal, which keeps the solvers' integer scaling exact (and their proofs
available). Demands that are not whole base units (possible in instance files) keep the exact
capacity (as the nearest float below it). The checker compares loads with capacities with its
relative tolerance (:data:`packing.feasibility.predicates.TOL`, 1e-9: at most 69 bytes on a 64 GiB
host).

The rounded capacity is the solvers' encoding only: what a plan reports (a type's ``capacity``,
its utilisation of the planned capacity, stranded capacity, the bottleneck) is measured against
the exact planned capacity ``(capacity - reserve) * (1 - headroom)``
(:func:`planned_capacity`; build_instance keeps it in ``meta["planned_capacity"]``), so a plan
without reserve and headroom is measured against the hosts' full capacity.

Stranded capacity
-----------------
For a used host with free vector ``f = planned capacity - load`` (over the planning resources),
the free amount ``f[r]`` of resource ``r`` is *stranded* when no app that asks for ``r``
(``demand[a, r] > 0``) fits in ``f`` component-wise (``demand[a] <= f``): no container shape of
the demand could use it. Rules and per-host caps are not considered (shape only). Per host type,
the stranded amounts of its used hosts are summed.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from packing.errors import InputError, Problem, input_error
from packing.feasibility.metrics import state_loads
from packing.feasibility.predicates import ClusterState, fits
from packing.model.instance import App, HostType, Instance, Placement, Rule
from packing.model.node_labels import shown as shown_labels
from packing.model.quantity import (
    DEFAULT_PODS,
    GIB,
    PODS,
    grain,
    is_byte_resource,
    parse_quantity,
    planning_unit,
    unit_problem,
)
from packing.model.selection import Labels, Taint, Term, Toleration, allowed, reasons

PLAN_RESOURCES: tuple[str, ...] = ("cpu", "memory", "gpu")
"""The first planning resources, in the order of every demand vector of a :class:`Demand`; other
resources a pod requests (``ephemeral-storage``, ``hugepages-*``, extended resources) follow in
:attr:`Demand.resources`."""

BASE_UNIT: dict[str, Fraction] = {"cpu": Fraction(1, 1000), "memory": Fraction(1, GIB),
                                  "gpu": Fraction(1)}
"""The exact unit of each of :data:`PLAN_RESOURCES`, in planning units (:func:`unit_of`)."""

def unit_of(resource: str) -> Fraction:
    """The base unit of a resource in planning units: a millicore, a byte (in GiB), one unit."""
    return grain(resource) / planning_unit(resource)


@dataclass(frozen=True)
class HostOffer:
    """A host type a plan may use.

    Attributes:
        name: unique name of the type.
        cpu_milli: CPU per host, in millicores.
        memory_bytes: memory per host, in bytes.
        gpus: whole GPU cards per host.
        price: price of one host (``None``: no price; then the plan minimises hosts).
        count: hosts available (``None``: as many as needed).
        labels: extra columns of the host list: the host type's node labels (node selection,
            topology rules such as a ``topology.kubernetes.io/zone`` column) and in the output.
        source: where the offer was read (a file, or ``"--hosts"``).
        taints: the host type's node taints.
        pods: pod slots per host (``allocatable.pods``; the kubelet's default 110).
        other: capacities of other resources in base units (bytes for ``ephemeral-storage`` and
            ``hugepages-*``, whole units for extended resources), as ``(name, amount)`` pairs;
            a resource not named is 0.
    """

    name: str
    cpu_milli: int
    memory_bytes: int
    gpus: int = 0
    price: float | None = None
    count: int | None = None
    labels: tuple[tuple[str, str], ...] = ()
    source: str = "--hosts"
    taints: tuple[Taint, ...] = ()
    pods: int = DEFAULT_PODS
    other: tuple[tuple[str, int], ...] = ()

    def exact(self) -> tuple[int, int, int]:
        """Capacity in base units (millicores, bytes, cards), in :data:`PLAN_RESOURCES` order."""
        return (self.cpu_milli, self.memory_bytes, self.gpus)

    def capacity(self, resource: str) -> int:
        """Capacity of one resource in base units (0 for a resource the type does not name)."""
        core = dict(zip(PLAN_RESOURCES, self.exact(), strict=True))
        if resource in core:
            return core[resource]
        if resource == PODS:
            return self.pods
        return dict(self.other).get(resource, 0)


@dataclass(frozen=True)
class DaemonLoad:
    """A per-host load on the host types a node selection admits (a Kubernetes DaemonSet).

    Attributes:
        name: what it is (for messages).
        base: its load on every admitted host, base units (millicores, bytes, cards), shape ``(3,)``.
        node_selector: required labels (``nodeSelector``).
        node_affinity: required node affinity terms (ORed), or ``None``.
        tolerations: the taints it tolerates (the DaemonSet controller's own included).
        other: its load of other resources in base units, ``(name, amount)`` pairs; it takes
            one pod slot besides.
    """

    name: str
    base: tuple[int, int, int]
    node_selector: Labels = ()
    node_affinity: tuple[Term, ...] | None = None
    tolerations: tuple[Toleration, ...] = ()
    other: tuple[tuple[str, int], ...] = ()

    def amount(self, resource: str) -> int:
        """Its load of one resource in base units (one pod slot)."""
        if resource in PLAN_RESOURCES:
            return self.base[PLAN_RESOURCES.index(resource)]
        return 1 if resource == PODS else dict(self.other).get(resource, 0)

    def runs_on(self, offer: HostOffer) -> bool:
        """Whether a host of ``offer`` runs it (its labels and taints admit it)."""
        return allowed(self.node_selector, self.node_affinity, self.tolerations, offer.labels,
                       offer.taints)


@dataclass(frozen=True)
class Demand:
    """What must be placed: apps with demand in :attr:`resources` order, and their rules.

    Every container is one pod: it takes one pod slot of its host (resource ``pods``, added
    when the planning instance is built, :func:`build_instance`).

    Attributes:
        apps: the apps; ``demand`` has shape ``(len(resources),)``: cores, GiB, cards, then the
            other resources (GiB for byte resources, whole units for extended resources).
        rules: ``<A, B, k>`` rules between them.
        exclusions: pairs of apps that never share a host.
        sources: the file each app was read from, by app name.
        overhead: load on every host that is not an app, in base units (millicores, bytes,
            cards), shape ``(3,)``: Kubernetes DaemonSets (one pod per host). It adds to the
            plan's reserve.
        pods: for apps read from Kubernetes manifests, by app name: the workload's kind,
            namespace, name, GPU resource and pod template (``{"metadata", "spec"}``), for
            writing the plan back out as Kubernetes objects (:mod:`packing.plan.k8s_out`).
        daemons: per-host loads that run only on the host types their node selection admits
            (Kubernetes DaemonSets), added to the reserve of those types
            (:meth:`daemon_load`); each takes a pod slot.
        resources: :data:`PLAN_RESOURCES`, then the other resources some pod requests
            (sorted by name).
        meta: facts about the input for ``vbp info`` (``{"k8s": ...}`` for manifests).
        growth_by: per-app replica multipliers by app name (a deployments CSV's ``growth``
            column, ``--growth-by``), applied by :meth:`scaled` under the scenario's growth; an
            app not named grows by 1.
    """

    apps: tuple[App, ...]
    rules: tuple[Rule, ...] = ()
    exclusions: tuple[tuple[str, str], ...] = ()
    sources: Mapping[str, str] = field(default_factory=dict)
    overhead: tuple[int, int, int] = (0, 0, 0)
    pods: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    daemons: tuple[DaemonLoad, ...] = ()
    resources: tuple[str, ...] = PLAN_RESOURCES
    meta: Mapping[str, Any] = field(default_factory=dict)
    growth_by: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        """Check the apps, rules and exclusions as an instance's (:mod:`packing.model.validation`).

        A demand built in Python is refused as a DEMAND file would be: a demand vector that is
        not ``(cores, GiB, cards, ...)`` of finite numbers, or whole cards, a bad count, a
        duplicate name, a rule on an unknown app. Lists become tuples and a demand given by
        resource name (``{"cpu": 1, "memory": 2}``) the vector, as in an
        :class:`~packing.model.instance.Instance`.

        Raises:
            InputError: every problem, the source named ``demand``.
        """
        res = tuple(self.resources)
        if res[:3] != PLAN_RESOURCES or PODS in res or len(set(res)) != len(res):
            raise InputError([Problem("demand", "resources", f"expected cpu, memory, gpu and "
                                      f"then other resources once each (not pods), got {res}")])
        inst = Instance("demand", res, (), self.apps, self.rules, self.exclusions)
        cards = [Problem("demand", f"apps[{i}] ({a.name}).demand[2]",
                         f"GPU cards are whole, got {a.demand[2]:g}")
                 for i, a in enumerate(inst.apps) if a.demand[2] != int(a.demand[2])]
        names = {a.name for a in inst.apps}
        cards += [Problem("demand", f"growth_by ({n})", "no app of that name; the apps are "
                          f"{', '.join(sorted(names))}") for n in self.growth_by if n not in names]
        if cards:
            raise InputError(cards)
        for n, m in self.growth_by.items():
            _growth_fraction(m, f"growth of {n}")
        object.__setattr__(self, "resources", res)
        for f in ("apps", "rules", "exclusions"):  # canonical: tuples, vectors by name resolved
            object.__setattr__(self, f, getattr(inst, f))

    @property
    def other(self) -> tuple[str, ...]:
        """The resources after :data:`PLAN_RESOURCES`."""
        return self.resources[3:]

    def daemon_load(self, offer: HostOffer, resources: Sequence[str] = PLAN_RESOURCES
                    ) -> tuple[int, ...]:
        """Load of the daemons a host of ``offer`` runs, base units, shape ``(len(resources),)``.

        Added to that host type's reserve (the uniform :attr:`overhead` is in every reserve);
        each daemon takes one slot of ``pods``.
        """
        run = [d for d in self.daemons if d.runs_on(offer)]
        return tuple(sum(d.amount(r) for d in run) for r in resources)

    def demand_of(self, app: App, resources: Sequence[str]) -> tuple[float, ...]:
        """One container's demand of ``app`` over ``resources`` (``pods``: 1; unknown: 0)."""
        mine = dict(zip(self.resources, app.demand, strict=True))
        return tuple(1.0 if r == PODS else float(mine.get(r, 0.0)) for r in resources)

    @staticmethod
    def combine(parts: Sequence[Demand]) -> Demand:
        """Several demands added up (their resources united).

        Raises:
            InputError: an app name appears in two parts (naming both files).
        """
        res = (*PLAN_RESOURCES, *sorted({r for p in parts for r in p.other}))
        apps: list[App] = []
        rules: list[Rule] = []
        excl: list[tuple[str, str]] = []
        sources: dict[str, str] = {}
        problems: list[Problem] = []
        over = [0, 0, 0]
        pods: dict[str, Mapping[str, Any]] = {}
        daemons: list[DaemonLoad] = []
        meta: dict[str, Any] = {}
        growth_by: dict[str, float] = {}
        for part in parts:
            meta.update(part.meta)
            growth_by.update(part.growth_by)
            over = [x + y for x, y in zip(over, part.overhead, strict=True)]
            pods.update(part.pods)
            daemons.extend(part.daemons)
            for a in part.apps:
                src = part.sources.get(a.name, "<demand>")
                if a.name in sources:
                    problems.append(Problem(src, a.name, f"app name also used in {sources[a.name]}; "
                                            "names must be unique over all DEMAND files"))
                    continue
                sources[a.name] = src
                apps.append(a if part.resources == res
                            else _replace_app(a, demand=part.demand_of(a, res)))
            rules.extend(part.rules)
            excl.extend(part.exclusions)
        if problems:
            raise InputError(problems)
        return Demand(tuple(apps), tuple(rules), tuple(excl), sources, (over[0], over[1], over[2]),
                      pods, tuple(daemons), res, meta, growth_by)

    def scaled(self, growth: float) -> Demand:
        """The demand of a growth scenario: replicas times the app's multiplier times ``growth``.

        An app's multiplier is its :attr:`growth_by` entry (1 when not named). The product is
        exact (decimal multipliers as fractions) and only the result is rounded up: 3 replicas
        grown by 1.5 in a scenario of 1.5 are ``ceil(3 * 2.25) = ceil(6.75) = 7`` (rounding
        twice would give ``ceil(ceil(4.5) * 1.5) = 8``).

        Args:
            growth: a positive multiplier; ``1.25`` turns 4 replicas into 5.

        Raises:
            InputError: ``growth`` is not a finite positive number.
        """
        g = _growth_fraction(growth)
        by = {n: _growth_fraction(m, f"growth of {n}") for n, m in self.growth_by.items()}
        apps = tuple(a if g * by.get(a.name, 1) == 1
                     else _replace_app(a, count=math.ceil(a.count * g * by.get(a.name, 1)))
                     for a in self.apps)
        return dataclasses.replace(self, apps=apps)

    def with_growth_by(self, growth_by: Mapping[str, float], source: str = "--growth-by") -> Demand:
        """The demand with these per-app multipliers over its own (a CSV's ``growth`` column).

        Raises:
            InputError: an app name the demand does not have, or a multiplier that is not a
                finite positive number (naming ``source``).
        """
        names = {a.name for a in self.apps}
        bad = [Problem(source, n, f"no app of that name; the apps are {', '.join(sorted(names))}")
               for n in growth_by if n not in names]
        if bad:
            raise InputError(bad)
        for n, m in growth_by.items():
            _growth_fraction(m, f"{source} {n}")
        return dataclasses.replace(self, growth_by={**self.growth_by, **growth_by})


def _replace_app(a: App, **changes: Any) -> App:
    return dataclasses.replace(a, **changes)


def _growth_fraction(growth: float, source: str = "--growth") -> Fraction:
    if isinstance(growth, bool) or not isinstance(growth, int | float | Fraction):
        raise input_error(source, str(growth), "expected a number")
    if isinstance(growth, float) and not math.isfinite(growth):
        raise input_error(source, str(growth), "must be finite")
    if growth <= 0:
        raise input_error(source, str(growth), "must be greater than 0")
    return Fraction(str(growth)) if isinstance(growth, float) else Fraction(growth)


def parse_growth(text: str | Sequence[float]) -> tuple[float, ...]:
    """Demand multipliers: ``"1,1.25,1.5,2"`` or a sequence of numbers.

    Raises:
        InputError: empty, not a number, not finite, or not positive.
    """
    if isinstance(text, str):
        items: list[Any] = [s.strip() for s in text.split(",")]
        vals: list[float] = []
        for s in items:
            try:
                vals.append(float(s))
            except ValueError:
                raise input_error("--growth", text, f"expected numbers separated by commas, "
                                  f"got {s!r}") from None
    else:
        vals = [float(v) for v in text]
    if not vals:
        raise input_error("--growth", str(text), "expected at least one multiplier")
    for v in vals:
        _growth_fraction(v)
    dup = sorted({v for v in vals if vals.count(v) > 1})
    if dup:
        raise input_error("--growth", str(text), f"multiplier {dup[0]:g} is given twice")
    return tuple(vals)


def parse_growth_by(text: str | Mapping[str, float] | None,
                    source: str = "--growth-by") -> dict[str, float]:
    """Per-app multipliers: ``"web=2,db=1"`` or a mapping (``None``: none).

    Raises:
        InputError: not ``APP=NUMBER`` pairs, an app named twice, or a multiplier that is not a
            finite positive number.
    """
    if text is None:
        return {}
    if not isinstance(text, str):
        out = dict(text)
    else:
        out = {}
        for part in (p.strip() for p in text.split(",")):
            name, eq, value = part.partition("=")
            try:
                if not eq or not name.strip():
                    raise ValueError
                v = float(value)
            except ValueError:
                raise input_error(source, text, f"expected APP=MULTIPLIER pairs separated by "
                                  f"commas (web=2,db=1), got {part!r}") from None
            if name.strip() in out:
                raise input_error(source, text, f"app {name.strip()!r} is given twice")
            out[name.strip()] = v
    for n, m in out.items():
        _growth_fraction(m, f"{source} {n}")
    return out


# ------------------------------------------------------------------------------------------------
# headroom and reserve
@dataclass(frozen=True)
class Adjustment:
    """What comes off every host before planning: a reserve, then a headroom share.

    Attributes:
        reserve: per-host overhead in base units (millicores, bytes, cards), shape ``(3,)``.
        headroom: share kept free per resource (``0 <= h < 1``), shape ``(3,)``.
    """

    reserve: tuple[int, int, int] = (0, 0, 0)
    headroom: tuple[Fraction, Fraction, Fraction] = (Fraction(0), Fraction(0), Fraction(0))

    def plus(self, overhead: Sequence[int]) -> Adjustment:
        """The adjustment with ``overhead`` (base units, shape ``(3,)``) added to the reserve."""
        r = [a + int(b) for a, b in zip(self.reserve, overhead, strict=True)]
        return Adjustment((r[0], r[1], r[2]), self.headroom)

    @property
    def is_identity(self) -> bool:
        """Whether nothing comes off."""
        return not any(self.reserve) and not any(self.headroom)

    def planned(self, offer: HostOffer, grid: Sequence[int | None] | None = None,
                extra: Sequence[int] | None = None, resources: Sequence[str] = PLAN_RESOURCES
                ) -> tuple[Fraction, ...]:
        """Planned capacity of ``offer`` in base units (see the module docstring).

        Args:
            offer: the host type.
            grid: per resource, the step every demand is a multiple of (base units), or ``None``
                when the demands are not whole base units; shape ``(len(resources),)``
                (default: steps of 1). The capacity is rounded down to a multiple of the step
                (no sum of demands is lost); with ``None`` it is kept exact.
            extra: more reserve on this host type (its DaemonSets: :meth:`Demand.daemon_load`),
                base units, shape ``(len(resources),)`` (default: none).
            resources: the resources, in order; the reserve and headroom apply to
                :data:`PLAN_RESOURCES` only.

        Returns:
            The planned capacity, shape ``(len(resources),)``.

        Raises:
            InputError: the reserve leaves no CPU or no memory on the host type, or the
                DaemonSets need more of a resource (pod slots included) than it has.
        """
        out: list[Fraction] = []
        n = len(resources)
        steps = list(grid) if grid is not None else [1] * n
        more = list(extra) if extra is not None else [0] * n
        for r, g, x in zip(resources, steps, more, strict=True):
            j = PLAN_RESOURCES.index(r) if r in PLAN_RESOURCES else None
            cap = offer.capacity(r)
            res = int(x) + (self.reserve[j] if j is not None else 0)
            h = self.headroom[j] if j is not None else Fraction(0)
            left = cap - res
            if left <= 0 and r in ("cpu", "memory"):
                raise input_error(offer.source, f"{offer.name}.{r}",
                                  f"the reserve ({_show(r, res)}) leaves no {r} on this host "
                                  f"type ({_show(r, cap)})")
            if left < 0:
                raise input_error(offer.source, f"{offer.name}.{r}",
                                  f"its DaemonSets and reserve need {_show(r, res)} {r}, more "
                                  f"than the host type has ({_show(r, cap)})")
            exact = max(Fraction(0), left * (1 - h))
            out.append(exact if g is None else Fraction(math.floor(exact / g) * g))
        return tuple(out)

    def describe(self, daemons: bool = False) -> str:
        """One line: what the capacity is planned against (``daemons``: per-host-type loads too)."""
        if self.is_identity and not daemons:
            return "full host capacity"
        parts = []
        if any(self.reserve):
            parts.append("minus reserve " + ", ".join(
                f"{r}={_show(r, v)}" for r, v in zip(PLAN_RESOURCES, self.reserve, strict=True) if v))
        if daemons:
            parts.append("minus the DaemonSets each host type runs")
        if any(self.headroom):
            parts.append("times (1 - headroom) with headroom " + ", ".join(
                f"{r}={float(h) * 100:g}%" for r, h in zip(PLAN_RESOURCES, self.headroom,
                                                             strict=True) if h))
        return "capacity " + ", then ".join(parts)


def _show(resource: str, base: int) -> str:
    """A base-unit amount in words: ``100m``, ``128Mi``, ``2`` cards."""
    if resource == "cpu":
        return f"{base}m" if base % 1000 else f"{base // 1000}"
    if is_byte_resource(resource):
        for unit, size in (("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
            if base % size == 0 and base >= size:
                return f"{base // size}{unit}"
        return f"{base}"
    return f"{base}"


def _resource_name(name: str, source: str, text: str) -> str:
    n = name.strip().lower()
    n = {"mem": "memory", "gpus": "gpu", "nvidia.com/gpu": "gpu"}.get(n, n)
    if n not in PLAN_RESOURCES:
        raise input_error(source, text, f"unknown resource {name.strip()!r}; use cpu, memory, gpu")
    return n


def to_base(resource: str, value: str | int | float, source: str, fld: str, *,
            up: bool = True) -> int:
    """A quantity in base units of ``resource``: millicores, bytes, whole units.

    A byte resource (memory, ephemeral storage, huge pages) needs a unit (``64Gi``, ``512Mi``,
    ``2G``): a plain number would be bytes in Kubernetes and is refused as a likely mistake. A
    unit of another resource (``1.5Gi`` CPU, ``128m`` memory) is refused
    (:func:`packing.model.quantity.unit_problem`).

    Args:
        resource: the resource.
        value: the quantity.
        source: the file (for errors).
        fld: the field (for errors).
        up: round a demand up to whole millicores and bytes, as the scheduler reads it; a
            capacity (``up=False``) is rounded down, never up.

    Raises:
        InputError: not a quantity, negative, a byte amount without a unit, a unit of another
            resource, or a fraction of a counted unit (GPU cards, pods, extended resources).
    """
    try:
        q = parse_quantity(value)
    except ValueError as e:
        raise input_error(source, fld, str(e)) from None
    if q < 0:
        raise input_error(source, fld, f"must not be negative, got {value!r}")
    if resource == "gpu" and q.denominator != 1:
        raise input_error(source, fld, f"GPU cards are whole, got {value!r}")
    why = unit_problem(resource, value)
    if why is not None:
        raise input_error(source, fld, why)
    if is_byte_resource(resource):
        text = str(value).strip()
        if q != 0 and (not isinstance(value, str) or text[-1].isdigit()):
            raise input_error(source, fld, f"{resource} needs a unit, e.g. 4Gi, 512Mi or 2G (a "
                              f"plain number would be bytes), got {value!r}")
    scaled = q / grain(resource)
    return math.ceil(scaled) if up else math.floor(scaled)


def parse_reserve(text: str | Mapping[str, str] | None, source: str = "--reserve"
                  ) -> tuple[int, int, int]:
    """A per-host reserve: ``"100m,128Mi"`` (cpu, memory[, gpu]) or ``"cpu=100m,memory=128Mi"``.

    Returns:
        The reserve in base units (millicores, bytes, cards), shape ``(3,)``.

    Raises:
        InputError: a bad quantity, an unknown resource, or too many values.
    """
    if text is None:
        return (0, 0, 0)
    items = _pairs(text, source)
    out = [0, 0, 0]
    for r, v in items.items():
        out[PLAN_RESOURCES.index(r)] = to_base(r, v, source, r)
    return (out[0], out[1], out[2])


def parse_headroom(text: str | float | Mapping[str, Any] | None, source: str = "--headroom"
                   ) -> tuple[Fraction, Fraction, Fraction]:
    """Headroom per resource: ``"15%"`` (every resource), ``"cpu=20%,memory=10%"``, or a fraction.

    A string needs the ``%`` sign; a number (Python) is a fraction (``0.15``). A bare share
    applies to CPU and memory; GPU cards (allocated whole, they do not burst) get a headroom only
    when named (``gpu=25%``).

    Returns:
        The share kept free per resource, shape ``(3,)``, each in ``[0, 1)``.

    Raises:
        InputError: not a percentage, negative, or 100% or more.
    """
    zero = Fraction(0)
    if text is None:
        return (zero, zero, zero)
    if isinstance(text, bool):
        raise input_error(source, str(text), "expected a percentage like 15%")
    if isinstance(text, int | float):
        h = _share(text, source, "headroom")
        return (h, h, zero)
    if isinstance(text, str) and "=" not in text:
        h = _share(text, source, "headroom")
        return (h, h, zero)
    out = [zero, zero, zero]
    for r, v in _pairs(text, source).items():
        out[PLAN_RESOURCES.index(r)] = _share(v, source, r)
    return (out[0], out[1], out[2])


def _share(v: Any, source: str, fld: str) -> Fraction:
    if isinstance(v, str):
        s = v.strip()
        if not s.endswith("%"):
            raise input_error(source, fld, f"expected a percentage like 15%, got {v!r}")
        try:
            h = Fraction(s[:-1].strip()) / 100
        except ValueError:
            raise input_error(source, fld, f"expected a percentage like 15%, got {v!r}") from None
    elif isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v):
        h = Fraction(str(v))
    else:
        raise input_error(source, fld, f"expected a percentage like 15%, got {v!r}")
    if not 0 <= h < 1:
        raise input_error(source, fld, f"must be at least 0% and below 100%, got {v!r}")
    return h


def _pairs(text: str | Mapping[str, Any], source: str) -> dict[str, Any]:
    """``"a,b"`` (positional cpu, memory, gpu) or ``"cpu=a,memory=b"`` or a mapping, by resource."""
    if isinstance(text, Mapping):
        return {_resource_name(str(k), source, str(k)): v for k, v in text.items()}
    parts = [p.strip() for p in str(text).split(",") if p.strip()]
    if not parts:
        raise input_error(source, str(text), "expected values like 100m,128Mi or cpu=100m")
    out: dict[str, Any] = {}
    if all("=" in p for p in parts):
        for p in parts:
            k, _, v = p.partition("=")
            r = _resource_name(k, source, p)
            if r in out:
                raise input_error(source, p, f"{r} is given twice")
            out[r] = v.strip()
        return out
    if any("=" in p for p in parts):
        raise input_error(source, str(text), "use either positional values (100m,128Mi) or "
                          "named ones (cpu=100m,memory=128Mi), not both")
    if len(parts) > len(PLAN_RESOURCES):
        raise input_error(source, str(text), f"expected at most {len(PLAN_RESOURCES)} values "
                          "(cpu, memory, gpu)")
    return dict(zip(PLAN_RESOURCES, parts, strict=False))


def base_to_units(resource: str, base: int | Fraction) -> float:
    """A base-unit amount as a float in planning units (cores, GiB, cards), rounded down."""
    exact = Fraction(base) * unit_of(resource)
    x = float(exact)
    return math.nextafter(x, -math.inf) if Fraction(x) > exact else x


def _whole_base(x: float, resource: str) -> int | None:
    """``x`` (planning units) as whole base units, or ``None``.

    The float itself is tried first (memory: bytes / 2**30 is exact), then its shortest decimal
    reading (CPU: 0.7 cores is the float nearest to 7/10, i.e. 700 millicores).
    """
    for q in (Fraction(x), Fraction(repr(float(x)))):
        v = q / unit_of(resource)
        if v.denominator == 1:
            return int(v)
    return None


def demand_grid(demand: Demand, resources: Sequence[str] = PLAN_RESOURCES
                ) -> tuple[int | None, ...]:
    """Per resource, the greatest common divisor of the demands in base units.

    ``None`` for a resource whose demands are not all whole base units (instance files may hold
    any number); 1 when no app asks for the resource (and for ``pods``: one per container).

    Returns:
        One step per resource, shape ``(len(resources),)``.
    """
    out: list[int | None] = []
    for r in resources:
        g: int | None = 0
        for a in demand.apps:
            q = _whole_base(demand.demand_of(a, (r,))[0], r)
            if q is None:
                g = None
                break
            g = math.gcd(g or 0, q)
        out.append(None if g is None else (g or 1))
    return tuple(out)


# ------------------------------------------------------------------------------------------------
# building the instance
def plan_resources(demand: Demand, offers: Sequence[HostOffer]) -> tuple[str, ...]:
    """The resources of the planning instance.

    ``cpu``, ``memory``, ``gpu`` when anything has cards, ``pods`` (every container takes a
    slot), then every other resource some app or DaemonSet asks for.
    """
    gpu = any(a.demand[2] > 0 for a in demand.apps) or any(o.gpus > 0 for o in offers)
    asked = [r for j, r in enumerate(demand.other, start=3)
             if any(a.demand[j] > 0 for a in demand.apps)
             or any(d.amount(r) > 0 for d in demand.daemons)]
    return (*(PLAN_RESOURCES if gpu else PLAN_RESOURCES[:2]), PODS, *asked)


def build_instance(demand: Demand, offers: Sequence[HostOffer], counts: Sequence[int],
                   adjustment: Adjustment | None = None, name: str = "plan",
                   rounded: bool = True) -> Instance:
    """The instance to solve: the demand on the offers with planned capacities and given counts.

    Args:
        demand: what to place.
        offers: the host types.
        counts: hosts of each type, shape ``(n_offers,)``.
        adjustment: reserve and headroom (``None``: full capacity).
        name: the instance name.
        rounded: round capacities down to the demands' common step (:func:`demand_grid`: no
            sum of demands is lost; the solvers' grid); ``False`` keeps them exact.

    Returns:
        The instance over :func:`plan_resources` (each container takes one of its host's
        ``pods``, each DaemonSet one on the hosts it runs on); a host type's cost is its price
        (1 without prices), its labels the offer's, hosts are named ``"<type>#<i>"``.
    """
    adj = adjustment or Adjustment()
    res = plan_resources(demand, offers)
    grid = demand_grid(demand, res)
    types = []
    exact: dict[str, list[float]] = {}
    for o, c in zip(offers, counts, strict=True):
        extra = demand.daemon_load(o, res)
        planned = adj.planned(o, grid if rounded else [None] * len(res), extra, res)
        cap = tuple(base_to_units(r, b) for r, b in zip(res, planned, strict=True))
        types.append(HostType(o.name, cap, int(c), cost=1.0 if o.price is None else float(o.price),
                              labels=tuple(sorted(o.labels)), taints=o.taints))
        unrounded = adj.planned(o, [None] * len(res), extra, res)
        exact[o.name] = [base_to_units(r, b) for r, b in zip(res, unrounded, strict=True)]
    apps = tuple(_replace_app(a, demand=demand.demand_of(a, res)) for a in demand.apps)
    return Instance(name, res, tuple(types), apps, demand.rules, demand.exclusions,
                    meta={"planned_against": adj.describe(bool(demand.daemons)),
                          "planned_capacity": exact})


def reserved(adjustment: Adjustment, demand: Demand, offer: HostOffer,
             resources: Sequence[str]) -> dict[str, int]:
    """What comes off a host of ``offer`` before its pods, per resource (base units).

    The reserve (``--reserve`` and the demand's uniform overhead, on :data:`PLAN_RESOURCES`)
    plus the DaemonSets the type runs (their pod slots included): capacity minus this is the
    Node's ``allocatable`` (:mod:`packing.plan.k8s_out`).
    """
    daemons = demand.daemon_load(offer, resources)
    return {r: d + (adjustment.reserve[PLAN_RESOURCES.index(r)] if r in PLAN_RESOURCES else 0)
            for r, d in zip(resources, daemons, strict=True)}


def check_resources(demand: Demand, offers: Sequence[HostOffer]) -> None:
    """Refuse a demand that asks for a resource no host type offers (bad input), one line each.

    Raises:
        InputError: per resource, naming the first app (or DaemonSet) that asks for it, the
            amount, and how to state it on the host types.
    """
    problems = []
    for j, r in enumerate(demand.other, start=3):
        if any(o.capacity(r) > 0 for o in offers):
            continue
        app = next((a for a in demand.apps if a.demand[j] > 0), None)
        if app is not None:
            src, who = demand.sources.get(app.name, "<demand>"), app.name
            base = math.ceil(Fraction(repr(app.demand[j])) / unit_of(r))
        else:
            d = next((d for d in demand.daemons if d.amount(r) > 0), None)
            if d is None:
                continue
            src, who, base = "<demand>", d.name, d.amount(r)
        problems.append(Problem(src, who, f"requests {r} {_show(r, base)}, which no host type "
                                f"offers; state it on the host types: a {r!r} column, {r}= "
                                f"inline or {r}: in a YAML host list"))
    if problems:
        raise InputError(problems)


def offers_for(demand: Demand, offers: Sequence[HostOffer]) -> tuple[HostOffer, ...]:
    """The offers with their labels named after a resource the demand asks for read as capacity.

    A host-list column (or inline ``key=value``) is a label, except when it names a resource some
    app or DaemonSet requests: ``example.com/foo`` is then that extended resource's capacity (a
    whole number; empty means 0). ``pods``, ``ephemeral-storage`` and ``hugepages-*`` are read as
    capacities when the host list is read.

    Raises:
        InputError: such a label is not a whole, non-negative amount.
    """
    wanted = set(demand.other)
    out = []
    problems: list[Problem] = []
    for o in offers:
        move = [(k, v) for k, v in o.labels if k in wanted]
        if not move:
            out.append(o)
            continue
        other = dict(o.other)
        for k, v in move:
            try:
                other[k] = to_base(k, v, o.source, f"{o.name}.{k}", up=False)
            except InputError as e:
                problems.extend(e.problems)
        out.append(dataclasses.replace(o, labels=tuple((k, v) for k, v in o.labels
                                                       if k not in wanted),
                                       other=tuple(sorted(other.items()))))
    if problems:
        raise InputError(problems)
    return tuple(out)


def check_selection(demand: Demand, offers: Sequence[HostOffer]) -> None:
    """Refuse a demand with an app whose node selection admits no host type (bad input).

    An app's node selector, required node affinity and tolerations are matched against every
    offer's labels and taints (:func:`packing.model.selection.allowed`); capacity is not considered.

    Raises:
        InputError: one problem per such app, naming its source file, the app, why each host
            type refuses it, and the host types' labels.
    """
    problems = []
    for a in demand.apps:
        sel = (a.node_selector, a.node_affinity, a.tolerations)
        if a.count == 0 or any(allowed(*sel, o.labels, o.taints) for o in offers):
            continue
        shown = offers[:MAX_TYPES_SHOWN]
        more = f"; and {len(offers) - len(shown)} more" if len(offers) > len(shown) else ""
        why = "; ".join(f"{o.name}: {', '.join(reasons(*sel, o.labels, o.taints))}"
                        for o in shown)
        keys = {k for k, _ in a.node_selector} | {r.key for t in a.node_affinity or ()
                                                   for r in t}
        labels = "; ".join(f"{o.name} {shown_labels(o.name, o.labels, keys)}" for o in shown)
        problems.append(Problem(demand.sources.get(a.name, "<demand>"), a.name,
                                f"its node selection matches no host type ({why}{more}); "
                                f"host type labels: {labels}"))
    if problems:
        raise InputError(problems)


MAX_TYPES_SHOWN = 3
"""At most this many host types are named when an app's node selection matches none."""


# ------------------------------------------------------------------------------------------------
# reading a plan
@dataclass(frozen=True)
class TypeUsage:
    """How a plan uses one host type.

    Attributes:
        type: the host type's name.
        hosts: hosts of the type used.
        cost: their total cost (``None`` without prices).
        utilisation: load / the hosts' full capacity over the used hosts, per resource (the
            share of the real hosts in use; below 1 - headroom when headroom is planned).
        stranded: stranded free capacity (planned capacity - load) over the used hosts, per
            resource (planning units; see the module docstring).
        bottleneck: the resource with the highest utilisation of the planned capacity (``None``
            when unused).
        capacity: the planned capacity of one host, per resource (planning units): exactly
            ``(capacity - reserve) * (1 - headroom)`` (:func:`planned_capacity`), the full
            capacity without reserve and headroom.
        labels: the offer's labels.
        utilisation_of_planned: load / planned capacity over the used hosts, per resource (1
            when the used hosts are full up to the reserve and headroom line; equal to
            ``utilisation`` without reserve and headroom).
        host_capacity: the full capacity of one host (before reserve and headroom), per
            resource (planning units).
    """

    type: str
    hosts: int
    cost: float | None
    utilisation: dict[str, float]
    stranded: dict[str, float]
    bottleneck: str | None
    capacity: dict[str, float]
    labels: dict[str, str] = field(default_factory=dict)
    utilisation_of_planned: dict[str, float] = field(default_factory=dict)
    host_capacity: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """As plain JSON data."""
        return {"type": self.type, "hosts": self.hosts, "cost": self.cost,
                "utilisation": dict(self.utilisation),
                "utilisation_of_planned": dict(self.utilisation_of_planned),
                "stranded": dict(self.stranded), "bottleneck": self.bottleneck,
                "capacity": dict(self.capacity), "host_capacity": dict(self.host_capacity),
                "labels": dict(self.labels)}


def full_capacity(instance: Instance, offers: Sequence[HostOffer]) -> list[tuple[float, ...]]:
    """The full capacity (before reserve and headroom) of each host type of a planning instance.

    Args:
        instance: a planning instance (:func:`build_instance`); its host types are matched to
            ``offers`` by name (a type no offer names keeps its planned capacity).
        offers: the host types offered.

    Returns:
        Per host type of ``instance``, the capacity in ``instance.resources`` order (planning
        units), shape ``(n_types, n_resources)``.
    """
    by_name = {o.name: o for o in offers}
    out = []
    for t in instance.host_types:
        o = by_name.get(t.name)
        if o is None:
            out.append(tuple(t.capacity))
            continue
        out.append(tuple(base_to_units(r, o.capacity(r)) for r in instance.resources))
    return out


def planned_capacity(instance: Instance) -> list[tuple[float, ...]]:
    """The exact planned capacity of each host type of a planning instance, before the grid rounding.

    The instance's own capacities are rounded down to the demands' common step for the solvers
    (see the module docstring); reports measure against ``(capacity - reserve) * (1 - headroom)``,
    which :func:`build_instance` keeps in ``meta["planned_capacity"]``. A type it does not name
    (an instance not built there) keeps its own capacity.

    Returns:
        Per host type, the capacity in ``instance.resources`` order (planning units), shape
        ``(n_types, n_resources)``.
    """
    meta = instance.meta if isinstance(instance.meta, Mapping) else {}
    exact = meta.get("planned_capacity") or {}
    n = instance.n_resources
    out = []
    for t in instance.host_types:
        cap = exact.get(t.name)
        out.append(tuple(float(c) for c in cap) if cap is not None and len(cap) == n
                   else tuple(t.capacity))
    return out


STRANDED_CHUNK = 1024
"""Hosts per block when stranded capacity is computed (bounds the hosts x shapes array)."""


def stranded(demand: np.ndarray, free: np.ndarray) -> np.ndarray:
    """Stranded free capacity per host and resource (see the module docstring).

    Args:
        demand: demand of one container per app, shape ``(n_apps, n_resources)``.
        free: free capacity per host, shape ``(n_hosts, n_resources)``.

    Returns:
        The stranded amounts, shape ``(n_hosts, n_resources)``.
    """
    free = np.maximum(free, 0.0)
    if demand.shape[0] == 0:
        return free.copy()
    fit = fits(demand[None, :, :], free[:, None, :]).all(axis=2)  # (H, A): the one fit test
    uses = demand > 0  # (A, R)
    usable = (fit.astype(np.int64) @ uses.astype(np.int64)) > 0  # (H, R)
    return np.where(usable, 0.0, free)


def type_usage(instance: Instance, placement: Placement, priced: bool,
               labels: Sequence[Mapping[str, str]] | None = None,
               full: Sequence[Sequence[float]] | None = None,
               planned: Sequence[Sequence[float]] | None = None) -> tuple[TypeUsage, ...]:
    """Per host type: hosts used, cost, utilisation, stranded capacity and bottleneck.

    Args:
        instance: the planning instance (from :func:`build_instance`).
        placement: a placement on it (checked elsewhere).
        priced: whether costs are prices (else ``cost`` is ``None``).
        labels: the labels of each host type, shape ``(n_types,)``.
        full: the full capacity of each host type (:func:`full_capacity`), shape
            ``(n_types, n_resources)``; ``None``: the planned capacity is the full one.
        planned: the planned capacity of each host type (:func:`planned_capacity`), shape
            ``(n_types, n_resources)``; ``None``: the instance's capacities.
    """
    host_of = placement.host_array(instance)
    st = ClusterState.from_placement(instance, host_of, placement.card_lists(instance))
    load, cap = state_loads(st)
    if planned is not None:
        cap = np.asarray(planned, dtype=np.float64).reshape(len(instance.host_types), -1)[
            instance.host_type_of]
    used = st.used_hosts()
    names = instance.resources
    strand = np.zeros_like(load)
    shapes = np.unique(instance.demand[instance.counts > 0], axis=0)
    rows = np.flatnonzero(used)
    for lo in range(0, len(rows), STRANDED_CHUNK):
        sel = rows[lo : lo + STRANDED_CHUNK]
        strand[sel] = stranded(shapes, cap[sel] - load[sel])
    out = []
    for t, ht in enumerate(instance.host_types):
        sel = used & (instance.host_type_of == t)
        n = int(sel.sum())
        lsum, csum = load[sel].sum(axis=0), cap[sel].sum(axis=0)
        util = np.divide(lsum, csum, out=np.zeros_like(lsum), where=csum > 0)
        host_cap = np.asarray(ht.capacity if full is None else full[t], dtype=np.float64)
        fsum = host_cap * n
        raw = np.divide(lsum, fsum, out=np.zeros_like(lsum), where=fsum > 0)
        out.append(TypeUsage(
            type=ht.name, hosts=n, cost=float(n * ht.cost) if priced else None,
            utilisation={r: float(u) for r, u in zip(names, raw, strict=True)},
            stranded={r: float(s) for r, s in zip(names, strand[sel].sum(axis=0), strict=True)},
            bottleneck=names[int(np.argmax(util))] if n else None,
            capacity={r: float(c) for r, c in zip(
                names, ht.capacity if planned is None else planned[t], strict=True)},
            labels=dict(labels[t]) if labels is not None else {},
            utilisation_of_planned={r: float(u) for r, u in zip(names, util, strict=True)},
            host_capacity={r: float(c) for r, c in zip(names, host_cap, strict=True)},
        ))
    return tuple(out)


__all__ = [
    "BASE_UNIT", "DEFAULT_PODS", "MAX_TYPES_SHOWN", "PLAN_RESOURCES", "Adjustment", "DaemonLoad",
    "Demand", "HostOffer", "TypeUsage", "base_to_units", "build_instance", "check_resources",
    "check_selection", "offers_for", "reserved", "unit_of",
    "full_capacity", "parse_growth", "parse_growth_by", "parse_headroom", "parse_reserve", "plan_resources",
    "planned_capacity", "stranded", "to_base", "type_usage",
]
