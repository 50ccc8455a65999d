"""The engine as a Gymnasium environment for learned policies, and its pluggable parts.

Lives here: the environment (:mod:`~packing.env.placement_env`), what its parts share
(:mod:`~packing.env.layout`), observation encoders, action adapters and rewards
(:mod:`~packing.env.encoders`, :mod:`~packing.env.actions`, :mod:`~packing.env.rewards`) and the
EADE-DDPG MDP as one configuration of them (:mod:`~packing.env.eade`). Nothing here imports torch.

May import: packing.errors, packing.model, packing.feasibility, packing.sim.
"""
