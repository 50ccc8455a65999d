"""Rewards of :class:`~packing.env.placement_env.PlacementEnv`: functions of (stats before, after, outcome).

A reward (the :class:`Reward` protocol) first *measures* the engine into a small :class:`StepStats`
(counters the engine keeps anyway, plus one utilisation number when the reward needs it), once before
the step and once after it; then ``reward(before, after, outcome)`` is plain arithmetic. A step covers
the agent's action and everything the engine does before the next decision: departures, retries of
waiting requests, and decisions it resolves itself (a container that fits nowhere is rejected, or
delayed with ``wait_when_full``).

Common terms (every reward has them):

* ``- reject_penalty`` per container refused during the step: rejected (by the agent, by an invalid
  action or automatically), and, at the last step, per container still waiting when the episode ends
  (it is never placed; without this an agent could wait forever for free);
* ``- wait_penalty`` when the agent's action was WAIT (default 0).

Rewards:

* :class:`HostsOpened` — ``-(hosts in use after - before)`` (a departure that empties a host gives +1).
  The episode return is ``-(hosts at the end - hosts in the snapshot)`` minus the penalties.
* :class:`Utilisation` — ``scale * (u_after - u_before)`` where ``u`` is either the mean over metric
  resources of the Sigma allocation rate (allocated / capacity of the hosts in use;
  :meth:`packing.sim.engine.Engine.allocation`, ``kind="sigma"``) or the mean over clusters of the
  EADE-DDPG cluster utilisation ``U_n`` (:func:`packing.env.layout.cluster_utilisation`,
  ``kind="cluster"``). It telescopes: the return is ``scale * (u_end - u_start)`` minus penalties.
  Opening a host lowers the Sigma rate, filling an open one raises it.
* :class:`Deployed` — ``+1`` per container placed by the step.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol, runtime_checkable

from packing.env.layout import EnvLayout, cluster_utilisation
from packing.sim.engine import DELAYED, Engine


class StepStats(NamedTuple):
    """Counters of the engine at one moment (see :func:`measure`).

    Attributes:
        hosts_used: hosts running containers.
        placed: containers placed so far in the episode (still alive or departed).
        refused: containers rejected so far, plus those still waiting once the episode has ended.
        waiting: requests waiting for a departure.
        utilisation: the reward's utilisation number (0 when it needs none).
    """

    hosts_used: int
    placed: int
    refused: int
    waiting: int
    utilisation: float = 0.0


class Outcome(NamedTuple):
    """What the agent's action did.

    Attributes:
        action: the engine action applied (a host, ``WAIT`` or ``REJECT``).
        result: :data:`~packing.sim.engine.PLACED`, :data:`~packing.sim.engine.DELAYED` or
            :data:`~packing.sim.engine.REJECTED`.
        invalid: the agent's action named no feasible host (applied as a rejection).
    """

    action: int
    result: int
    invalid: bool


def measure(engine: Engine, utilisation: float = 0.0) -> StepStats:
    """The :class:`StepStats` of ``engine`` now (``utilisation`` is passed through)."""
    waiting = len(engine.waiting)
    refused = len(engine.rejected) + (waiting if engine.done else 0)
    return StepStats(engine.hosts_used, engine.alive() + len(engine.departed), refused, waiting,
                     utilisation)


@runtime_checkable
class Reward(Protocol):
    """A reward: measure the engine, then score a step from the two measures."""

    reject_penalty: float

    def measure(self, layout: EnvLayout, engine: Engine) -> StepStats:
        """The stats this reward needs, now."""
        ...

    def __call__(self, before: StepStats, after: StepStats, outcome: Outcome) -> float:
        """The reward of the step from ``before`` to ``after``."""
        ...


class _Penalties:
    """The common terms (see the module docstring)."""

    def __init__(self, reject_penalty: float = 1.0, wait_penalty: float = 0.0) -> None:
        self.reject_penalty = float(reject_penalty)
        self.wait_penalty = float(wait_penalty)

    def measure(self, layout: EnvLayout, engine: Engine) -> StepStats:
        """Counters only (no utilisation)."""
        return measure(engine)

    def penalties(self, before: StepStats, after: StepStats, outcome: Outcome) -> float:
        """``reject_penalty * refused + wait_penalty * [agent waited]`` (a cost, >= 0 for >= 0 weights)."""
        waited = self.wait_penalty if outcome.result == DELAYED and not outcome.invalid else 0.0
        return self.reject_penalty * (after.refused - before.refused) + waited

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({args})"


class HostsOpened(_Penalties):
    """Minus the hosts opened by the step, minus the penalties (the env's default reward).

    Args:
        reject_penalty: cost of one refused container, in hosts.
        wait_penalty: cost of one WAIT action.
    """

    def __call__(self, before: StepStats, after: StepStats, outcome: Outcome) -> float:
        """``-(after.hosts_used - before.hosts_used) - penalties``."""
        return float(-(after.hosts_used - before.hosts_used) - self.penalties(before, after, outcome))


class Deployed(_Penalties):
    """Plus one per container placed by the step, minus the penalties.

    Args:
        reject_penalty: cost of one refused container.
        wait_penalty: cost of one WAIT action.
    """

    def __call__(self, before: StepStats, after: StepStats, outcome: Outcome) -> float:
        """``(after.placed - before.placed) - penalties``."""
        return float(after.placed - before.placed - self.penalties(before, after, outcome))


class Utilisation(_Penalties):
    """The change of a utilisation rate, scaled, minus the penalties.

    Args:
        kind: ``"sigma"`` (mean Sigma allocation rate over metric resources) or ``"cluster"`` (mean
            EADE-DDPG ``U_n`` over clusters); see the module docstring.
        scale: multiplies the change (rates are in ``[0, 1]``, so one step changes them a little).
        reject_penalty: cost of one refused container.
        wait_penalty: cost of one WAIT action.
    """

    def __init__(self, kind: str = "sigma", *, scale: float = 1.0, reject_penalty: float = 1.0,
                 wait_penalty: float = 0.0) -> None:
        if kind not in ("sigma", "cluster"):
            raise ValueError(f"kind must be 'sigma' or 'cluster', got {kind!r}")
        super().__init__(reject_penalty, wait_penalty)
        self.kind = kind
        self.scale = float(scale)

    def measure(self, layout: EnvLayout, engine: Engine) -> StepStats:
        """Counters and the utilisation rate now."""
        if self.kind == "sigma":
            alloc = engine.allocation()
            u = float(alloc.mean()) if len(alloc) else 0.0
        else:
            un = cluster_utilisation(layout, engine)
            u = float(un.mean()) if len(un) else 0.0
        return measure(engine, u)

    def __call__(self, before: StepStats, after: StepStats, outcome: Outcome) -> float:
        """``scale * (after.utilisation - before.utilisation) - penalties``."""
        return float(self.scale * (after.utilisation - before.utilisation)
                     - self.penalties(before, after, outcome))


__all__ = ["Deployed", "HostsOpened", "Outcome", "Reward", "StepStats", "Utilisation", "measure"]
