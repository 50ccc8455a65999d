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
