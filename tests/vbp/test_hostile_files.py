"""Hostile model files: crafted with ``torch.save`` for every agent kind, refused before anything is built.

A file's stored hyper-parameters decide how large the networks are, so each is range-checked before
a network exists (the network constructors are replaced by a tripwire in these tests: a refusal
that came after a build would fail them). Tensors must have the shapes the hyper-parameters give;
names are printed with control characters escaped; a pickle payload is named by its global.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch_geometric")

from packing.errors import InputError  # noqa: E402
from policies.agents import eade, eade_masked, gcn_placement, jobfusion, jobfusion_train, sb3  # noqa: E402
from policies.agents.files import load_agent  # noqa: E402
from tests.vbp.cli_run import run  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


# -- small valid files of every kind ------------------------------------------------------------
def _eade(path: Path) -> None:
    eade.EadeAgent(eade.Config(n_clusters=2, n_features=3, embed=8, heads=2, hidden=(8, 4))).save(path)


def _eade_m(path: Path) -> None:
    eade_masked.EadeMAgent(eade_masked.MConfig(n_clusters=2, n_features=3, embed=8, heads=2,
                                               hidden=(8, 4))).save(path)


def _gcn(path: Path) -> None:
    net = gcn_placement.PlacementNet(gcn_placement.Config(dim=4, layers=1))
    gcn_placement.GcnPlacementPolicy(net, name="gcn").save(path)


def _jobfusion(path: Path) -> None:
    jobfusion_train.save_checkpoint(path, jobfusion.JobFusionNet(jobfusion.Config(dim=4, rounds=1)),
                              jobfusion_train.TrainState(), name="jf")


def _sb3(path: Path) -> None:
    policy = sb3._build("td3", 9, [8])
    sb3.SB3Policy("td3", policy, 2, 3, [8]).save(path)


MAKERS: dict[str, Callable[[Path], None]] = {"eade": _eade, "eade-m": _eade_m, "gcn-placement": _gcn,
                                             "jobfusion": _jobfusion, "sb3-td3": _sb3}

BUILDERS: dict[str, list[tuple[Any, str]]] = {
    "eade": [(eade, "Actor"), (eade, "Critic")],
    "eade-m": [(eade_masked, "ClusterQ")],
    "gcn-placement": [(gcn_placement, "PlacementNet")],
    "jobfusion": [(jobfusion, "JobFusionNet")],
    "sb3-td3": [(sb3, "_build")],
}
"""What builds each kind's networks (replaced by a tripwire where a file must be refused first)."""


def made(kind: str, tmp_path: Path) -> dict[str, Any]:
    """The dict of a valid small ``kind`` file."""
    path = tmp_path / f"good-{kind}.pt"
    MAKERS[kind](path)
    data: dict[str, Any] = torch.load(str(path), weights_only=True)
    return data


def tripwire(monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    """Make building any of ``kind``'s networks fail the test."""
    def built(*_: Any, **__: Any) -> Any:
        raise AssertionError("a network was built from a file that must be refused first")

    for module, name in BUILDERS[kind]:
        monkeypatch.setattr(module, name, built)


def save(tmp_path: Path, data: dict[str, Any], name: str = "hostile.pt") -> Path:
    path = tmp_path / name
    torch.save(data, str(path))
    return path


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_valid_small_files_load(kind: str, tmp_path: Path) -> None:
    path = tmp_path / "ok.pt"
    MAKERS[kind](path)
    assert load_agent(path) is not None


HUGE: list[tuple[str, str, Any, str]] = [
    # kind, config field (None: top level), value, the allowed range in the message
    ("gcn-placement", "layers", 10**6, "an integer in 1..16"),
    ("gcn-placement", "dim", 10**7, "an integer in 1..1024"),
    ("gcn-placement", "n_resources", 0, "an integer in 1..64"),
    ("gcn-placement", "lr", float("nan"), "a number in (0, 1]"),
    ("jobfusion", "rounds", 10**6, "an integer in 0..16"),
    ("jobfusion", "dim", 10**9, "an integer in 1..1024"),
    ("jobfusion", "levels", -3, "an integer in 1..64"),
    ("jobfusion", "features", 7, "one of 1, 2"),
    ("eade", "hidden", [10**6, 10**6], "an integer in 1..4096"),
    ("eade", "hidden", [8] * 10_000, "a list of 1..8 integers"),
    ("eade", "n_clusters", 10**8, "an integer in 1..1024"),
    ("eade", "heads", 10**6, "an integer in 1..64"),
    ("eade", "buffer", 10**12, "an integer in 1..1_000_000"),
    ("eade", "gamma", float("inf"), "a number in [0, 1]"),
    ("eade-m", "embed", 10**6, "an integer in 1..1024"),
    ("eade-m", "hidden", [4, 4, 4], "a list of 2 integers"),
    ("eade-m", "n_features", 10**6, "an integer in 1..68"),
    ("eade-m", "batch", 0, "an integer in 1..8192"),
    ("eade-m", "attention", "yes", "true or false"),
]


@pytest.mark.parametrize(("kind", "field", "value", "allowed"), HUGE)
def test_out_of_range_config_refused_before_building(kind: str, field: str, value: Any, allowed: str,
                                                      tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                      ) -> None:
    data = made(kind, tmp_path)
    data["config"] = {**data["config"], field: value}
    path = save(tmp_path, data)
    tripwire(monkeypatch, kind)
    with pytest.raises(InputError) as e:
        load_agent(path)
    msg = str(e.value)
    assert msg.startswith(str(path)), msg
    assert f"config.{field}" in msg and allowed in msg, msg


SB3_HUGE: list[tuple[str, Any, str]] = [
    ("net_arch", [4096] * 1000, "a list of 0..8 integers"),
    ("net_arch", [10**9], "an integer in 1..4096"),
    ("net_arch", {"pi": [8], "evil": [8]}, "expected pi, vf, qf"),
    ("n_clusters", 10**9, "an integer in 1..1024"),
    ("n_features", -1, "an integer in 1..64"),
    ("algo", "dqn", "one of 'td3', 'sac', 'ppo'"),
]


@pytest.mark.parametrize(("field", "value", "allowed"), SB3_HUGE)
def test_sb3_sizes_refused_before_building(field: str, value: Any, allowed: str, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    data = made("sb3-td3", tmp_path)
    data[field] = value
    path = save(tmp_path, data)
    tripwire(monkeypatch, "sb3-td3")
    with pytest.raises(InputError, match=re.escape(allowed)) as e:
        load_agent(path)
    assert str(e.value).startswith(f"{path}: {field}")


def test_sb3_sizes_in_range_but_networks_too_large(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = made("sb3-td3", tmp_path)
    data.update(n_clusters=1024, n_features=64, net_arch=[4096] * 8)
    path = save(tmp_path, data)
    tripwire(monkeypatch, "sb3-td3")
    with pytest.raises(InputError, match=r"net_arch: .*parameters; at most 20,000,000"):
        load_agent(path)


@pytest.mark.parametrize("kind", ["eade", "eade-m", "gcn-placement", "jobfusion"])
def test_network_too_large_for_its_limits_refused(kind: str, tmp_path: Path) -> None:
    """Every field in range, but together more than MAX_PARAMS weights: refused, named."""
    data = made(kind, tmp_path)
    big = {"eade": {"n_clusters": 1024, "embed": 1024, "hidden": [4096, 4096]},
           "eade-m": {"embed": 1024, "hidden": [4096, 4096]},
           "gcn-placement": {"dim": 1024, "layers": 16},
           "jobfusion": {"dim": 1024, "rounds": 16}}[kind]
    data["config"] = {**data["config"], **big}
    path = save(tmp_path, data)
    with pytest.raises(InputError, match=r": config: describes a network of [\d,]+ parameters; at most"):
        load_agent(path)


STATE_KEYS = {"eade": "actor", "eade-m": "q", "gcn-placement": "state_dict", "jobfusion": "weights",
              "sb3-td3": "policy"}


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_tensors_must_match_the_config(kind: str, tmp_path: Path) -> None:
    data = made(kind, tmp_path)
    key = STATE_KEYS[kind]
    name = next(iter(data[key]))
    data[key][name] = torch.zeros(3, 5, 7)
    path = save(tmp_path, data)
    with pytest.raises(InputError, match=r"shape \(3, 5, 7\), but the stored hyper-parameters give") as e:
        load_agent(path)
    assert str(e.value).startswith(f"{path}: {key}[")


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_missing_and_extra_tensors(kind: str, tmp_path: Path) -> None:
    data = made(kind, tmp_path)
    key = STATE_KEYS[kind]
    name = next(iter(data[key]))
    data[key]["evil\nline"] = data[key].pop(name)
    path = save(tmp_path, data)
    with pytest.raises(InputError, match=rf"missing {re.escape(name)}; unexpected evil\\nline") as e:
        load_agent(path)
    assert "\n" not in str(e.value)


def test_a_huge_shape_over_a_tiny_storage_is_refused(tmp_path: Path) -> None:
    """A stride-0 view has the right shape but one stored value: copying it would allocate the shape."""
    data = made("gcn-placement", tmp_path)
    name, t = next((k, v) for k, v in data["state_dict"].items() if v.dim() == 2)
    data["state_dict"][name] = torch.zeros(1).expand(*t.shape)
    path = save(tmp_path, data)
    with pytest.raises(InputError, match="a tensor must own its values"):
        load_agent(path)


def test_non_finite_weights_are_refused(tmp_path: Path) -> None:
    data = made("eade-m", tmp_path)
    name = next(iter(data["q"]))
    data["q"][name] = data["q"][name].clone().fill_(float("nan"))
    path = save(tmp_path, data)
    with pytest.raises(InputError, match=r"q\['.*'\]: holds nan or infinite values"):
        load_agent(path)


def test_heads_must_divide_embed(tmp_path: Path) -> None:
    data = made("eade", tmp_path)
    data["config"] = {**data["config"], "heads": 3}
    with pytest.raises(InputError, match=r"config.heads: 3 does not divide embed 8"):
        load_agent(save(tmp_path, data))


def test_unknown_config_field_is_refused(tmp_path: Path) -> None:
    data = made("eade-m", tmp_path)
    data["config"] = {**data["config"], "evil": 1}
    with pytest.raises(InputError, match=r"config.evil: unknown field; known: .*attention"):
        load_agent(save(tmp_path, data))


def test_eade_m_option_combination_checked(tmp_path: Path) -> None:
    data = made("eade-m", tmp_path)
    data["config"] = {**data["config"], "admission": True}
    with pytest.raises(InputError, match=r": config: admission needs residual"):
        load_agent(save(tmp_path, data))


def test_checkpoint_optimizer_state_checked(tmp_path: Path) -> None:
    net = gcn_placement.PlacementNet(gcn_placement.Config(dim=4, layers=1))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    net(gcn_placement.to_graph((torch.zeros(3, gcn_placement.feature_width(2)).numpy(),
                                torch.zeros(2, 0, dtype=torch.int64).numpy(),
                                torch.zeros(0, dtype=torch.int64).numpy(),
                                torch.zeros(0).numpy())), 1, 2).sum().backward()
    opt.step()
    pol = gcn_placement.GcnPlacementPolicy(net)
    path = tmp_path / "ck.pt"
    pol.save(path, {"optimizer": opt.state_dict(), "iteration": 1, "curve": [1.0], "seconds": 1.0})
    assert load_agent(path) is not None
    data = torch.load(str(path), weights_only=True)
    data["optimizer"]["param_groups"][0]["lr"] = float("nan")
    with pytest.raises(InputError, match=r"optimizer.param_groups\[0\].lr: got nan; expected a number in"):
        load_agent(save(tmp_path, data))
    data = torch.load(str(path), weights_only=True)
    data["optimizer"]["state"][0]["exp_avg"] = torch.zeros(10**3)
    with pytest.raises(InputError, match=r"optimizer.state\[0\].exp_avg: shape \(1000,\)"):
        load_agent(save(tmp_path, data))
    data = torch.load(str(path), weights_only=True)
    data["iteration"] = -5
    with pytest.raises(InputError, match=r"iteration: got -5; expected an integer in 0..1_000_000_000"):
        load_agent(save(tmp_path, data))


# -- the CLI: exit 2, one line, quickly ----------------------------------------------------------
def test_cli_refuses_a_million_layers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = made("gcn-placement", tmp_path)
    data["config"] = {**data["config"], "layers": 10**6}
    path = save(tmp_path, data)
    assert os.path.getsize(path) < 200_000
    code, out, err = run(["simulate", "sigma", "--policy", str(path)], capsys)
    assert code == 2
    assert err.strip() == (f"error: {path}: config.layers: got 1000000; expected an integer in 1..16")


# -- strings printed from a file ---------------------------------------------------------------------
FORGED = "gcn\nfake line\x1b[31m red"


@pytest.mark.parametrize("kind", ["gcn-placement", "jobfusion"])
def test_stored_names_are_escaped(kind: str, tmp_path: Path) -> None:
    data = made(kind, tmp_path)
    if kind == "jobfusion":
        data["info"] = {**data["info"], "name": FORGED}
    else:
        data["name"] = FORGED
    pol = load_agent(save(tmp_path, data))
    assert pol.name == "gcn\\nfake line\\x1b[31m red"


def test_forged_name_cannot_forge_output_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = made("gcn-placement", tmp_path)
    data["name"] = FORGED
    path = save(tmp_path, data)
    code, out, err = run(["simulate", "sigma", "--policy", str(path)], capsys)
    assert code == 0, err
    assert "\x1b" not in out + err
    assert not any(line.startswith("fake line") for line in (out + err).splitlines())
    assert load_agent(path).name == "gcn\\nfake line\\x1b[31m red"  # kept, escaped


def test_long_name_refused(tmp_path: Path) -> None:
    data = made("gcn-placement", tmp_path)
    data["name"] = "x" * 10_000
    with pytest.raises(InputError, match=r": name: got 'x+\.\.\.'; expected a text of at most 200"):
        load_agent(save(tmp_path, data))


# -- pickle payloads ------------------------------------------------------------------------------
class Payload:
    """Runs a command when unpickled (without weights_only)."""

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (os.system, ("echo PWNED",))


class Plain:
    """An object of a class torch's weights-only unpickler does not allow."""


@pytest.mark.parametrize(("obj", "name"), [(Payload(), "system"), (Plain(), "Plain")])
def test_pickle_payload_names_the_blocked_global(obj: Any, name: str, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    path = save(tmp_path, {"kind": "eade", "format": 1, "x": obj})
    code, out, err = run(["simulate", "sigma", "--policy", str(path)], capsys)
    assert code == 2
    assert "PWNED" not in out + err
    line = err.strip()
    assert "\n" not in line
    assert re.search(rf"not a vbp agent file: it asks for the Python object [\w.]*{name}, which a "
                     "weights-only load does not allow", line), line
    assert "weights_only=False" not in line and "weights_only` set to `False" not in line
    assert line.endswith("(vbp never runs code from a model file)")


# -- a good agent on an instance of another shape -------------------------------------------------
MC_DATA = REPO / "tests" / "data" / "multicluster_small"
ONE_RESOURCE = {"name": "one", "resources": ["cpu"],
                "host_types": [{"name": "h", "capacity": [4], "count": 3}],
                "apps": [{"name": "a", "demand": [2], "count": 2}, {"name": "b", "demand": [1], "count": 1}]}


def write_json(tmp_path: Path, name: str, doc: dict[str, Any]) -> str:
    import json

    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return str(path)


def test_shipped_eade_agent_on_another_cluster_count(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                     ) -> None:
    scen = str(tmp_path / "mc4.json")
    code, _, err = run(["generate", "multicluster", "--data", str(MC_DATA), "--clusters", "4", "--nodes", "2",
                        "--tasks", "12", "--out", scen], capsys)
    assert code == 0, err
    model = str(REPO / "policies" / "data" / "eade-multicluster.pt")
    code, _, err = run(["simulate", scen, "--policy", model], capsys)
    assert code == 2, err
    assert f"error: {model}: clusters: the agent is trained for 16 clusters of 4 metric resources; " \
           f"instance 'mc-4x2-12-s0' has 4 clusters of 4" in err, err
    assert "internal error" not in err


def test_shipped_gcn_agent_on_one_resource(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inst = write_json(tmp_path, "one.json", ONE_RESOURCE)
    code, _, err = run(["simulate", inst, "--policy", "gcn-sigma"], capsys)
    assert code == 2, err
    assert "gcn-sigma.pt: n_resources: the model is trained for 2 resources; instance 'one' has 1" in err
    code, _, err = run(["compare", inst, "--policies", "bf,gcn-sigma", "--orders", "1", "-q"], capsys)
    assert code == 2 and "trained for 2 resources; instance 'one' has 1" in err, err


def test_train_gcn_resume_from_another_kind(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ck = tmp_path / "ck.pt"
    _eade(ck)
    code, _, err = run(["train", "gcn", "sigma", "--checkpoint", str(ck), "--resume", "--episodes", "16",
                        "--out", str(tmp_path / "o.pt")], capsys)
    assert code == 2, err
    assert f"{ck}: kind: a 'eade' agent file, not a 'gcn-placement' checkpoint" in err


def test_train_gcn_resume_from_a_model_without_training_state(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    ck = tmp_path / "ck.pt"
    _gcn(ck)
    code, _, err = run(["train", "gcn", "sigma", "--checkpoint", str(ck), "--resume", "--episodes", "16",
                        "--dim", "4", "--layers", "1", "--out", str(tmp_path / "o.pt")], capsys)
    assert code == 2 and f"{ck}: iteration: a model file without training state" in err, err


def test_train_gcn_resume_with_another_network_shape(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                     ) -> None:
    ck = tmp_path / "ck.pt"
    data = made("gcn-placement", tmp_path)
    net = gcn_placement.PlacementNet(gcn_placement.Config(dim=4, layers=1))
    data.update(optimizer=torch.optim.Adam(net.parameters()).state_dict(), iteration=0, curve=[])
    torch.save(data, str(ck))
    code, _, err = run(["train", "gcn", "sigma", "--checkpoint", str(ck), "--resume", "--episodes", "16",
                        "--out", str(tmp_path / "o.pt")], capsys)
    assert code == 2, err
    assert f"{ck}: config: a network of another shape: dim 4 (this run: 32), layers 1 (this run: 2)" in err


def test_train_rl_on_a_scenario_without_apps(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = {"name": "noapps", "resources": ["cpu"], "gpu_resources": ["gpu_milli"],
           "host_types": [{"name": "g", "capacity": [8], "count": 2, "gpus": 2, "gpu_capacity": [1000]}],
           "apps": []}
    inst = write_json(tmp_path, "noapps.json", doc)
    code, _, err = run(["train", "rl", inst, "--episodes", "1", "--out", str(tmp_path / "r.pt")], capsys)
    assert code == 2, err
    assert f"{inst}: apps: no tasks to place" in err
    inst = write_json(tmp_path, "one.json", ONE_RESOURCE)
    code, _, err = run(["train", "rl", inst, "--episodes", "1", "--out", str(tmp_path / "r.pt")], capsys)
    assert code == 2 and f"{inst}: gpu_resources: not a multi-cluster GPU scenario" in err, err


def test_swarm_policy_file_name_is_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from policies.registry import shipped_path

    doc = json.loads(shipped_path("swarm-sigma").read_text())
    doc["name"] = FORGED
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(doc))
    code, out, err = run(["simulate", "sigma", "--policy", str(path)], capsys)
    assert code == 0, err
    assert "\x1b" not in out + err
    assert not any(line.startswith("fake line") for line in (out + err).splitlines())
    from policies.swarm.policy import SwarmPolicy

    assert SwarmPolicy.load(path).name == "gcn\\nfake line\\x1b[31m red"  # kept, escaped


def test_a_zip_that_unpacks_to_too_much_is_refused_before_reading(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import zipfile

    import policies.agents.files as files

    path = tmp_path / "bomb.pt"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("archive/data/0", b"\0" * 2_000_000)
    assert path.stat().st_size < 20_000
    monkeypatch.setattr(files, "MAX_UNPACKED", 1_000_000)
    with pytest.raises(InputError, match=r"bomb.pt: not a vbp agent file: unpacks to 2,000,000 bytes; "
                                         r"at most 1,000,000"):
        load_agent(path)


def test_train_rl_resume_on_scenarios_of_another_shape(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    scen = str(tmp_path / "mc4.json")
    code, _, err = run(["generate", "multicluster", "--data", str(MC_DATA), "--clusters", "4", "--nodes", "1",
                        "--tasks", "5", "--out", scen], capsys)
    assert code == 0, err
    model = tmp_path / "m.pt"
    eade_masked.EadeMAgent(eade_masked.MConfig(n_clusters=2, n_features=3, embed=8, heads=2, hidden=(8, 4))
                           ).save(model, {"algo": "eade-m", "episodes": 1, "curve": []})
    code, _, err = run(["train", "rl", scen, "--resume", "--episodes", "2", "--out", str(model)], capsys)
    assert code == 2, err
    assert f"{model}: config: the saved agent has 2 clusters of 3 features; the scenario has 4 clusters " \
           f"of 4 ({scen})" in err
