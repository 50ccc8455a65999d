"""Learned agents (the only code that imports torch): :mod:`policies.agents.eade` (EADE-DDPG).

Importing this package does not import torch; the agent modules do.
"""
