"""The labels a kubelet puts on every node, the zone shorthands, and near misses of known names.

Well-known labels (https://kubernetes.io/docs/reference/labels-annotations-taints/): a kubelet
labels its node with ``kubernetes.io/os`` and ``kubernetes.io/arch`` (and their deprecated
``beta.kubernetes.io/`` twins, still set beside them), ``kubernetes.io/hostname`` (unique per
node) and, with a cloud provider, ``node.kubernetes.io/instance-type``,
``topology.kubernetes.io/zone`` and ``topology.kubernetes.io/region``. Manifests select on them
(``nodeSelector: {kubernetes.io/os: linux}``, or the beta twin in older manifests), so every host
type carries them unless its host list says otherwise (:func:`well_known`): ``linux``, ``amd64``
and the type's name as the instance type. ``kubernetes.io/hostname`` is not a label of a host
type (its hosts differ): every host is its own domain of it (:data:`packing.model.topology.HOSTNAME`),
and every Node written out carries its own.

Shorthands: a host-list column (or inline key) ``zone`` means ``topology.kubernetes.io/zone``,
``region`` means ``topology.kubernetes.io/region`` (:data:`SHORTHAND`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

OS = "kubernetes.io/os"
"""The operating system label."""
ARCH = "kubernetes.io/arch"
"""The CPU architecture label."""
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
"""The instance type label (the host type's name)."""
ZONE = "topology.kubernetes.io/zone"
"""The zone label."""
REGION = "topology.kubernetes.io/region"
"""The region label."""
SHORTHAND = {"zone": ZONE, "region": REGION}
"""Host-list column names that stand for a well-known label key."""
DEFAULTS = ((OS, "linux"), ("beta.kubernetes.io/os", "linux"), (ARCH, "amd64"),
            ("beta.kubernetes.io/arch", "amd64"))
"""The labels every host type has unless its host list gives them."""

_VALUE = re.compile(r"(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?")
"""A valid label value: at most 63 characters, alphanumeric at both ends, ``-_.`` inside."""


def label_value(text: str) -> str:
    """``text`` as a valid label value: other characters become ``-``, cut to 63 characters."""
    if _VALUE.fullmatch(text):
        return text
    s = re.sub(r"[^-A-Za-z0-9_.]+", "-", text)[:63]
    return re.sub(r"^[^A-Za-z0-9]+|[^A-Za-z0-9]+$", "", s)


def well_known(type_name: str, labels: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """``labels`` with the kubelet's well-known labels added where not given, sorted.

    Args:
        type_name: the host type's name (the ``node.kubernetes.io/instance-type`` value).
        labels: the labels the host list gives, as ``(key, value)`` pairs.
    """
    out = dict(labels)
    for k, v in (*DEFAULTS, (INSTANCE_TYPE, label_value(type_name))):
        out.setdefault(k, v)
    return tuple(sorted(out.items()))


def shown(type_name: str, labels: Iterable[tuple[str, str]], keys: Iterable[str] = ()
          ) -> str:
    """A host type's labels for a message: ``{zone=a, disk=ssd}``.

    The well-known labels :func:`well_known` adds are left out (they are every type's), unless
    their key is in ``keys`` (the keys the message is about) or their value differs.
    """
    default = {**dict(DEFAULTS), INSTANCE_TYPE: label_value(type_name)}
    want = set(keys)
    items = [f"{k}={v}" for k, v in labels if default.get(k) != v or k in want]
    return "{" + ", ".join(items) + "}"


def _distance(a: str, b: str) -> int:
    """Edit distance with transpositions of neighbours (optimal string alignment)."""
    d = [[i + j if i * j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1,
                          d[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[-1][-1]


def _subsequence(a: str, b: str) -> bool:
    it = iter(b)
    return all(c in it for c in a)


def near_miss(name: str, known: Sequence[str]) -> str | None:
    """The known name ``name`` is probably a misspelling of, or ``None``.

    A name differing from a known one only in case, or by one edit (a letter added, dropped,
    changed, or two neighbours swapped), or by two edits when it has five letters or more or is
    a known name with letters dropped (``cnt``): ``pirce`` and ``cout`` are near misses of
    ``price`` and ``count``; ``role`` or ``pool`` are not (of ``zone``, ``pods``). Domain-qualified
    names (``example.com/x``) are never near misses.
    """
    if "/" in name or name in known:
        return None
    low = name.lower()
    for k in known:
        if low == k:
            return k
    for k in sorted(known, key=lambda k: _distance(low, k)):
        d = _distance(low, k)
        if d <= 1 or (d == 2 and (len(low) >= 5 or (len(low) >= 3 and _subsequence(low, k)))):
            return k
    return None


__all__ = ["ARCH", "DEFAULTS", "INSTANCE_TYPE", "OS", "REGION", "SHORTHAND", "ZONE",
           "label_value", "near_miss", "shown", "well_known"]
