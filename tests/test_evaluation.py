"""The evaluation layer: records from packing.feasibility.metrics, the same numbers on every executor."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
import types
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from packing.errors import InputError
from packing.feasibility.checker import check
from packing.feasibility.metrics import compute_metrics
from packing.io.builtin import builtin_instance
from packing.model.instance import Instance
from packing.sim.evaluation import (
    NUMBERS,
    ProcessExecutor,
    RayExecutor,
    RunOptions,
    RunTask,
    Scenario,
    SerialExecutor,
    make_executor,
    run,
    shared,
)
from packing.sim.simulator import evaluate, run_seed, sample_orders, simulate
from policies.registry import get_policy
from policies.runner import evaluate_policies, order_tasks, policy_spec, resolve_policy, run_task
from policies.swarm.policy import SwarmPolicy, named_weights


@pytest.fixture(scope="module")
def sigma() -> Instance:
    return builtin_instance("sigma")


@pytest.fixture(scope="module")
def scenario(sigma: Instance) -> Scenario:
    return Scenario(sigma, tuple(sample_orders(sigma, 3, seed=5)))


def policies(tmp: Path) -> list[Any]:
    """Specs of every kind: names (one seeded random), params, a weight vector, a policy file."""
    f = tmp / "tuned.json"
    SwarmPolicy(named_weights(best_fit=0.4, open_need=0.6), name="tuned").save(f)
    return ["ff", "random", policy_spec("k8s-rtcr", shape=[(0, 0), (100, 10)]),
            tuple(named_weights(l2=1.0, aa_slots=-0.3)), str(f)]


def serial_numbers(scenario: Scenario, specs: list[Any]) -> list[tuple[Any, ...]]:
    with SerialExecutor() as ex:
        recs = evaluate_policies(scenario, specs, seed=3, executor=ex)
    return [r.numbers() for k in sorted(recs) for r in recs[k]]


def test_a_record_holds_the_metrics_of_its_run(sigma: Instance) -> None:
    order = sample_orders(sigma, 2, seed=1)[1]
    rec = run(sigma, get_policy("bf"), order, seed=7, options=RunOptions(trajectory=True, placement=True))
    sim = simulate(sigma, get_policy("bf"), order, seed=7)
    m = compute_metrics(sigma, sim.placement)
    assert (rec.hosts, rec.cost, rec.deployed) == (m.hosts, m.cost, m.deployed)
    assert rec.allocation == m.allocation
    assert (rec.hosts_peak, rec.rejected, rec.delayed) == (sim.hosts_peak, sim.n_rejected, sim.n_delayed)
    assert rec.policy == "bf" and rec.seed == 7 and rec.seconds > 0
    assert rec.trajectory is not None and np.array_equal(rec.trajectory.host, sim.trajectory.host)
    assert check(sigma, rec.placement(sigma)) == []
    plain = run(sigma, get_policy("bf"), order, seed=7)
    assert plain == rec and plain.trajectory is None and plain.host_of is None  # equality: numbers
    with pytest.raises(ValueError, match="placement"):
        plain.placement(sigma)
    assert set(NUMBERS) <= set(rec.to_dict())


def test_records_agree_with_evaluate(sigma: Instance, scenario: Scenario) -> None:
    recs = evaluate_policies(scenario, ["random"], seed=3)[0]
    s = evaluate(get_policy("random"), sigma, scenario.orders, seed=3)
    assert [r.hosts for r in recs] == s.hosts.tolist()
    assert [r.seed for r in recs] == [run_seed(3, i) for i in range(3)]
    assert [r.order for r in recs] == [0, 1, 2]


def test_policy_specs_resolve(tmp_path: Path) -> None:
    ff, rnd, rtcr, vec, tuned = (resolve_policy(s) for s in policies(tmp_path))
    assert ff.name == "ff" and rnd.name == "random"
    assert isinstance(vec, SwarmPolicy) and isinstance(tuned, SwarmPolicy) and tuned.name == "tuned"
    assert resolve_policy({"weights": list(named_weights(best_fit=1.0)), "name": "w"}).name == "w"
    assert resolve_policy("ff") is ff  # cached per process
    for bad in ("nope", [1.0, 2.0], {"params": {}}, str(tmp_path / "missing.json"), 3.5):
        with pytest.raises(InputError):
            resolve_policy(bad)


def test_process_executor_gives_the_serial_numbers(scenario: Scenario, tmp_path: Path) -> None:
    specs = policies(tmp_path)
    want = serial_numbers(scenario, specs)
    done: list[int] = []
    with ProcessExecutor(2, chunksize=2) as ex:
        recs = evaluate_policies(scenario, specs, seed=3, executor=ex, progress=done.append)
    assert [r.numbers() for k in sorted(recs) for r in recs[k]] == want
    assert sum(done) == len(want) == 15
    assert len({n[4] for n in want}) > 1  # the runs differ, so a shuffled result would be seen


def test_a_task_error_in_a_worker_keeps_its_problems(scenario: Scenario, tmp_path: Path) -> None:
    f = tmp_path / "gone.json"
    SwarmPolicy(named_weights(best_fit=1.0)).save(f)
    with ProcessExecutor(1) as ex:
        ref = ex.share(scenario)
        f.unlink()  # the worker, not the caller, finds the file missing
        with pytest.raises(InputError) as e:
            ex.map(run_task, [RunTask(str(f), ref, 0)])
    assert e.value.problems[0].reason == "no such policy file"


def test_serial_shares_until_closed(scenario: Scenario) -> None:
    ex = SerialExecutor()
    ref = ex.share(scenario, "s")
    assert shared(ref) is scenario
    assert ex.map(run_task, [RunTask("ff", ref, 1)])[0].order == 1
    ex.close()
    with pytest.raises(KeyError, match="share it"):
        shared(ref)


def test_make_executor_checks_its_options(monkeypatch: pytest.MonkeyPatch) -> None:
    assert make_executor().name == "serial" and make_executor("process", 3).workers == 3
    for kind, workers, address, what in [("threads", None, None, "--executor"),
                                         ("process", 0, None, "--workers"),
                                         ("process", None, "host:6379", "--ray-address")]:
        with pytest.raises(InputError) as e:
            make_executor(kind, workers, address)
        assert e.value.problems[0].source == what
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "ray" else real(name, *a))
    with pytest.raises(InputError, match="Ray is not installed"):
        make_executor("ray")


class FakeRay(types.ModuleType):
    """Enough of Ray's API to check who starts and stops it, and where it connects."""

    def __init__(self, initialized: bool) -> None:
        super().__init__("ray")
        self.__spec__ = importlib.machinery.ModuleSpec("ray", None)
        self.initialized = initialized
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.store: dict[int, Any] = {}

    def is_initialized(self) -> bool:
        return self.initialized

    def init(self, **kw: Any) -> None:
        self.calls.append(("init", kw))
        self.initialized = True

    def shutdown(self) -> None:
        self.calls.append(("shutdown", {}))
        self.initialized = False

    def put(self, value: Any) -> int:
        self.store[id(value)] = value
        return id(value)

    def get(self, ref: Any) -> Any:
        return self.store[ref]

    def remote(self, fn: Any) -> Any:
        fake = self

        class Remote:
            def remote(self, *args: Any) -> int:
                return fake.put(fn(*args))
        return Remote()

    def wait(self, refs: list[Any], num_returns: int = 1) -> tuple[list[Any], list[Any]]:
        return refs[:num_returns], refs[num_returns:]

    def cluster_resources(self) -> dict[str, float]:
        return {"CPU": 3.0}


@pytest.mark.parametrize(("initialized", "env", "address", "expect"), [
    (False, None, None, ("init", {"num_cpus": 2, "include_dashboard": False})),
    (False, "envhost:6379", None, ("init", {"address": "envhost:6379"})),
    (False, "envhost:6379", "ray://head:10001", ("init", {"address": "ray://head:10001"})),
    (True, None, None, None),
])
def test_ray_executor_starts_and_stops_only_its_own_ray(
        monkeypatch: pytest.MonkeyPatch, scenario: Scenario, initialized: bool, env: str | None,
        address: str | None, expect: tuple[str, dict[str, Any]] | None) -> None:
    fake = FakeRay(initialized)
    monkeypatch.setitem(sys.modules, "ray", fake)
    monkeypatch.setattr("packing.sim.ray_cluster.check_reachable", lambda *a: None)  # no cluster here
    monkeypatch.setattr("packing.sim.ray_cluster.check_connects", lambda *a: None)
    if env is None:
        monkeypatch.delenv("RAY_ADDRESS", raising=False)
    else:
        monkeypatch.setenv("RAY_ADDRESS", env)
    ex = RayExecutor(address, workers=2)
    ref = ex.share(scenario)
    # the "worker" must fetch the scenario
    monkeypatch.setattr("packing.sim.evaluation._SHARED", OrderedDict())
    recs = ex.map(run_task, order_tasks(ref, ["ff"], 3, seed=0))
    assert [r.order for r in recs] == [0, 1, 2]
    ex.close()
    if expect is None:
        assert fake.calls == [] and fake.initialized  # a Ray the caller started keeps running
    else:
        name, kw = fake.calls[0]
        assert name == expect[0] and expect[1].items() <= kw.items()
        assert fake.calls[-1][0] == "shutdown" and not fake.initialized


def test_ray_executor_gives_the_serial_numbers(scenario: Scenario, tmp_path: Path) -> None:
    """A real local Ray (2 CPUs, no dashboard): the same records as the serial executor."""
    ray = pytest.importorskip("ray")
    if ray.is_initialized():  # pragma: no cover - another test left Ray running
        pytest.skip("Ray already initialised in this process")
    specs = policies(tmp_path)[:4] + [str(tmp_path / "tuned.json")]
    want = serial_numbers(scenario, specs)
    done: list[int] = []
    ex = RayExecutor(workers=2)
    try:
        recs = evaluate_policies(scenario, specs, seed=3, executor=ex, progress=done.append)
        assert ex.started_ray and ray.is_initialized()
    finally:
        ex.close()
    assert not ray.is_initialized()
    assert [r.numbers() for k in sorted(recs) for r in recs[k]] == want
    assert sum(done) == len(want)


def test_every_shared_scenario_reaches_the_workers() -> None:
    """More scenarios than a Ray worker caches: a process pool keeps all it was given."""
    from packing.model.instance import App, HostType

    insts = [Instance(f"i{k}", ("cpu",), (HostType("h", (10.0,), 4),), (App("a", (1.0 + k % 9,), 3),))
             for k in range(20)]
    with ProcessExecutor(1) as ex:
        refs = [ex.share(Scenario(i, ()), "i") for i in insts]
        recs = ex.map(run_task, [RunTask("ff", r) for r in refs])
    assert [r.instance for r in recs] == [i.name for i in insts]
    assert [r.hosts for r in recs] == [-(-3 // (10 // (1 + k % 9))) for k in range(20)]
