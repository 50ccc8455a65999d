"""Containers a request stream does not cover: find them, and refuse, drop or add them.

With a request stream only requested containers arrive, while the offline solvers place every
container of every app; :func:`cover_requests` makes the two problems the same (or refuses the
instance with one problem per app), before a comparison of solvers and policies.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal

from packing.errors import InputError, Problem
from packing.model.instance import UNPLACED, Instance, Placement, Request

UncoveredMode = Literal["error", "drop", "arrive"]
"""What to do with containers the request stream does not cover (see :func:`cover_requests`)."""

UNCOVERED_MODES: tuple[str, ...] = ("error", "drop", "arrive")
"""The values of ``--uncovered``."""


@dataclass(frozen=True)
class Uncovered:
    """An app whose containers are not all covered by the snapshot and the request stream.

    Attributes:
        app: the app's name.
        index: the app's index in ``instance.apps``.
        count: the app's container count.
        covered: containers in the snapshot plus containers requested (at most ``count``).
    """

    app: str
    index: int
    count: int
    covered: int

    @property
    def missing(self) -> int:
        """Containers that would never arrive."""
        return self.count - self.covered


def uncovered_containers(inst: Instance) -> list[Uncovered]:
    """Apps with containers that neither the snapshot holds nor the request stream requests.

    With a request stream, only requested containers arrive (and the snapshot's are already
    placed); the offline solvers place every container of every app. An app is covered when its
    snapshot containers plus the containers of its requests (summed over the stream, departures
    or not) reach its count. An instance without requests is always covered (every container not
    in the snapshot arrives).

    Args:
        inst: the instance.

    Returns:
        One :class:`Uncovered` per app that is not covered, in app order (empty: all covered).
    """
    if not inst.requests:
        return []
    requested = [0] * inst.n_apps
    idx = inst.app_index
    for q in inst.requests:
        if q.app in idx:
            requested[idx[q.app]] += q.count
    out = []
    for i, app in enumerate(inst.apps):
        placed = 0
        if inst.initial is not None:
            placed = sum(1 for h in inst.initial.hosts.get(app.name, ())[:app.count] if h != UNPLACED)
        covered = min(app.count, placed + requested[i])
        if covered < app.count:
            out.append(Uncovered(app.name, i, app.count, covered))
    return out


def cover_requests(inst: Instance, mode: str = "error", option: str = "--uncovered"
                   ) -> tuple[Instance, list[Uncovered]]:
    """Refuse, drop or add the containers the request stream does not cover.

    Args:
        inst: the instance (after any snapshot repair).
        mode: ``"error"`` (refuse the instance), ``"drop"`` (a copy whose apps count only the
            covered containers: solved and simulated without the others; the snapshot keeps
            every placed container) or ``"arrive"`` (a copy whose uncovered containers arrive
            first, at the stream's first time, before every request).
        option: the option that chooses the mode, named in the error message.

    Returns:
        ``(instance, uncovered)``: ``instance`` itself when every container is covered, else the
        changed copy (``meta["uncovered"]`` records the mode and the number of containers); and
        the apps that were not covered.

    Raises:
        InputError: with ``mode="error"``, one problem per app not covered, naming the instance
            (source), ``requests`` (field), the app and the numbers; or an unknown mode.
    """
    if mode not in UNCOVERED_MODES:
        raise InputError([Problem("<options>", option, f"unknown value {mode!r}; use "
                                  f"{', '.join(UNCOVERED_MODES)}")])
    missing = uncovered_containers(inst)
    if not missing:
        return inst, []
    if mode == "error":
        who = ("the snapshot and the request stream cover" if inst.initial is not None
               else "the request stream covers")
        raise InputError([Problem(
            inst.name, "requests",
            f"app {u.app!r} has {u.count} containers but {who} only {u.covered}; the other "
            f"{u.missing} would never arrive, while an offline solve places all {u.count} (pass "
            f"{option} drop to leave them out, or {option} arrive to make them arrive before the "
            "stream)") for u in missing])
    total = sum(u.missing for u in missing)
    meta = {**inst.meta, "uncovered": {"mode": mode, "containers": total}}
    if mode == "arrive":
        t0 = min(q.time for q in inst.requests)
        first = tuple(Request(t0, u.app, u.missing) for u in missing)
        return inst.replace(requests=first + inst.requests, meta=meta), missing
    by_app = {u.app: u for u in missing}
    apps = tuple(dataclasses.replace(a, count=by_app[a.name].covered) if a.name in by_app else a
                 for a in inst.apps)
    initial = inst.initial
    if initial is not None:
        hosts = dict(initial.hosts)
        gpus = dict(initial.gpus)
        for u in missing:
            hs = list(hosts.get(u.app, ()))[:u.count]
            hs += [UNPLACED] * (u.count - len(hs))
            drop: set[int] = set()
            for j in range(len(hs) - 1, -1, -1):  # drop unplaced slots, last first
                if len(drop) == u.missing:
                    break
                if hs[j] == UNPLACED:
                    drop.add(j)
            hosts[u.app] = tuple(h for j, h in enumerate(hs) if j not in drop)
            if u.app in gpus:
                gs = list(gpus[u.app])[:u.count]
                gs += [()] * (u.count - len(gs))
                gpus[u.app] = tuple(g for j, g in enumerate(gs) if j not in drop)
        initial = Placement(hosts, gpus)
    return inst.replace(apps=apps, initial=initial, meta=meta), missing


def uncovered_note(mode: str, uncovered: list[Uncovered]) -> str | None:
    """The report line for :func:`cover_requests`'s result (``None`` when all were covered)."""
    if not uncovered:
        return None
    total = sum(u.missing for u in uncovered)
    apps = ", ".join(f"{u.app} {u.covered}/{u.count}" for u in uncovered[:5])
    more = f" and {len(uncovered) - 5} more apps" if len(uncovered) > 5 else ""
    what = ("they are left out (solved and simulated without them)" if mode == "drop"
            else "they arrive first, before the request stream")
    return (f"note: the request stream does not cover {total} container(s) (covered/count: "
            f"{apps}{more}); --uncovered {mode}: {what}")


__all__ = ["UNCOVERED_MODES", "Uncovered", "UncoveredMode", "cover_requests", "uncovered_containers",
           "uncovered_note"]
