"""Policies by name: ``get_policy("bf")``, ``get_policy("k8s-rtcr", shape=[(0, 0), (100, 10)])``.

Names are stable (they appear in result files and on the command line). A name that is a path to a file
with a registered suffix (``register_loader(".json", fn)``) is loaded by that function instead, so a tuned
policy saved by the swarm work can be compared like any heuristic: ``vbp compare --policies bf,tuned.json``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from packing.errors import input_error
from packing.gpu.fgd_protocol import Workload
from packing.gpu.fragmentation import ShapeDistribution, shape_distribution
from policies import cluster_heuristics as mc
from policies import gpu as g
from policies import heuristics as h
from policies.base import BasePolicy, Policy

POLICIES: dict[str, type[BasePolicy]] = {
    "ff": h.FirstFit,
    "bf": h.BestFit,
    "bf-bottleneck": h.BestFitBottleneck,
    "wf": h.WorstFit,
    "ffd": h.FirstFitDecreasing,
    "bfd": h.BestFitDecreasing,
    "dot": h.DotProduct,
    "l2": h.L2Norm,
    "k8s-least": h.K8sLeastAllocated,
    "k8s-most": h.K8sMostAllocated,
    "k8s-balanced": h.K8sBalancedAllocation,
    "k8s-rtcr": h.K8sRequestedToCapacityRatio,
    "greedy": h.Greedy,
    "random": h.RandomFit,
    "alignment": h.Alignment,
    "gpu-random": g.GpuRandom,
    "gpu-dotprod": g.GpuDotProduct,
    "gpu-clustering": g.GpuClustering,
    "gpu-packing": g.GpuPacking,
    "gpu-bestfit": g.GpuBestFit,
    "fgd": g.FGD,
    "node-bf": mc.NodeBestFit,
    "mc-bf": mc.ClusterBestFit,
    "mc-greedy": mc.ClusterGreedy,
    "mc-random": mc.ClusterRandom,
    "mc-util": mc.ClusterUtilization,
    "mc-expert": mc.ClusterExpert,
    "mc-cardmix": mc.ClusterCardMix,
    "node-mix": mc.NodeCardMix,
    "fgd-plus": g.FGDPlus,
    "fgd-pack": g.FGDPack,
}
"""Stable policy names and their classes."""

DEFAULT_COMPARE = ("ff", "bf", "bf-bottleneck", "wf", "ffd", "bfd", "dot", "l2", "k8s-least", "k8s-most",
                   "k8s-balanced", "k8s-rtcr", "greedy", "random", "alignment")
"""The policies ``vbp compare`` runs by default (every heuristic)."""

SHIPPED: dict[str, tuple[str, str]] = {
    "swarm-sigma": ("swarm-sigma.json", "sigma"),
    "gcn-sigma": ("gcn-sigma.pt", "sigma"),
}
"""Trained policies shipped with vbp (``policies/data/``): name -> (file, the instance it was trained for).

Each file records the command that trained it (``training.command``); held-out orders never overlap
the training orders (independent seed streams), so ``vbp compare`` on that instance is a fair test.
"""

_LOADERS: dict[str, Callable[[Path], Policy]] = {}


def shipped_path(name: str) -> Path:
    """The file of a shipped policy (see :data:`SHIPPED`)."""
    return Path(__file__).resolve().parent / "data" / SHIPPED[name][0]


def default_policies(instance_name: str) -> list[str]:
    """What ``vbp compare`` runs by default: every heuristic, then the shipped policies trained for it.

    Shipped learned agents (``.pt``) are left out when torch or torch_geometric is not installed
    (the ``rl`` extra); naming one explicitly then gives a clear error.
    """
    import importlib.util

    agents = all(importlib.util.find_spec(m) is not None for m in ("torch", "torch_geometric"))
    return list(DEFAULT_COMPARE) + [n for n, (f, inst) in SHIPPED.items()
                                    if inst == instance_name and (agents or not f.endswith(".pt"))]


def register_loader(suffix: str, fn: Callable[[Path], Policy]) -> None:
    """Let :func:`get_policy` open files ending in ``suffix`` (e.g. ``".json"``) with ``fn(path)``."""
    _LOADERS[suffix.lower() if suffix.startswith(".") else f".{suffix.lower()}"] = fn


def _load_swarm(path: Path) -> Policy:
    from policies.swarm.policy import SwarmPolicy

    return SwarmPolicy.load(path)


def _load_agent(path: Path) -> Policy:
    from policies.agents.files import load_agent

    return load_agent(path)


register_loader(".json", _load_swarm)  # tuned policies saved by ``vbp train swarm``
register_loader(".pt", _load_agent)  # learned agents (``policies.agents.files``; needs torch)


def get_policy(name: str, **params: Any) -> Policy:
    """A fresh policy by name (or a policy file with a registered loader).

    Args:
        name: one of :data:`POLICIES`, or a path whose suffix has a loader.
        **params: keyword arguments of the policy class (e.g. ``open_first=True``).

    Raises:
        InputError: unknown name, a file without a loader, or bad parameters.
    """
    if name in POLICIES:
        try:
            return POLICIES[name](**params)
        except TypeError as e:
            raise input_error("policy", name, f"bad parameters {sorted(params)}: {e}") from None
    if name in SHIPPED:
        path = shipped_path(name)
        policy = _LOADERS[path.suffix](path)
        policy.name = name  # reported under the name it was asked by
        return policy
    p = Path(name)
    suffix = p.suffix.lower()
    if suffix:
        if suffix in _LOADERS:
            if not p.is_file():
                raise input_error(name, "", "no such policy file")
            return _LOADERS[suffix](p)
        raise input_error(name, "", f"no loader for {suffix!r} policy files (known: "
                          f"{sorted(_LOADERS) or 'none'})")
    raise input_error("policy", name, f"unknown policy; known: {', '.join(POLICIES)}")


def gpu_policy(name: str, dist: ShapeDistribution, workload: Workload | None = None) -> Policy:
    """A fresh policy by name for the FGD protocol; FGD and FGD+ get the pod list's shape distribution.

    FGD-Pack gets the pod list's distribution on every resource at its own threshold (built from
    ``workload.pod_counts``; without a workload it builds its own from the instance at reset).
    Other names are :func:`get_policy`'s.

    Args:
        name: a policy name (e.g. ``fgd``, ``fgd-plus``, ``gpu-bestfit``).
        dist: the pod list's shape distribution (``Workload.dist``).
        workload: the workload the policy replays (see :mod:`packing.gpu.fgd_protocol`).
    """
    pol = get_policy(name)
    if isinstance(pol, g.FGDPack):
        shapes = None
        if workload is not None and workload.pod_counts is not None:
            shapes = shape_distribution(workload.instance, workload.pod_counts, threshold=pol.threshold)
        return g.FGDPack(lam=pol.lam, threshold=pol.threshold, shapes=shapes)
    if isinstance(pol, g.FGDPlus):
        pol = g.FGDPlus(shapes=dist, weights=pol.weights.tolist())
    elif isinstance(pol, g.FGD):
        pol = g.FGD(shapes=dist)
    return pol


def _known(spec: str) -> bool:
    return spec in POLICIES or spec in SHIPPED or Path(spec).suffix.lower() in _LOADERS


def policy_label(spec: str) -> str:
    """The name a table gives a policy spec: a registry or shipped name as is, a file by its stem."""
    return spec if spec in POLICIES or spec in SHIPPED else Path(spec).stem


def unique_labels(labels: list[str], specs: list[str], option: str = "--policies") -> None:
    """Check that no two policies of one table share a label (``option`` names the command-line option).

    Raises:
        InputError: naming both specs (name them apart with ``--policies NAME=SPEC``).
    """
    seen: dict[str, str] = {}
    for label, spec in zip(labels, specs, strict=True):
        if label in seen:
            raise input_error(option, f"{seen[label]}, {spec}",
                              f"two policies are both named {label!r}; name them apart with "
                              f"NAME=SPEC, e.g. {label}-a={seen[label]},{label}-b={spec}")
        seen[label] = spec


def parse_named_policies(text: str, option: str = "--policies") -> tuple[list[str], list[str]]:
    """Split ``"ff,tuned=out/swarm.json,b.json"`` into row labels and specs.

    An entry is a spec (a registry name, a shipped policy or a policy file, labelled by
    :func:`policy_label`) or ``NAME=SPEC`` (labelled ``NAME``; an existing file whose name holds
    ``=`` is a spec). Labels are unique within the list: two policy files with the same stem are
    an error naming both, to be named apart with ``NAME=SPEC``. Errors name ``option``.

    Returns:
        ``(labels, specs)``, in the order given.

    Raises:
        InputError: an unknown policy, an empty list or name, or two entries with the same label.
    """
    labels: list[str] = []
    specs: list[str] = []
    problems: list[str] = []
    for entry in (e.strip() for e in text.split(",")):
        if not entry:
            continue
        label, spec = None, entry
        if "=" in entry and not (entry in POLICIES or entry in SHIPPED or Path(entry).is_file()):
            label, spec = (x.strip() for x in entry.split("=", 1))
            if not label:
                raise input_error(option, entry, "empty name before '='")
        if not _known(spec):
            problems.append(spec)
        labels.append(label if label is not None else policy_label(spec))
        specs.append(spec)
    if problems:
        raise input_error(option, ",".join(problems),
                          f"unknown policy; known: {', '.join(POLICIES)}")
    if not specs:
        raise input_error(option, "", "no policy named")
    unique_labels(labels, specs, option)
    return labels, specs


def parse_policy_list(text: str) -> list[str]:
    """Split ``"ff,bf, wf"`` into specs (``NAME=SPEC`` gives SPEC; see :func:`parse_named_policies`)."""
    return parse_named_policies(text)[1]


__all__ = ["DEFAULT_COMPARE", "POLICIES", "SHIPPED", "default_policies", "get_policy", "gpu_policy",
           "parse_named_policies", "parse_policy_list", "policy_label", "unique_labels",
           "register_loader", "shipped_path"]
