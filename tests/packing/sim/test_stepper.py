"""The one piece that applies a decision (``Stepper``), shared by ``drive`` and ``PlacementEnv``."""

from __future__ import annotations

import pytest

from packing.env.placement_env import PlacementEnv
from packing.errors import PolicyError
from packing.model.instance import App, HostType, Instance, Request
from packing.sim.engine import PLACED, REJECT, REJECTED, Engine
from packing.sim.simulator import Step, Stepper, simulate
from policies.heuristics import BestFit, FirstFit


@pytest.fixture
def inst() -> Instance:
    """Two hosts of 10; ``y`` (11) fits nowhere; the first ``x`` leaves at t=1."""
    return Instance("q", ("cpu",), (HostType("h", (10.0,), 2),),
                    (App("x", (10.0,), 3), App("y", (11.0,), 1)),
                    requests=(Request(0, "x", end=1), Request(0, "y"), Request(0, "x"), Request(2, "x")))


def test_stepper_applies_one_decision_and_counts_the_engine_rejections(inst: Instance) -> None:
    eng = Engine(inst, record=False)
    eng.reset()
    st = Stepper(eng, 4, name="mine")
    obs, mask = st.observe()
    assert st.observe()[0] is obs and mask.tolist() == [True, True]  # one observation per decision
    step = st.apply(0)
    # x placed on host 0; y (next) fits nowhere and is rejected by the engine, without a decision
    assert (step.episode, step.action, step.outcome, step.auto_rejected) == (4, 0, PLACED, 1)
    assert step.decision.app == 0 and step.mask is mask and step.engine is eng
    assert st.observe()[1].tolist() == [False, True]  # a new decision, a new mask
    with pytest.raises(PolicyError, match="^policy 'mine': host 0"):
        st.apply(0)  # host 0 is full: the mask forbids it
    step = st.apply(REJECT)
    assert (step.outcome, step.auto_rejected, step.cards) == (REJECTED, 0, ())
    while not st.done:
        st.apply(int(st.observe()[1].argmax()))
    with pytest.raises(RuntimeError, match="ended"):
        st.apply(0)


def test_env_and_simulate_take_the_same_steps(inst: Instance) -> None:
    for policy in (FirstFit(), BestFit()):
        seen: list[Step] = []
        res = simulate(inst, policy, compiled=False, on_step=seen.append)
        env = PlacementEnv(inst)
        env.reset(seed=0)
        policy.reset(inst, 0)
        autos = []
        done = False
        while not done:
            _, _, done, _, info = env.step_engine(policy.act(env.observation(), env.host_mask()))
            autos.append(info["auto_rejected"])
        assert autos == [s.auto_rejected for s in seen] and sum(autos) == 1
        assert env.placement() == res.placement
        assert (info["hosts"], info["deployed"], info["rejected"]) == (res.hosts, 2, res.n_rejected)
        assert info["deployed"] == res.summary()["deployed"] and info["placed"] == 3  # one departed
        assert "hosts_used" not in info  # the names of docs/outputs.md
        assert info["placed"] == info["deployed"] + info["departed"]  # no snapshot here
