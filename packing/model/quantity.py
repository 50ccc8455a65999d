"""Kubernetes resource quantities: ``500m``, ``1.5``, ``4Gi``, ``512Mi``, ``2G``, ``1e3``.

The grammar and the rounding follow the Kubernetes API machinery's ``resource.Quantity``
(``k8s.io/apimachinery/pkg/api/resource/quantity.go``; the reference page is
https://kubernetes.io/docs/reference/kubernetes-api/common-definitions/quantity/)::

    quantity ::= sign? number suffix
    number   ::= digits | digits "." digits | digits "." | "." digits
    suffix   ::= binarySI | decimalSI | decimalExponent
    binarySI ::= Ki | Mi | Gi | Ti | Pi | Ei              (powers of 1024)
    decimalSI::= n | u | m | "" | k | M | G | T | P | E   (powers of 1000)
    decimalExponent ::= ("e" | "E") sign? digits          (a power of ten)

A suffix is matched before an exponent, so ``1E`` is one exa and ``1E3`` is one thousand. Values are
kept exact (:class:`fractions.Fraction`). The scheduler reads CPU in millicores and memory in bytes,
rounding *up* (``Quantity.MilliValue`` and ``Quantity.Value`` are ``ceil`` of the scaled value), and so
do :func:`cpu_cores` and :func:`memory_bytes` here.

vbp's units for planning: CPU in cores, memory in GiB (``2**30`` bytes), GPU in whole cards.

Resource names
--------------
A container may request (``validateContainerResourceName`` in ``pkg/apis/core/validation/
validation.go`` with ``IsStandardContainerResourceName`` and ``IsExtendedResourceName`` of
``pkg/apis/core/helper/helpers.go``; https://kubernetes.io/docs/concepts/configuration/
manage-resources-containers/): the standard names ``cpu``, ``memory``, ``ephemeral-storage`` and
``hugepages-<size>``, or a domain-qualified *extended resource* outside the ``kubernetes.io``
domain (``example.com/foo``, ``nvidia.com/gpu``), whose amounts are whole numbers. Any other
name (``CPU``, ``cpus``, ``Memory``) is refused by the API server, and so by
:func:`resource_name_problem`. vbp plans byte resources (``memory``, ``ephemeral-storage``,
``hugepages-*``) in GiB, CPU in cores and every other resource (GPU cards, pod slots, extended
resources) in whole units (:func:`planning_unit`); the scheduler reads millicores, bytes and
whole units (:func:`grain`).
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

_SUFFIX = {
    "Ki": Fraction(2**10), "Mi": Fraction(2**20), "Gi": Fraction(2**30),
    "Ti": Fraction(2**40), "Pi": Fraction(2**50), "Ei": Fraction(2**60),
    "n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": Fraction(1),
    "k": Fraction(10**3), "M": Fraction(10**6), "G": Fraction(10**9),
    "T": Fraction(10**12), "P": Fraction(10**15), "E": Fraction(10**18),
}
"""Multiplier of each suffix."""

_QUANTITY = re.compile(
    r"(?P<sign>[+-]?)(?P<number>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
    r"(?:(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])|[eE](?P<exp>[+-]?[0-9]+))?"
)
MAX_EXPONENT = 30
"""Largest power of ten an exponent may give (larger values are refused, not computed)."""

GIB = 2**30
"""Bytes in one GiB, vbp's memory unit."""


def parse_quantity(value: str | int | float) -> Fraction:
    """The exact value of a quantity (a string as above, or a plain number from YAML/JSON).

    Raises:
        ValueError: not a quantity; the message says why (unknown suffix, bad number, ...).
    """
    if isinstance(value, bool):
        raise ValueError(f"expected a quantity like 500m, 2 or 4Gi, got {value!r}")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"expected a finite quantity, got {value!r}")
        return Fraction(str(value))
    if not isinstance(value, str):
        raise ValueError(f"expected a quantity like 500m, 2 or 4Gi, got {type(value).__name__}")
    text = value.strip()
    m = _QUANTITY.fullmatch(text)
    if m is None:
        tail = re.match(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(.*)", text)
        if tail and tail.group(1):
            raise ValueError(
                f"unknown unit {tail.group(1)!r} in {value!r} (units: m, k, M, G, T, P, E, "
                "Ki, Mi, Gi, Ti, Pi, Ei, or an exponent like 1e3)"
            )
        raise ValueError(f"expected a quantity like 500m, 2 or 4Gi, got {value!r}")
    q = Fraction(m.group("number"))
    if m.group("exp") is not None:
        e = int(m.group("exp"))
        if abs(e) > MAX_EXPONENT:
            raise ValueError(f"exponent {e} in {value!r} is out of range (at most {MAX_EXPONENT})")
        q *= Fraction(10) ** e
    else:
        q *= _SUFFIX[m.group("suffix") or ""]
    return -q if m.group("sign") == "-" else q


STANDARD_RESOURCES = ("cpu", "memory", "ephemeral-storage")
"""The unprefixed resource names a container may request, besides ``hugepages-<size>``."""
HUGEPAGES = "hugepages-"
"""The prefix of huge page resources (``hugepages-2Mi``, ``hugepages-1Gi``)."""
PODS = "pods"
"""The node resource of pod slots (``status.allocatable.pods``); every pod takes one."""
DEFAULT_PODS = 110
"""Pod slots of a node that does not say: the kubelet's default ``maxPods``
(https://kubernetes.io/docs/reference/command-line-tools-reference/kubelet/, ``--max-pods``)."""
_QUALIFIED = re.compile(r"(?:[a-z0-9]([-a-z0-9]*[a-z0-9])?\.)*[a-z0-9]([-a-z0-9]*[a-z0-9])?/"
                        r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
"""``<DNS subdomain>/<name>``: a domain-qualified name."""
_BINARY = ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei")


def is_byte_resource(name: str) -> bool:
    """Whether a resource is measured in bytes: memory, ephemeral storage, huge pages."""
    return name in ("memory", "ephemeral-storage") or name.startswith(HUGEPAGES)


def is_extended_resource(name: str) -> bool:
    """Whether ``name`` is a domain-qualified extended resource (not in ``kubernetes.io``)."""
    return (_QUALIFIED.fullmatch(name) is not None and "kubernetes.io/" not in name
            and not name.startswith("requests."))


def resource_name_problem(name: object) -> str | None:
    """Why a container may not request ``name`` (``None``: a name the API server accepts).

    See the module docstring; ``CPU``, ``cpus`` or ``Memory`` are refused with the name meant.
    """
    if not isinstance(name, str) or not name:
        return f"a resource name is a non-empty string, got {name!r}"
    if name in STANDARD_RESOURCES or is_extended_resource(name):
        return None
    if name.startswith(HUGEPAGES) and len(name) > len(HUGEPAGES):
        try:
            parse_quantity(name[len(HUGEPAGES):])
            return None
        except ValueError:
            return f"{name!r}: a huge page resource is hugepages-<size>, e.g. hugepages-2Mi"
    known = (*STANDARD_RESOURCES, "hugepages-2Mi")
    near = [k for k in known if k == name.lower() or k.rstrip("s") == name.lower().rstrip("s")]
    hint = f" (did you mean {near[0]!r}?)" if near else ""
    return (f"{name!r} is not a resource a container can request: the API server accepts cpu, "
            f"memory, ephemeral-storage, hugepages-<size> and domain-qualified extended "
            f"resources such as example.com/foo{hint}")


def planning_unit(resource: str) -> Fraction:
    """One planning unit of a resource as a quantity: a core, a GiB (byte resources), one unit."""
    return Fraction(GIB) if is_byte_resource(resource) else Fraction(1)


def grain(resource: str) -> Fraction:
    """The smallest amount the scheduler reads, as a quantity: a millicore, a byte, one unit."""
    return Fraction(1, 1000) if resource == "cpu" else Fraction(1)


def unit_problem(resource: str, value: str | int | float) -> str | None:
    """Why ``value`` is no amount of ``resource`` (a unit of another resource), or ``None``.

    CPU and counted resources (GPU cards, pod slots, extended resources) take no binary suffix
    (``1.5Gi`` CPU is a memory amount); byte resources take none of ``m``, ``u``, ``n`` (a
    thousandth of a byte); counted resources are whole numbers.
    """
    text = value.strip() if isinstance(value, str) else ""
    m = _QUANTITY.fullmatch(text) if text else None
    suffix = (m.group("suffix") or "") if m else ""
    if is_byte_resource(resource):
        if suffix in ("m", "u", "n"):
            return (f"{value!r} is a fraction of a byte ({suffix}); {resource} takes bytes with a "
                    "unit such as 512Mi, 4Gi or 2G")
        return None
    if suffix in _BINARY:
        return (f"{value!r} has the byte unit {suffix}; {resource} is "
                + ("CPU in cores or millicores, e.g. 500m or 1.5" if resource == "cpu"
                   else "a whole count"))
    if resource != "cpu":
        try:
            q = parse_quantity(value)
        except ValueError:
            return None
        if q.denominator != 1:
            if resource in ("gpu", "nvidia.com/gpu", "amd.com/gpu"):
                return f"GPU cards are whole, got {value!r}"
            return f"{resource} is counted in whole units, got {value!r}"
    return None


def cpu_cores(value: str | int | float) -> float:
    """CPU in cores, rounded up to a whole millicore as the scheduler does (``500m`` -> 0.5)."""
    return math.ceil(parse_quantity(value) * 1000) / 1000


def memory_bytes(value: str | int | float) -> int:
    """Memory in bytes, rounded up to a whole byte as the scheduler does (``4Gi`` -> 4294967296)."""
    return math.ceil(parse_quantity(value))


def memory_gib(value: str | int | float) -> float:
    """Memory in GiB (vbp's unit), from whole bytes (``512Mi`` -> 0.5, ``2G`` -> 1.8626...)."""
    return memory_bytes(value) / GIB


def count(value: str | int | float) -> int:
    """A whole count such as GPU cards (``nvidia.com/gpu: 2``); fractions are refused.

    Raises:
        ValueError: not a whole number.
    """
    q = parse_quantity(value)
    if q.denominator != 1:
        raise ValueError(f"expected a whole number, got {value!r}")
    return int(q)
