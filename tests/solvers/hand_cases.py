"""Small instances with hand-computed optima, shared by the PuLP and column-generation tests."""

from __future__ import annotations

from packing.model.instance import App, HostType, Instance, Rule

H = HostType("h", (10, 10), 10)


def cases() -> list[tuple[str, Instance, float]]:
    """(name, instance, optimum) computed by hand."""
    return [
        ("anti_affinity", Instance("aa", ("cpu", "mem"), (H,),
                                   (App("a", (1, 1), 6, max_per_host=2),)), 3),
        # a's fill one host exactly; b may not join them
        ("exclusion", Instance("ex", ("cpu", "mem"), (H,),
                               (App("a", (5, 5), 2), App("b", (1, 1), 2)),
                               exclusions=(("a", "b"),)), 2),
        # a host running a takes at most 2 of b: 5 b need a second host
        ("rule", Instance("ru", ("cpu", "mem"), (H,),
                          (App("a", (1, 1), 1), App("b", (1, 1), 5)),
                          rules=(Rule("a", "b", 2),)), 2),
        # (6,3) and (3,6): each host holds at most one of each: 10 hosts, volume says 9
        ("two_resources", Instance("tr", ("cpu", "mem"), (HostType("h", (10, 10), 12),),
                                   (App("a", (6, 3), 10), App("b", (3, 6), 10))), 10),
        # small hosts hold one container; only 2 of them: big(a, a) + small(b) = 3 + 1
        ("cost", Instance("co", ("cpu", "mem"),
                          (HostType("big", (10, 10), 3, cost=3.0),
                           HostType("small", (5, 5), 2, cost=1.0)),
                          (App("a", (5, 5), 2), App("b", (4, 4), 1))), 4.0),
        # shares of 600 need a card each, 400s pair with them, the whole card takes one: 2 hosts
        ("gpu", Instance("gp", ("cpu",),
                         (HostType("g", (100,), 4, gpus=2, gpu_capacity=(1000,)),),
                         (App("s", (1,), 3, gpu_cards=1, gpu_per_card=(600,)),
                          App("t", (1,), 2, gpu_cards=1, gpu_per_card=(400,)),
                          App("w", (1,), 1, gpu_cards=1, gpu_whole=True)),
                         gpu_resources=("gpu_milli",)), 2),
    ]
