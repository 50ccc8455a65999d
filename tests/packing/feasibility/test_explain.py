"""Infeasibility explanations name the app, the resource or the rule."""

from __future__ import annotations

from packing.feasibility.explain import explain_infeasibility
from packing.model.instance import App, HostType, Instance, Rule

TYPES = (HostType("small", (8.0, 16.0), 2), HostType("big", (16.0, 32.0), 1))


def inst_of(*apps: App, rules=(), excl=(), types=TYPES) -> Instance:
    return Instance("e", ("cpu", "mem"), types, tuple(apps), tuple(rules), tuple(excl))


def test_feasible_has_no_reason() -> None:
    assert explain_infeasibility(inst_of(App("a", (4.0, 4.0), 3, max_per_host=1))) == []


def test_container_fits_no_host_type() -> None:
    (r,) = explain_infeasibility(inst_of(App("a", (20.0, 1.0), 1)))
    assert "'a'" in r and "'cpu'" in r and "20" in r and "16" in r
    # no single resource: cpu fits only big, mem only small
    types = (HostType("cpuish", (16.0, 8.0), 1), HostType("memish", (8.0, 16.0), 1))
    (r,) = explain_infeasibility(inst_of(App("b", (12.0, 12.0), 1), types=types))
    assert "'b'" in r and "cpuish" in r and "memish" in r


def test_cap_zero_names_the_self_rule() -> None:
    (r,) = explain_infeasibility(inst_of(App("a", (1.0, 1.0), 2), rules=[Rule("a", "a", 0)]))
    assert "<a, a, 0>" in r


def test_cap_needs_more_hosts_than_exist() -> None:
    (r,) = explain_infeasibility(inst_of(App("a", (1.0, 1.0), 4, max_per_host=1)))
    assert "'a'" in r and "max_per_host = 1" in r and "4 hosts" in r and "3" in r


def test_exclusion_clique() -> None:
    apps = [App(n, (1.0, 1.0), 1) for n in "abcd"]
    excl = [(x, y) for i, x in enumerate("abcd") for y in "abcd"[i + 1:] if (x, y) != ("c", "d")]
    reasons = explain_infeasibility(inst_of(*apps, rules=[Rule("c", "d", 0)], excl=excl))
    assert len(reasons) == 1 and all(f"'{n}'" in reasons[0] for n in "abcd")


def test_gpu_reasons() -> None:
    gt = (HostType("g", (100.0,), 2, gpus=2, gpu_capacity=(1000.0,), gpu_model="T4"),)

    def gi(app: App) -> Instance:
        return Instance("g", ("cpu",), gt, (app,), gpu_resources=("gpu_milli",))

    (r,) = explain_infeasibility(gi(App("a", (1.0,), 1, gpu_cards=4, gpu_whole=True)))
    assert "4 GPU cards" in r
    (r,) = explain_infeasibility(gi(App("a", (1.0,), 1, gpu_cards=1, gpu_per_card=(1500.0,))))
    assert "gpu_milli" in r and "1500" in r
    (r,) = explain_infeasibility(gi(App("a", (1.0,), 1, gpu_cards=1, gpu_per_card=(1.0,),
                                        gpu_models=("V100",))))
    assert "V100" in r and "T4" in r
    (r,) = explain_infeasibility(gi(App("a", (1.0,), 5, gpu_cards=1, gpu_whole=True)))
    assert "at most 2 per host" in r and "GPU cards" in r
    two = Instance("g", ("cpu",), gt, (App("a", (1.0,), 3, gpu_cards=1, gpu_whole=True),
                                       App("b", (1.0,), 2, gpu_cards=1, gpu_whole=True)),
                   gpu_resources=("gpu_milli",))
    (r,) = explain_infeasibility(two)
    assert "5 GPU cards" in r and "4 cards" in r


def test_total_demand_above_capacity() -> None:
    reasons = explain_infeasibility(inst_of(App("a", (1.0, 7.0), 10)))
    assert any("'mem'" in r and "70" in r and "64" in r for r in reasons)
