"""The JobFusion GCN agent: masks respected, seeded training reproducible and improving, files round-trip."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch_geometric")

from click.testing import CliRunner  # noqa: E402

from packing.dag.engine import NO_OVERHEADS, Cluster, DagEngine  # noqa: E402
from packing.dag.generator import generate_dag_workload  # noqa: E402
from packing.dag.model import Job, Stage, make_workload  # noqa: E402
from packing.errors import InputError  # noqa: E402
from policies.agents import jobfusion as jf  # noqa: E402
from policies.agents import jobfusion_train as jft  # noqa: E402
from policies.agents.files import load_agent  # noqa: E402

FIXTURE = str(Path(__file__).parents[1] / "data" / "dag")


pytestmark = pytest.mark.usefixtures("one_thread")  # tiny networks: one torch thread


def tiny_env() -> jft.Env:
    """One slot; a long two-stage job and four one-task 2 s jobs, all at t=0.

    Shortest first gives JCTs 2, 4, 6, 8 and 8 + 50 + 10 = 68 (mean 17.6); the long job first
    gives 60, 62, 64, 66, 68 (mean 64).
    """
    long = Job("long", 0.0, (Stage("J1", 1, (1.0, 1.0), 50.0), Stage("J2_1", 1, (1.0, 1.0), 10.0, (0,))))
    short = [Job(f"s{i}", 0.0, (Stage("J1", 1, (1.0, 1.0), 2.0),)) for i in range(4)]
    w = make_workload("tiny", [long, *short], "test")
    return jft.Env(w, Cluster.from_counts(np.array([[1.0, 1.0]]), np.array([1])), NO_OVERHEADS)


def greedy_jct(env: jft.Env, net: jf.JobFusionNet) -> float:
    """Mean JCT of the agent's greedy schedule of ``env`` (engine seed 0)."""
    eng = DagEngine(env.workload, env.cluster, overheads=env.overheads, seed=0)
    pol = jf.JobFusionPolicy(net)
    d = eng.reset()
    pol.reset(eng)
    while d is not None:
        d = eng.step(pol.act(eng.observation(), eng.mask()))
    return eng.result().mean_jct


def sampled_jct(net: jf.JobFusionNet, env: jft.Env, n: int = 16) -> float:
    """Mean JCT of ``n`` seeded sampled episodes."""
    out = []
    for i in range(n):
        pol = jf.JobFusionPolicy(net, sample=True, generator=torch.Generator().manual_seed(i))
        out.append(jft._episode(env, pol, 0)[2])
    return float(np.mean(out))


def test_returns_to_go_hand_computed() -> None:
    arr, fin = np.array([0.0, 5.0]), np.array([10.0, 8.0])
    # t=0: 10 + 3; t=6: 4 + 2; t=9: 1 + 0
    assert jft.returns_to_go(arr, fin, np.array([0.0, 6.0, 9.0])).tolist() == [-13.0, -6.0, -1.0]


def test_masks_respected_and_counts_bounded() -> None:
    w = generate_dag_workload(6, seed=3, max_stages=4, max_tasks=8, mean_interarrival=5.0)
    # type 0 is too small for tasks above 1 core / 2 GB: the mask rules it out for them
    cl = Cluster.from_counts(np.array([[1.0, 2.0], [4.0, 8.0]]), np.array([3, 2]))
    net = jf.JobFusionNet(jf.Config(dim=8))
    pol = jf.JobFusionPolicy(net, sample=True, generator=torch.Generator().manual_seed(0))
    eng = DagEngine(w, cl, seed=0)
    d = eng.reset()
    pol.reset(eng)
    n = 0
    saw_small_blocked = False
    while d is not None:
        obs, mask = eng.observation(), eng.mask()
        a = pol.act(obs, mask)
        row = int(np.flatnonzero(obs.runnable == a.stage)[0])
        assert mask[row, a.ctype]
        assert obs.free[a.ctype] > 0
        assert 1 <= a.count <= min(obs.pending[a.stage], obs.free[a.ctype])
        saw_small_blocked |= bool((~mask[:, 0] & mask[:, 1]).any())
        d = eng.step(a)
        n += 1
    assert n > 0 and saw_small_blocked
    assert eng.result().jct.shape == (6,)


def test_training_is_seeded_and_improves() -> None:
    env = tiny_env()
    cfg = jf.Config(dim=8, rounds=2, lr=3e-2, batch=4)
    torch.manual_seed(7)
    untrained = sampled_jct(jf.JobFusionNet(cfg), env)
    a, sa, oa = jft.train([env], 5, cfg=cfg, seed=7)
    b, sb, _ = jft.train([env], 5, cfg=cfg, seed=7)
    assert sa.curve == sb.curve
    for pa, pb in zip(a.parameters(), b.parameters(), strict=True):
        assert torch.equal(pa, pb)
    a, sa, _ = jft.train([env], 20, seed=7, net=a, optim_state=oa, state=sa)
    trained = sampled_jct(a, env)
    assert trained < untrained - 5.0, (untrained, trained)
    assert 17.6 - 1e-9 <= trained  # shortest first is optimal here


def test_resume_continues_exactly(tmp_path: Path) -> None:
    env = tiny_env()
    cfg = jf.Config(dim=8, rounds=2, batch=2)
    full, s_full, _ = jft.train([env], 4, cfg=cfg, seed=1)
    ck = tmp_path / "half.pt"
    jft.train([env], 2, cfg=cfg, seed=1, checkpoint=ck, every=1)
    net, st, opt = jft.load_checkpoint(ck)
    assert st.iteration == 2
    resumed, s_res, _ = jft.train([env], 4, seed=1, net=net, optim_state=opt, state=st)
    assert s_res.curve == s_full.curve
    for pa, pb in zip(full.parameters(), resumed.parameters(), strict=True):
        assert torch.allclose(pa, pb)


def test_model_file_round_trips_weights_only(tmp_path: Path) -> None:
    net = jf.JobFusionNet(jf.Config(dim=8, partition="single"))
    path = tmp_path / "m.pt"
    jft.save_checkpoint(path, net, name="decima-gcn")
    raw = torch.load(path, weights_only=True)
    assert raw["kind"] == "jobfusion"
    pol = load_agent(path)
    assert isinstance(pol, jf.JobFusionPolicy)
    assert pol.name == "decima-gcn" and pol.partition == "single"
    for k, v in net.state_dict().items():
        assert torch.equal(v, pol.net.state_dict()[k])


def test_cli_trains_and_compare_accepts_the_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from packing.dag.loader import is_dag_folder
    from vbp.cli.jobs import jobs
    from vbp.cli.train_jobfusion import train_jobfusion

    assert is_dag_folder(FIXTURE) and not is_dag_folder(str(tmp_path))
    model = tmp_path / "sub" / "jf.pt"
    plot = tmp_path / "curve.png"
    args = [FIXTURE, "--out", str(model), "--episodes", "4", "--batch", "2", "--jobs", "3", "--samples", "1",
            "--hosts", "32c64g:1", "--dim", "8", "--quiet", "--seed", "2", "--plot", str(plot)]
    r = CliRunner().invoke(train_jobfusion, args)
    assert r.exit_code == 0, r.output
    assert model.exists() and plot.exists() and "trained 2 iterations" in r.output
    import re  # the saved agent and SJF on 4 held-out job samples; a warning when the agent is worse

    agent_jct, sjf_jct = map(float, re.search(r"held-out job samples \(4\): jobfusion ([0-9.]+) s mean JCT; "
                                              r"sjf ([0-9.]+) s mean JCT", r.stdout).groups())
    assert ("warning: on the 4 held-out job samples" in r.stderr) == (agent_jct > sjf_jct)
    r = CliRunner().invoke(train_jobfusion, [*args[:4], "6", *args[5:], "--resume"])
    assert r.exit_code == 0, r.output
    assert "trained 3 iterations" in r.output
    r = CliRunner().invoke(jobs, ["compare", FIXTURE, "--policies", f"sjf,{model}", "--jobs", "3",
                                  "--hosts", "32c64g:1", "--json"])
    assert r.exit_code == 0, r.output
    names = [p["name"] for p in json.loads(r.output)["policies"]]
    assert names == ["sjf", "jf"]  # a model file is named by its stem
    import vbp.cli

    for bad, why in ((str(tmp_path / "none.pt"), "no such model file"), (str(plot), "unknown DAG policy")):
        with pytest.raises(SystemExit) as e:
            vbp.cli.main(["jobs", "compare", FIXTURE, "--policies", bad])
        assert e.value.code == 2 and why in capsys.readouterr().err


def test_imitation_of_sjf_makes_the_greedy_agent_run_shortest_first() -> None:
    # Untrained, the greedy agent's JCT on tiny_env is whatever its random init prefers; after
    # behaviour cloning of SJF it must reproduce SJF's schedule: mean JCT 17.6 (long job last).
    from policies.dag import ShortestJobFirst

    env = tiny_env()
    torch.manual_seed(2)  # this init runs the long job early: mean JCT 57.6 before imitation
    net = jf.JobFusionNet(jf.Config(dim=8, rounds=2))
    nll = jft.imitate([env], ShortestJobFirst(), 30, net=net, seed=0, lr=1e-2)
    # identical short jobs are ties the features cannot break: the NLL cannot reach 0
    assert nll[-1] < nll[0] - 0.1
    assert greedy_jct(env, net) == pytest.approx(17.6)


def test_log_probs_of_every_action_sum_to_one() -> None:
    # two stages runnable, two container types, 4 pending tasks: levels give distinct counts
    jobs = [Job(f"j{i}", 0.0, (Stage("J1", 4, (1.0, 1.0), 5.0 + i),)) for i in range(2)]
    w = make_workload("two", jobs, "test")
    env = jft.Env(w, Cluster.from_counts(np.array([[1.0, 1.0], [2.0, 2.0]]), np.array([4, 4])), NO_OVERHEADS)
    torch.manual_seed(0)
    net = jf.JobFusionNet(jf.Config(dim=8, rounds=2, levels=4))
    eng = DagEngine(env.workload, env.cluster, overheads=env.overheads, seed=0)
    eng.reset()
    pol = jf.JobFusionPolicy(net)
    pol.reset(eng)
    obs, mask = eng.observation(), eng.mask()
    total = 0.0
    n_actions = 0
    for r in np.flatnonzero(mask.any(axis=1)):
        s = int(obs.runnable[r])
        for q in np.flatnonzero(mask[r]):
            most = int(min(obs.pending[s], obs.free[q]))
            for count in sorted({max(1, min(most, -(-most * (lv + 1) // 4))) for lv in range(4)}):
                total += float(pol.log_prob(obs, mask, jf.DagAction(s, int(q), count)).detach().exp())
                n_actions += 1
    assert n_actions == 2 * 2 * 4
    assert total == pytest.approx(1.0, abs=1e-5)


def test_files_from_before_the_slack_features_still_load(tmp_path: Path) -> None:
    old = jf.JobFusionNet(jf.Config(dim=8, slack=False))
    data = jft.checkpoint_data(old)
    del data["config"]["slack"]  # what a file written before the option holds
    net = jf.net_from(data)
    assert net.cfg.slack is False
    assert net.type_head[0].in_features == 2 * 8 + jf.TYPE_FEATURES
    assert jf.JobFusionNet(jf.Config(dim=8)).type_head[0].in_features == 2 * 8 + jf.TYPE_FEATURES + 2


def test_imitation_learns_the_smallest_fitting_type() -> None:
    # small (1,1) and large (2,2) tasks on types [1,1] x 2 and [2,2] x 2: SJF sends small tasks to the
    # small type while it has free containers; the imitated agent must make the same type choices.
    from policies.dag import ShortestJobFirst

    jobs = [Job(f"j{i}", float(i), (Stage("J1", 2, ((1.0, 1.0) if i % 2 else (2.0, 2.0)), 3.0 + i),))
            for i in range(6)]
    env = jft.Env(make_workload("types", jobs, "test"),
                 Cluster.from_counts(np.array([[1.0, 1.0], [2.0, 2.0]]), np.array([2, 2])), NO_OVERHEADS)
    torch.manual_seed(1)
    net = jf.JobFusionNet(jf.Config(dim=8, rounds=2))
    jft.imitate([env], ShortestJobFirst(), 40, net=net, seed=0, lr=1e-2)

    def types_chosen(pol: object) -> list[tuple[int, int]]:
        eng = DagEngine(env.workload, env.cluster, overheads=env.overheads, seed=0)
        d = eng.reset()
        pol.reset(eng)  # type: ignore[attr-defined]
        out = []
        while d is not None:
            a = pol.act(eng.observation(), eng.mask())  # type: ignore[attr-defined]
            if a.stage >= 0:
                out.append((int(eng.stage_demand[a.stage, 0]), a.ctype))
            d = eng.step(a)
        return out

    got = types_chosen(jf.JobFusionPolicy(net))
    assert any(t == 0 for _, t in got) and all(t == 1 for d, t in got if d == 2)
    assert got == types_chosen(ShortestJobFirst())


def test_cli_large_share_auto_and_bad(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from vbp.cli.train_jobfusion import train_jobfusion

    model = tmp_path / "jf.pt"
    args = [FIXTURE, "--out", str(model), "--episodes", "2", "--batch", "2", "--jobs", "3", "--samples", "1",
            "--hosts", "32c64g:1", "--dim", "8", "--quiet", "--large-share", "auto"]
    r = CliRunner().invoke(train_jobfusion, args)
    assert r.exit_code == 0, r.output
    assert "by large share" in r.output and "using" in r.output
    import vbp.cli

    with pytest.raises(SystemExit) as e:
        vbp.cli.main(["train", "gcn", FIXTURE, "--out", str(tmp_path / "m.pt"), "--large-share", "x"])
    assert e.value.code == 2 and "--large-share" in capsys.readouterr().err


def test_dagger_imitation_is_seeded_and_still_learns_sjf() -> None:
    from policies.dag import ShortestJobFirst

    env = tiny_env()
    out = []
    for _ in range(2):
        torch.manual_seed(2)
        net = jf.JobFusionNet(jf.Config(dim=8, rounds=2))
        nll = jft.imitate([env], ShortestJobFirst(), 30, net=net, seed=0, lr=1e-2, dagger=0.5)
        out.append((nll, [v.clone() for v in net.state_dict().values()]))
    assert out[0][0] == out[1][0]
    assert all(torch.equal(a, b) for a, b in zip(out[0][1], out[1][1], strict=True))
    assert out[0][0][-1] < out[0][0][0] - 0.1
    assert greedy_jct(env, net) == pytest.approx(17.6)  # SJF's schedule (57.6 before imitation)
    with pytest.raises(ValueError):
        jft.imitate([env], ShortestJobFirst(), 1, net=net, dagger=1.5)


def test_distil_aggregates_labels_seeded() -> None:
    # Dataset aggregation: a few labelled episodes fitted many times reach the teacher's schedule
    # (SJF: mean JCT 17.6, hand-computed in tiny_env; 40.8 before), the same bits for the same seed.
    from policies.dag import RolloutExpert, ShortestJobFirst

    env = tiny_env()
    out = []
    for _ in range(2):
        torch.manual_seed(2)
        net = jf.JobFusionNet(jf.Config(dim=8, rounds=2))
        assert greedy_jct(env, net) == pytest.approx(40.8)  # untrained: not SJF's order
        nll = jft.distil([env], ShortestJobFirst(), 3, net=net, seed=0, lr=1e-2, passes=10, batch=4)
        out.append((nll, [v.clone() for v in net.state_dict().values()]))
    assert out[0][0] == out[1][0] and len(out[0][0]) == 3
    assert all(torch.equal(a, b) for a, b in zip(out[0][1], out[1][1], strict=True))
    assert greedy_jct(env, net) == pytest.approx(17.6)
    # the rollout expert (base SJF-CP) as the teacher, SJF-CP driving the unlabelled decisions
    torch.manual_seed(2)
    net = jf.JobFusionNet(jf.Config(dim=8, rounds=2))
    ex = RolloutExpert(horizon=None, base="sjf-cp", within=True)
    jft.distil([env], ex, 3, net=net, seed=0, lr=1e-2, passes=10, batch=4, max_labels=4,
              driver=ShortestJobFirst())
    assert greedy_jct(env, net) == pytest.approx(17.6)
    with pytest.raises(ValueError):
        jft.distil([env], ShortestJobFirst(), 1, net=net, dagger=-0.1)


def test_cli_expert_rollout_distils(tmp_path: Path) -> None:
    from policies.agents.files import read_agent_file
    from vbp.cli.train_jobfusion import train_jobfusion

    model = tmp_path / "jf.pt"
    args = [FIXTURE, "--out", str(model), "--episodes", "2", "--batch", "2", "--jobs", "3", "--samples", "1",
            "--hosts", "32c64g:1", "--dim", "8", "--quiet", "--imitate", "sjf", "--imitate-epochs", "1",
            "--expert", "rollout", "--expert-epochs", "2", "--expert-horizon", "0"]
    r = CliRunner().invoke(train_jobfusion, args)
    assert r.exit_code == 0, r.output
    assert "distilled the rollout expert" in r.output and model.exists()
    assert read_agent_file(model)["info"]["expert"] == "rollout"
    r = CliRunner().invoke(train_jobfusion, [*args[:3], "--expert", "rollout", "--resume"])
    assert r.exit_code != 0 and "drop --expert" in str(r.exception)  # vbp main turns it into exit 2


def test_cli_expert_base_and_within(tmp_path: Path) -> None:
    from policies.agents.files import read_agent_file
    from vbp.cli.train_jobfusion import train_jobfusion

    model = tmp_path / "jf.pt"
    args = [FIXTURE, "--out", str(model), "--episodes", "0", "--jobs", "3", "--samples", "1",
            "--hosts", "32c64g:1", "--dim", "8", "--quiet", "--imitate", "sjf-cp", "--imitate-epochs", "1",
            "--expert", "rollout", "--expert-epochs", "1", "--expert-horizon", "0", "--expert-base", "sjf-cp",
            "--expert-within", "--max-labels", "5", "--expert-passes", "2"]
    r = CliRunner().invoke(train_jobfusion, args)
    assert r.exit_code == 0, r.output
    info = read_agent_file(model)["info"]
    assert info["expert_base"] == "sjf-cp" and info["expert_within"] is True and info["max_labels"] == 5
    assert info["expert_passes"] == 2 and len(info["expert_nll"]) == 1
    r = CliRunner().invoke(train_jobfusion, [*args[:3], "--episodes", "2", "--expert-base", "sjf-cp",
                                             "--force"])
    assert r.exit_code != 0 and "only with --expert" in str(r.exception)
    r = CliRunner().invoke(train_jobfusion, [*args[:3], "--expert", "rollout", "--expert-base", "lifo"])
    assert r.exit_code == 2  # click rejects an unknown base


def test_candidate_stages_keep_an_untrained_agent_next_to_sjf() -> None:
    # Whatever the (random) weights, candidates=1 leaves only SJF's job to the stage head, and with
    # candidates=2 every stage the agent runs belongs to one of SJF's two shortest jobs.
    from policies.dag import ShortestJobFirst

    w = generate_dag_workload(12, seed=5, max_stages=4, max_tasks=6, mean_interarrival=2.0)
    cl = Cluster.from_counts(np.array([[1.0, 2.0], [4.0, 8.0]]), np.array([3, 2]))
    for k in (1, 2):
        torch.manual_seed(k)
        pol = jf.JobFusionPolicy(jf.JobFusionNet(jf.Config(dim=8, candidates=k)))
        sjf = ShortestJobFirst()
        eng = DagEngine(w, cl, overheads=NO_OVERHEADS, seed=0)
        d = eng.reset()
        pol.reset(eng)
        sjf.reset(eng)
        n = 0
        while d is not None:
            obs, mask = eng.observation(), eng.mask()
            a, b = pol.act(obs, mask), sjf.act(obs, mask)
            keys = sjf.keys(obs, obs.runnable[mask.any(axis=1)])
            _, rank = pol.sjf_order(obs, obs.runnable[mask.any(axis=1)])
            assert rank[eng.stage_job[b.stage]] == 0 and sorted(keys)[0] == keys.min()
            if k == 1:
                assert eng.stage_job[a.stage] == eng.stage_job[b.stage]
            assert rank[eng.stage_job[a.stage]] < k
            n += 1
            d = eng.step(a)
        assert n > 12


def test_scale_free_features_do_not_grow_with_task_counts() -> None:
    # the same jobs with every stage 1000x wider: the v2 features stay in [0, 2] and, but for the
    # clipped log task count, equal the narrow jobs' features at the first decision
    def features(mult: int, version: int) -> np.ndarray:
        jobs = [Job(f"j{i}", 0.0, (Stage("J1", 3 * mult, (1.0, 1.0), 5.0 + i),
                                   Stage("J2_1", 2 * mult, (1.0, 1.0), 4.0, (0,)))) for i in range(3)]
        w = make_workload("wide", jobs, "test")
        eng = DagEngine(w, Cluster.from_counts(np.array([[1.0, 1.0]]), np.array([4])), seed=0)
        eng.reset()
        pol = jf.JobFusionPolicy(jf.JobFusionNet(jf.Config(dim=8, features=version)))
        pol.reset(eng)
        return pol.features(eng.observation())[1]

    narrow, wide = features(1, 2), features(1000, 2)
    assert narrow.shape == (6, jf.NODE_FEATURES_V2) and wide.max() <= 2.0 and wide.min() >= 0.0
    cols = [c for c in range(jf.NODE_FEATURES_V2) if c != 5]
    np.testing.assert_allclose(narrow[:, cols], wide[:, cols], atol=1e-6)
    assert narrow[:, 9].tolist() == [1, 0, 0, 0, 0, 0]  # SJF's stage: the shortest job's first stage
    assert features(100_000, 1).max() > 1.5  # the old features grow (log1p(300,000) / 8)


def test_files_from_before_the_scale_free_features_load_as_v1() -> None:
    old = jf.JobFusionNet(jf.Config(dim=8, features=1, candidates=0))
    data = jft.checkpoint_data(old)
    del data["config"]["features"], data["config"]["candidates"]
    net = jf.net_from(data)
    assert net.cfg.features == 1 and net.cfg.candidates == 0
    assert net.inp.in_features == jf.NODE_FEATURES
    data["config"]["features"] = 7
    with pytest.raises(ValueError, match=r"config.features: got 7; expected one of 1, 2"):
        jf.net_from(data)


def test_max_labels_asks_the_teacher_only_on_labelled_decisions() -> None:
    from policies.dag import ShortestJobFirst

    class Counting(ShortestJobFirst):
        calls = 0

        def act(self, obs, mask):  # type: ignore[no-untyped-def]
            Counting.calls += 1
            return super().act(obs, mask)

    w = generate_dag_workload(10, seed=1, max_stages=4, max_tasks=6, mean_interarrival=1.0)
    env = jft.Env(w, Cluster.from_counts(np.array([[1.0, 2.0], [4.0, 8.0]]), np.array([2, 1])), NO_OVERHEADS)
    n = jft._decisions(env, ShortestJobFirst())
    assert n > 20
    torch.manual_seed(0)
    net = jf.JobFusionNet(jf.Config(dim=8))
    jft.imitate([env], Counting(), 3, net=net, seed=0, max_labels=5, driver=ShortestJobFirst())
    assert 0 < Counting.calls < n  # ~5 labels per episode x 3 episodes; without max_labels ~3 n
    Counting.calls = 0
    jft.imitate([env], Counting(), 1, net=net, seed=0)
    assert Counting.calls >= n - 2  # unlabelled: the teacher takes every decision


def test_build_envs_adds_the_longest_draws() -> None:
    from packing.dag.carving import parse_hosts, sample_jobs
    from packing.dag.loader import load_dag_folder
    from vbp.jobfusion import build_envs

    w = load_dag_folder(FIXTURE)
    kw = dict(jobs=3, seed=0, partition_method="constrained", q=2, hosts=parse_hosts("32c64g:2"),
              interarrival=5.0)
    envs = build_envs(w, n_envs=2, long_samples=1, **kw)  # type: ignore[arg-type]
    assert len(envs) == 3

    def work(x: object) -> float:
        return sum(s.n_tasks * s.duration for j in x.jobs for s in j.stages)  # type: ignore[attr-defined]

    draws = [work(sample_jobs(w, 3, 10**6 + i, 5.0)) for i in range(10)]
    assert work(envs[2].workload) == max(draws)


def test_hint_features_mark_sjf_and_sjf_cp_stages() -> None:
    # one job, two roots: s0 (no child) and s1 -> s2 (10 s); SJF's stage is s0, SJF-CP's is s1
    j = Job("F", 0.0, (Stage("J1", 1, (1.0, 1.0), 1.0), Stage("J2", 1, (1.0, 1.0), 1.0),
                       Stage("J3_2", 1, (1.0, 1.0), 10.0, (1,))))
    one = Cluster.from_counts(np.array([[1.0, 1.0]]), np.array([1]))
    eng = DagEngine(make_workload("fork", [j], "test"), one, overheads=NO_OVERHEADS)
    eng.reset()
    pol = jf.JobFusionPolicy(jf.JobFusionNet(jf.Config(dim=8)))
    pol.reset(eng)
    x = pol.features(eng.observation())[1]
    assert x[:, 9].tolist() == [1, 0, 0] and x[:, 10].tolist() == [0, 1, 0]
    np.testing.assert_allclose(x[:, 14], [1 / 11, 1.0, 10 / 11], rtol=1e-6)  # path over the job's longest


def test_cli_candidates_long_samples_and_max_labels(tmp_path: Path) -> None:
    from policies.agents.files import read_agent_file
    from vbp.cli.train_jobfusion import train_jobfusion

    model = tmp_path / "jf.pt"
    args = [FIXTURE, "--out", str(model), "--episodes", "2", "--batch", "2", "--jobs", "3", "--samples", "1",
            "--hosts", "32c64g:1", "--dim", "8", "--quiet", "--imitate", "sjf-cp", "--imitate-epochs", "1",
            "--candidates", "2", "--long-samples", "1", "--max-labels", "5", "--episodes", "0"]
    r = CliRunner().invoke(train_jobfusion, args)
    assert r.exit_code == 0, r.output
    assert "no REINFORCE iterations" in r.output
    r = CliRunner().invoke(train_jobfusion, [*args[:3], "--episodes", "0", "--force"])
    assert r.exit_code != 0 and "nothing to train" in str(r.exception)
    data = read_agent_file(model)
    assert data["config"]["candidates"] == 2 and data["config"]["features"] == 2
    assert data["info"]["long_samples"] == 1 and data["info"]["max_labels"] == 5
    assert load_agent(model).net.cfg.candidates == 2  # type: ignore[attr-defined]


def test_cli_features_one_trains_and_loads(tmp_path: Path) -> None:
    from policies.agents.files import read_agent_file
    from vbp.cli.train_jobfusion import train_jobfusion

    model = tmp_path / "jf1.pt"
    args = [FIXTURE, "--out", str(model), "--episodes", "2", "--batch", "2", "--jobs", "3", "--samples", "1",
            "--hosts", "32c64g:1", "--dim", "8", "--quiet", "--features", "1"]
    r = CliRunner().invoke(train_jobfusion, args)
    assert r.exit_code == 0, r.output
    assert read_agent_file(model)["config"]["features"] == 1
    assert load_agent(model).net.cfg.features == 1  # type: ignore[attr-defined]
    r = CliRunner().invoke(train_jobfusion, [*args, "--resume"])
    assert isinstance(r.exception, InputError) and "--features" in str(r.exception)
