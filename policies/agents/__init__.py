"""Learned agents (the only code that imports torch): :mod:`policies.agents.eade` (EADE-DDPG).

Each agent has a policy module (``eade``, ``eade_masked``, ``gcn_placement``, ``jobfusion``, ``sb3``:
network, features, acting, file checks) and a training module (``<agent>_train``); loading a model
file (:mod:`policies.agents.files`) imports only the policy module. Importing this package does not
import torch; the agent modules do.
"""
