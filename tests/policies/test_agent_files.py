"""Agent model files: saved with a kind, read weights-only, dispatched, bad files refused."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from packing.errors import InputError  # noqa: E402
from policies.agents.files import load_agent, read_agent_file, save_agent  # noqa: E402
from policies.registry import get_policy  # noqa: E402


def test_an_eade_file_round_trips_through_the_registry(tmp_path: Path) -> None:
    from policies.agents.eade import Config, EadeAgent

    agent = EadeAgent(Config(n_clusters=3, n_features=4, embed=8, heads=1, hidden=(8, 4)))
    path = tmp_path / "a.pt"
    agent.save(path)
    assert read_agent_file(path)["kind"] == "eade"
    back = get_policy(str(path))
    assert isinstance(back, EadeAgent)
    for k, v in agent.actor.state_dict().items():
        assert torch.equal(v, back.actor.state_dict()[k])


class Boom:
    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (print, ("pwned",))


def test_a_crafted_pickle_is_refused_without_running(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                    ) -> None:
    path = tmp_path / "evil.pt"
    torch.save({"kind": "eade", "format": 1, "x": Boom()}, str(path), pickle_protocol=2)
    with pytest.raises(InputError, match="not a vbp agent file") as err:
        load_agent(path)
    assert "pwned" not in capsys.readouterr().out
    # the reason is torch's, without its advice to retry with weights_only=False
    assert "weights-only" in str(err.value) and "False" not in str(err.value)
    path.write_bytes(pickle.dumps(Boom()))
    with pytest.raises(InputError, match="not a vbp agent file"):
        get_policy(str(path))
    assert "pwned" not in capsys.readouterr().out


def test_unknown_kind_and_format_are_named(tmp_path: Path) -> None:
    path = tmp_path / "m.pt"
    torch.save({"kind": "nope", "format": 1}, str(path))
    with pytest.raises(InputError, match="unknown agent kind 'nope'"):
        load_agent(path)
    torch.save({"kind": "eade", "format": 99}, str(path))
    with pytest.raises(InputError, match="format 99"):
        load_agent(path)
    torch.save({"kind": "eade", "format": 1}, str(path))
    with pytest.raises(InputError, match="config: missing"):
        load_agent(path)
    with pytest.raises(ValueError):
        save_agent("nope", {}, tmp_path / "x.pt")
