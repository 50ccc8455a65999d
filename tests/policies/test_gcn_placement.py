"""The GCN encoder and the GCN placement policy (tiny nets, a tiny instance)."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch_geometric")

from packing.env.placement_env import PlacementEnv  # noqa: E402
from packing.errors import InputError  # noqa: E402
from packing.feasibility.checker import check  # noqa: E402
from packing.model.instance import App, HostType, Instance, Request  # noqa: E402
from packing.sim.simulator import sample_orders, simulate  # noqa: E402
from policies.agents import gcn_placement as gp  # noqa: E402
from policies.agents import gcn_placement_train as gpt  # noqa: E402
from policies.agents.files import load_agent  # noqa: E402
from policies.agents.gcn import Graph, SumConv, collate  # noqa: E402
from policies.heuristics import BestFit  # noqa: E402
from policies.registry import get_policy  # noqa: E402


def tiny() -> Instance:
    """6 apps on 20 hosts of 16 cores: caps, an exclusion and a rule; 26 containers (at least 8 hosts)."""
    apps = (App("a", (4.0, 8.0), 6, max_per_host=2), App("b", (8.0, 16.0), 4, max_per_host=1),
            App("c", (4.0, 4.0), 6), App("d", (2.0, 8.0), 4, max_per_host=1),
            App("e", (8.0, 8.0), 3), App("f", (4.0, 16.0), 3, max_per_host=3))
    reqs = tuple(Request(float(t), a.name, a.count) for t, a in enumerate(apps))
    from packing.model.instance import Rule

    return Instance(name="tiny", resources=("cpu", "mem"),
                    host_types=(HostType("16c64g", (16.0, 64.0), 20),), apps=apps,
                    exclusions=(("a", "e"),), rules=(Rule("b", "c", 1),), requests=reqs)


def small_cfg(**kw: float) -> gp.Config:
    return gp.Config(**{"dim": 8, "batch": 4, **kw})  # type: ignore[arg-type]


# -- the encoder --------------------------------------------------------------------------------
def test_sum_conv_is_eq4_by_hand() -> None:
    torch.manual_seed(0)
    conv = SumConv(3, 2)
    h = torch.randn(4, 3)
    # edges: 1 -> 0 (relation 0, weight 2), 2 -> 0 (relation 1), 3 -> 2 (relation 0)
    ei = torch.tensor([[1, 2, 3], [0, 0, 2]])
    et = torch.tensor([0, 1, 0])
    ew = torch.tensor([2.0, 1.0, 1.0])
    out = conv(h, ei, et, ew)
    with torch.no_grad():
        f0, f1, g = conv.f[0], conv.f[1], conv.g
        agg = torch.zeros(4, 3)
        agg[0] = 2.0 * f0(h[1]) + f1(h[2])
        agg[2] = f0(h[3])
        want = g(agg) + h
    assert torch.allclose(out, want, atol=1e-6)


def test_collate_shifts_edges_and_numbers_graphs() -> None:
    g1 = Graph(torch.zeros(2, 1), torch.tensor([[0], [1]]), torch.tensor([0]), torch.ones(1),
               torch.zeros(2, dtype=torch.int64))
    g2 = Graph(torch.ones(3, 1), torch.tensor([[2, 1], [0, 0]]), torch.tensor([0, 0]), torch.ones(2),
               torch.zeros(3, dtype=torch.int64))
    u, off = collate([g1, g2])
    assert off.tolist() == [0, 2]
    assert u.edge_index.tolist() == [[0, 4, 3], [1, 2, 2]]
    assert u.batch.tolist() == [0, 0, 1, 1, 1]
    assert u.n_graphs == 2


# -- the policy ---------------------------------------------------------------------------------
def test_the_untrained_policy_is_best_fit() -> None:
    inst = tiny()
    torch.manual_seed(0)
    pol = gp.GcnPlacementPolicy(gp.PlacementNet(small_cfg()))
    for o in sample_orders(inst, 4, seed=3):
        ours = simulate(inst, pol, o).host_of
        bf = simulate(inst, BestFit(), o).host_of
        assert np.array_equal(ours, bf)


def test_swarm_weights_transferred_give_the_swarm_policy() -> None:
    from policies.swarm.policy import SwarmPolicy

    inst = tiny()
    w = np.array([-0.9, -0.2, 0.9, 0.8, 0.1, 0.6, -0.9, -0.6, -0.5, 1.0])
    torch.manual_seed(0)
    net = gp.PlacementNet(small_cfg(init_scale=40.0))
    gp.transfer_linear(net, w)
    pol = gp.GcnPlacementPolicy(net)
    for o in sample_orders(inst, 3, seed=8):
        assert np.array_equal(simulate(inst, pol, o).host_of, simulate(inst, SwarmPolicy(w), o).host_of)


def test_masked_softmax_puts_no_mass_outside_the_mask() -> None:
    logits = torch.tensor([[5.0, 1.0, 9.0, 0.0]])
    mask = torch.tensor([[True, True, False, False]])
    p = gp.masked_log_softmax(logits, mask).exp()
    assert p[0, 2] == 0 and p[0, 3] == 0
    assert torch.allclose(p.sum(), torch.tensor(1.0))
    draws = torch.multinomial(p.repeat(500, 1), 1, generator=torch.Generator().manual_seed(0))
    assert set(draws.flatten().tolist()) == {0, 1}


def test_sampled_episodes_only_pick_feasible_hosts_and_pass_the_checker() -> None:
    inst = tiny()
    torch.manual_seed(1)
    net = gp.PlacementNet(small_cfg(init_scale=0.0))  # a uniform random policy over the mask
    b = gpt.rollout(net, inst, sample_orders(inst, 2, seed=1)[1], 4, torch.Generator().manual_seed(0), 10.0)
    assert all(m[a] for m, a in zip(b.masks, b.actions, strict=True))
    pol = gp.GcnPlacementPolicy(net)
    for o in sample_orders(inst, 3, seed=2):
        res = simulate(inst, pol, o, check_result=False)
        assert check(inst, res.placement) == []


def test_simulate_and_the_env_give_the_same_placement() -> None:
    inst = tiny()
    torch.manual_seed(2)
    net = gp.PlacementNet(small_cfg(init_scale=1.0))
    with torch.no_grad():  # a non-trivial head
        for p in net.head.parameters():
            p.add_(0.3 * torch.randn_like(p))
    pol = gp.GcnPlacementPolicy(net)
    order = sample_orders(inst, 2, seed=5)[1]
    want = simulate(inst, pol, order).host_of
    env = PlacementEnv(inst)
    env.reset(options={"order": order})
    pol.reset(inst)
    done = False
    while not done:
        _, _, done, _, _ = env.step(env.action_of(pol.act(env.observation(), env.host_mask())))
    assert np.array_equal(env.placement().host_array(inst), want)
    assert not np.array_equal(want, simulate(inst, BestFit(), order).host_of)  # the head mattered


def test_short_training_is_reproducible_resumable_and_improves(tmp_path: Path) -> None:
    inst = tiny()
    cfg = small_cfg(init_scale=0.0, lr=0.03, entropy=0.0)  # starts uniformly random
    a = gpt.train([inst], episodes=32, orders=4, seed=0, cfg=cfg)
    b = gpt.train([inst], episodes=32, orders=4, seed=0, cfg=cfg)
    assert a.curve == b.curve
    for k, v in a.policy.net.state_dict().items():
        assert torch.equal(v, b.policy.net.state_dict()[k])
    # resume: 4 iterations, then 4 more from the checkpoint = 8 at once
    ck = tmp_path / "ck.pt"
    gpt.train([inst], episodes=16, orders=4, seed=0, cfg=cfg, checkpoint=ck, checkpoint_every=1)
    c = gpt.train([inst], episodes=32, orders=4, seed=0, cfg=cfg, checkpoint=ck, resume=True)
    assert c.curve == a.curve
    for k, v in a.policy.net.state_dict().items():
        assert torch.equal(v, c.policy.net.state_dict()[k])
    # better than untrained, on the same sampled episodes of held-out orders
    torch.manual_seed(0)
    untrained = gp.PlacementNet(cfg)
    held = sample_orders(inst, 2, seed=99, include_own=False)

    def cost(net: gp.PlacementNet) -> float:
        gen = torch.Generator
        return float(np.mean([gpt.rollout(net, inst, o, 8, gen().manual_seed(7), 10.0).costs.mean()
                              for o in held]))

    before, after = cost(untrained), cost(a.policy.net)
    print(f"sampled hosts: untrained {before:.2f}, trained {after:.2f}")
    assert after < before - 0.5


def test_the_model_file_round_trips_weights_only(tmp_path: Path) -> None:
    inst = tiny()
    torch.manual_seed(3)
    net = gp.PlacementNet(small_cfg(init_scale=2.0))
    with torch.no_grad():
        for p in net.head.parameters():
            p.add_(0.3 * torch.randn_like(p))
    pol = gp.GcnPlacementPolicy(net, name="g", info={"command": "x"})
    path = tmp_path / "m.pt"
    pol.save(path)
    back = get_policy(str(path))
    assert isinstance(back, gp.GcnPlacementPolicy) and back.name == "g" and back.info["command"] == "x"
    for k, v in net.state_dict().items():
        assert torch.equal(v, back.net.state_dict()[k])
    o = sample_orders(inst, 2, seed=4)[1]
    assert np.array_equal(simulate(inst, pol, o).host_of, simulate(inst, back, o).host_of)


class Boom:
    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (print, ("pwned",))


def test_a_crafted_gcn_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "evil.pt"
    torch.save({"kind": gp.KIND, "format": 1, "state_dict": Boom()}, str(path), pickle_protocol=2)
    with pytest.raises(InputError, match="not a vbp agent file"):
        load_agent(path)
    path.write_bytes(pickle.dumps({"kind": gp.KIND, "x": Boom()}))
    with pytest.raises(InputError, match="not a vbp agent file"):
        load_agent(path)
    assert "pwned" not in capsys.readouterr().out
    torch.save({"kind": gp.KIND, "format": 1, "config": {"dim": 4}}, str(path))
    with pytest.raises(InputError, match="state_dict: got None; expected a dict of tensors"):
        load_agent(path)
