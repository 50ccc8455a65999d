"""The engine as a pluggable Gymnasium environment, for learned policies (RL agents).

One episode replays the arrivals of an instance on the one stepwise engine
(:class:`packing.sim.engine.Engine`: arrivals, departures, waiting requests; see :mod:`packing.sim.engine`).
Each env step answers one engine decision. Three parts are chosen by the caller:

* the **observation encoder** (:mod:`packing.env.encoders`): :class:`DictEncoder` (default),
  :class:`FlatEncoder`, :class:`GraphEncoder`;
* the **action adapter** (:mod:`packing.env.actions`): :class:`DiscreteHost` (default),
  :class:`ClusterHost`, :class:`ContinuousCluster`; it gives the action space, the action mask
  (``info["action_mask"]``, ``int8``) and maps an action to a host (and GPU cards), WAIT or a
  rejection;
* the **reward** (:mod:`packing.env.rewards`): :class:`HostsOpened` (default), :class:`Utilisation`,
  :class:`Deployed`.

Semantics

* An action that names no feasible host is not applied: the container is rejected and
  ``info["invalid_action"]`` is True.
* A container that fits nowhere is resolved by the engine without a step: rejected
  (``info["auto_rejected"]`` counts them), or delayed with ``wait_when_full``.
* WAIT (``DiscreteHost(wait=True)``, ``ContinuousCluster(wait=True)``) delays the request until the
  next departure, when it is retried.
* ``reset(options={"order": perm, "arrange": policy})``: a fixed arrival order (a permutation of the
  arrivals) and/or an offline policy (:class:`packing.sim.policy.Arranging`, e.g. FFD) that reorders the
  arrivals first, exactly as :func:`packing.sim.simulator.simulate` does. With ``shuffle=True`` and no
  order, whole requests are shuffled from the env's seeded generator.
* ``env.engine`` is the engine, ``env.observation()`` the :class:`packing.sim.policy.Observation` of the
  current decision and ``env.host_mask()`` its host mask, so any :class:`packing.sim.policy.Policy` can act
  through the env (``env.action_of(policy.act(env.observation(), env.host_mask()))``) and makes the same
  decisions as in :func:`packing.sim.simulator.simulate` (tested).

Each step goes through :class:`packing.sim.simulator.Stepper` (``env.stepper``), the piece
:func:`packing.sim.simulator.drive` loops over: one code path applies a decision, in the env and in the
simulator.

``info`` keys, named as in ``docs/outputs.md``: ``action_mask`` (the adapter's), ``hosts`` (in use
now), ``deployed`` (containers on a host now, the snapshot's included: at the end of an episode the
``deployed`` of :func:`packing.sim.simulator.simulate` and
:func:`packing.feasibility.metrics.compute_metrics`),
``placed`` (containers the episode placed so far, departed ones included, the snapshot's not),
``rejected`` (so far), ``waiting`` (now), ``departed`` (so far), ``auto_rejected`` (rejected by the
engine during the step, without the agent), ``invalid_action``. Without a snapshot and without
departures ``deployed == placed``.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from packing.env.actions import ActionAdapter, ClusterHost, ContinuousCluster, DiscreteHost, EngineAction
from packing.env.encoders import DictEncoder, FlatEncoder, GraphEncoder, ObservationEncoder
from packing.env.layout import EnvLayout
from packing.env.rewards import Deployed, HostsOpened, Outcome, Reward, Utilisation
from packing.model.instance import Instance, Placement
from packing.sim.autoscale import Autoscale
from packing.sim.engine import REJECT, Engine
from packing.sim.policy import Arranging, Observation
from packing.sim.simulator import Stepper, sample_orders


class PlacementEnv(gym.Env[Any, Any]):
    """Place the containers of ``instance`` one decision at a time.

    Args:
        instance: the instance (snapshot and request stream included).
        encoder: the observation encoder (default :class:`DictEncoder`).
        actions: the action adapter (default :class:`DiscreteHost`).
        reward: the reward (default ``HostsOpened(reject_penalty)``).
        shuffle: draw a new arrival order at every reset (whole requests shuffled, from the env's
            seeded ``np_random``); otherwise the instance's own order.
        wait_when_full: a container that fits nowhere waits for a departure instead of being rejected.
        reject_penalty: cost of one rejected container, for the default reward only (a reward passed
            in carries its own).
        record: keep the engine's per-decision trajectory (``env.engine.trajectory()``).
        autoscale: step an autoscaled pool (:mod:`packing.sim.autoscale`: the action mask holds
            the nodes of the pool, or the node a scale-up opens).
    """

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self, instance: Instance, *, encoder: ObservationEncoder | None = None,
                 actions: ActionAdapter | None = None, reward: Reward | None = None,
                 shuffle: bool = False, wait_when_full: bool = False, reject_penalty: float = 1.0,
                 record: bool = False, autoscale: Autoscale | None = None) -> None:
        self.instance = instance
        self.shuffle = shuffle
        self.wait_when_full = wait_when_full
        self.encoder: ObservationEncoder = encoder if encoder is not None else DictEncoder()
        self.actions: ActionAdapter = actions if actions is not None else DiscreteHost()
        self.reward: Reward = reward if reward is not None else HostsOpened(reject_penalty)
        self.reject_penalty = float(self.reward.reject_penalty)
        self.layout = EnvLayout.of(instance)
        self.engine = Engine(instance, wait_when_full=wait_when_full, record=record, autoscale=autoscale)
        self.stepper = Stepper(self.engine)
        self.arrivals_ = self.engine.arrivals
        self.observation_space = self.encoder.space(self.layout)
        self.action_space = self.actions.space(self.layout)
        self.rejected_ = 0
        self._snapshot = instance.initial.n_placed if instance.initial is not None else 0

    # --------------------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[Any, dict[str, Any]]:
        """Start a new episode from the snapshot.

        Args:
            seed: seeds the env's generator (shuffles, the adapter's inner policy).
            options: ``"order"``: a permutation of the arrivals, shape ``(n_arrivals,)``;
                ``"arrange"``: an :class:`packing.sim.policy.Arranging` policy applied to that order.

        Raises:
            ValueError: ``order`` is not a permutation, or ``arrange`` has no ``arrange`` method.
        """
        super().reset(seed=seed)
        inst = self.instance
        n = len(self.arrivals_.app)
        options = options or {}
        if options.get("order") is not None:
            order = np.asarray(options["order"], dtype=np.int64)
            if order.shape != (n,) or not np.array_equal(np.sort(order), np.arange(n)):
                raise ValueError(f"options['order'] must be a permutation of {n} arrivals")
        elif self.shuffle:
            s = int(self.np_random.integers(2**31))
            order = sample_orders(inst, 2, seed=s)[1]
        else:
            order = np.arange(n, dtype=np.int64)
        arrange = options.get("arrange")
        if arrange is not None and not isinstance(arrange, Arranging):
            raise ValueError("options['arrange'] must have an arrange(instance, apps) method")
        self.actions.reset(self.layout, int(self.np_random.integers(2**31)))
        self.engine.reset(order, arrange=arrange)
        self.order_ = self.engine.order
        self.rejected_ = len(self.engine.rejected)
        self._stats = self.reward.measure(self.layout, self.engine)
        return self._obs(), self._info(auto_rejected=self.rejected_, invalid_action=False)

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """Apply ``action`` (through the adapter) to the current decision.

        Raises:
            RuntimeError: the episode has ended (call :meth:`reset`).
        """
        eng = self.engine
        if eng.done:
            raise RuntimeError("step() called after the episode ended; call reset()")
        act = self.actions.decode(self.layout, eng, action)
        return self._apply(act)

    def _apply(self, act: EngineAction) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        eng = self.engine
        before = self._stats
        step = self.stepper.apply(REJECT if act.invalid else act.host, act.cards)
        self.rejected_ = len(eng.rejected)
        after = self.reward.measure(self.layout, eng)
        self._stats = after
        r = self.reward(before, after, Outcome(act.host, step.outcome, act.invalid))
        return self._obs(), float(r), eng.done, False, self._info(invalid_action=act.invalid,
                                                                  auto_rejected=step.auto_rejected)

    def step_engine(self, host: int, cards: tuple[int, ...] | None = None
                    ) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """Like :meth:`step`, with an engine action (a host, WAIT or REJECT) instead of the adapter's.

        A host outside the mask is invalid (a rejection), as in :meth:`step`.
        """
        eng = self.engine
        if eng.done:
            raise RuntimeError("step() called after the episode ended; call reset()")
        h = int(host)
        if h >= 0 and not (h < self.instance.n_hosts and eng.mask()[h]):
            return self._apply(EngineAction(REJECT, None, True))
        return self._apply(EngineAction(h, cards if h >= 0 else None, False))

    # --------------------------------------------------------------------------------------
    def observation(self) -> Observation:
        """The :class:`packing.sim.policy.Observation` of the current decision (for policies)."""
        return self.engine.observation()

    def host_mask(self) -> np.ndarray:
        """Hosts that can take the current container, shape ``(n_hosts,)`` bool."""
        return self.engine.mask()

    def action_mask(self) -> np.ndarray:
        """The adapter's action mask for the current decision (``int8``; all 0 at the end)."""
        return self.actions.action_mask(self.layout, self.engine)

    def action_of(self, host: int) -> Any:
        """The adapter's action for an engine choice (a host or WAIT), for policies acting through the env.

        Only :class:`DiscreteHost` (WAIT needs ``wait=True``) and :class:`ClusterHost` (hosts only)
        can name every host.

        Raises:
            TypeError: the adapter cannot name hosts (:class:`ContinuousCluster`).
            ValueError: WAIT without a WAIT action.
        """
        if isinstance(self.actions, DiscreteHost | ClusterHost):
            return self.actions.action_of(self.layout, int(host))
        raise TypeError(f"{type(self.actions).__name__} actions do not name hosts; use step_engine()")

    def sample_action(self) -> Any:
        """A uniformly random valid action, drawn from ``action_space.np_random`` (``action_space.seed``)."""
        return self.actions.sample(self.layout, self.engine, self.action_space.np_random)

    def placement(self) -> Placement:
        """Containers alive now, as a :class:`Placement` (for :func:`~packing.feasibility.checker.check`)."""
        return self.engine.placement()

    @property
    def hosts_used(self) -> int:
        """Hosts in use now."""
        return self.engine.hosts_used

    @property
    def engine_(self) -> Engine:
        """The engine (old name of :attr:`engine`)."""
        return self.engine

    def _obs(self) -> Any:
        return self.encoder.encode(self.layout, self.engine)

    def _info(self, **extra: Any) -> dict[str, Any]:
        eng = self.engine
        alive, departed = eng.alive(), len(eng.departed)
        return {"action_mask": self.action_mask(), "hosts": self.hosts_used,
                "deployed": self._snapshot + alive, "placed": alive + departed, "rejected": self.rejected_,
                "waiting": len(eng.waiting), "departed": departed, **extra}


__all__ = ["ClusterHost", "ContinuousCluster", "Deployed", "DictEncoder", "DiscreteHost", "FlatEncoder",
           "GraphEncoder", "HostsOpened", "PlacementEnv", "Utilisation"]
