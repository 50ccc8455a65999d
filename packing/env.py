"""The simulator as a Gymnasium environment, for learned policies (RL agents).

One episode replays the arrivals of an instance (see :mod:`packing.simulator` for arrivals, orders and
departures). Each step places the current container on the host given by the action; the feasible hosts
are given as ``info["action_mask"]`` (shape ``(n_hosts,)`` bool, ``np.int8`` for Gymnasium's
``Discrete.sample(mask=...)``). Feasibility is :meth:`packing.feasibility.ClusterState.mask`, the same
logic as the checker's.

* An action outside the mask is not applied: the container is rejected and ``info["invalid_action"]`` is
  True (so random agents and ``check_env`` never crash).
* A container that fits nowhere is rejected automatically, without a step; ``info["auto_rejected"]``
  counts them. Rejections cost ``reject_penalty`` each.
* Reward: minus the hosts opened by the step (``-(hosts_after - hosts_before)``; a departure that empties
  a host gives +1) minus the rejection penalties. The episode return is therefore ``-(final hosts) -
  penalty * rejections`` plus hosts already open in the snapshot.

Observation (a ``Dict`` space): ``load`` used/capacity per host and resource ``(n_hosts, n_resources)``,
``open`` hosts in use ``(n_hosts,)``, ``demand`` the container's demand over the largest capacity per
resource ``(n_resources,)``, ``app`` its app index, ``pending`` containers per app still to arrive
``(n_apps,)``.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from packing.engine import REJECT, Engine, arrivals
from packing.model import Instance, Placement


class PlacementEnv(gym.Env[dict[str, Any], int]):
    """Place the containers of ``instance`` one arrival at a time.

    Args:
        instance: the instance (snapshot and request stream included).
        shuffle: draw a new arrival order at every reset (whole requests shuffled, from the env's seeded
            ``np_random``); otherwise the instance's own order.
        reject_penalty: cost of one rejected container, in hosts.
    """

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self, instance: Instance, *, shuffle: bool = False, reject_penalty: float = 1.0) -> None:
        self.instance = instance
        self.shuffle = shuffle
        self.reject_penalty = reject_penalty
        self.arrivals_ = arrivals(instance)
        n_h, n_r, n_a = instance.n_hosts, instance.n_resources, instance.n_apps
        cmax = instance.host_capacity.max(axis=0) if n_h else np.ones(n_r)
        self._scale = np.where(cmax > 0, cmax, 1.0)
        d_hi = float(max(1.0, (instance.demand / self._scale).max(initial=0.0)))
        p_hi = float(max(1, len(self.arrivals_.app)))
        self.observation_space = spaces.Dict({
            "load": spaces.Box(0.0, 1.0 + 1e-6, (n_h, n_r), dtype=np.float32),
            "open": spaces.MultiBinary(n_h),
            "demand": spaces.Box(0.0, d_hi, (n_r,), dtype=np.float32),
            "app": spaces.Discrete(max(1, n_a)),
            "pending": spaces.Box(0.0, p_hi, (max(1, n_a),), dtype=np.float32),
        })
        self.action_space = spaces.Discrete(max(1, n_h))  # type: ignore[assignment]

    # --------------------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Start a new episode from the snapshot; ``options={"order": array}`` fixes the order."""
        super().reset(seed=seed)
        from packing.simulator import sample_orders

        inst = self.instance
        n = len(self.arrivals_.app)
        if options and options.get("order") is not None:
            order = np.asarray(options["order"], dtype=np.int64)
            if order.shape != (n,) or not np.array_equal(np.sort(order), np.arange(n)):
                raise ValueError(f"options['order'] must be a permutation of {n} arrivals")
        elif self.shuffle:
            s = int(self.np_random.integers(2**31))
            order = sample_orders(inst, 2, seed=s)[1]
        else:
            order = np.arange(n, dtype=np.int64)
        self.engine_ = Engine(inst, record=False)
        self.engine_.reset(order)
        self.order_ = order
        self.rejected_ = len(self.engine_.rejected)
        return self._obs(), self._info(auto_rejected=self.rejected_)

    def step(self, action: int) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        """Place the current container on host ``action``."""
        eng = self.engine_
        if eng.done:
            raise RuntimeError("step() called after the episode ended; call reset()")
        before = eng.hosts_used
        rejected_before = len(eng.rejected)
        h = int(action)
        invalid = not (0 <= h < self.instance.n_hosts and eng.mask()[h])
        eng.apply(REJECT if invalid else h)
        auto = len(eng.rejected) - rejected_before - (1 if invalid else 0)
        self.rejected_ = len(eng.rejected)
        reward = -(len(eng.rejected) - rejected_before) * self.reject_penalty - (eng.hosts_used - before)
        return self._obs(), float(reward), eng.done, False, self._info(invalid_action=invalid,
                                                                       auto_rejected=auto)

    # --------------------------------------------------------------------------------------
    def placement(self) -> Placement:
        """Containers alive now, as a :class:`Placement` (check it with :func:`packing.checker.check`)."""
        return self.engine_.placement()

    @property
    def hosts_used(self) -> int:
        """Hosts in use now."""
        return self.engine_.hosts_used

    def _obs(self) -> dict[str, Any]:
        inst = self.instance
        eng = self.engine_
        st = eng.state
        cap = np.where(st.capacity > 0, st.capacity, 1.0)
        d = eng.decision
        if d is not None:
            app = d.app
            demand = inst.demand[app] / self._scale
        else:
            app, demand = 0, np.zeros(inst.n_resources)
        return {
            "load": np.clip(st.used / cap, 0.0, 1.0).astype(np.float32),
            "open": (st.n_on > 0).astype(np.int8),
            "demand": demand.astype(np.float32),
            "app": app,
            "pending": np.maximum(eng.pending, 0).astype(np.float32).reshape(-1)[: max(1, inst.n_apps)],
        }

    def action_mask(self) -> np.ndarray:
        """Feasible hosts for the current container, shape ``(n_hosts,)`` int8 (all 0 at the end)."""
        return self.engine_.mask().astype(np.int8)

    def _info(self, **extra: Any) -> dict[str, Any]:
        return {"action_mask": self.action_mask(), "hosts_used": self.hosts_used,
                "rejected": self.rejected_, **extra}


__all__ = ["PlacementEnv"]
