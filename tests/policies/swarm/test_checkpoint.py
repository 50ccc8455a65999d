"""PSO checkpoints: data only (a crafted pickle runs nothing), checksummed, atomic under a real kill."""

from __future__ import annotations

import json
import os
import pickle
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from packing.errors import InputError
from policies.swarm.optimizer import PSO, PSOCheckpoint, PSOSettings

BOUNDS = (np.full(3, -1.0), np.full(3, 1.0))
REPO = Path(__file__).resolve().parents[3]


def sphere(x: np.ndarray) -> np.ndarray:
    return ((x - 0.3) ** 2).sum(axis=1)


class _Evil:
    """Unpickling this creates the marker file (what an attacker's payload would do)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (Path.touch, (str(self.marker),))  # type: ignore[return-value]


def _settings(iters: int = 10) -> PSOSettings:
    return PSOSettings(n_particles=6, iters=iters, seed=3, patience=0)


def test_crafted_pickle_is_refused_without_running_anything(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    ck = tmp_path / "ck.json"
    ck.write_bytes(pickle.dumps(_Evil(marker)))
    with pytest.raises(InputError) as e:
        PSO(_settings(), checkpoint_path=ck, resume=True).minimize(sphere, 3, BOUNDS)
    assert not marker.exists()
    (p,) = e.value.problems
    assert p.source == str(ck) and "not a vbp checkpoint" in p.reason
    pickle.loads(ck.read_bytes())  # the payload is real: unpickling it does create the marker
    assert marker.exists()


def test_round_trip_and_resume_is_exact(tmp_path: Path) -> None:
    ck = tmp_path / "ck.json"
    full = PSO(_settings()).minimize(sphere, 3, BOUNDS)
    PSO(_settings(4), checkpoint_path=ck).minimize(sphere, 3, BOUNDS)
    doc = json.loads(ck.read_text())
    assert doc["format"] == "vbp-pso-checkpoint" and doc["version"] == 1 and len(doc["sha256"]) == 64
    loaded = PSOCheckpoint.load(ck)
    assert loaded.iteration == 4 and loaded.position.shape == (6, 3)
    rest = PSO(_settings(), checkpoint_path=ck, resume=True).minimize(sphere, 3, BOUNDS)
    assert rest.best_cost == full.best_cost
    assert np.array_equal(rest.best_position, full.best_position)
    assert [r.best_cost for r in rest.history] == [r.best_cost for r in full.history]


@pytest.mark.parametrize("edit, field", [
    (lambda d: d["payload"]["position"][0].__setitem__(0, 0.123), "sha256"),
    (lambda d: d.__setitem__("version", 99), "version"),
    (lambda d: d.__setitem__("format", "other"), "format"),
])
def test_corrupt_or_foreign_checkpoints_are_refused(tmp_path: Path, edit, field: str) -> None:
    ck = tmp_path / "ck.json"
    PSO(_settings(2), checkpoint_path=ck).minimize(sphere, 3, BOUNDS)
    d = json.loads(ck.read_text())
    edit(d)
    ck.write_text(json.dumps(d))
    with pytest.raises(InputError) as e:
        PSOCheckpoint.load(ck)
    assert e.value.problems[0].source == str(ck) and e.value.problems[0].field == field


def test_truncated_checkpoint_and_other_settings_are_refused(tmp_path: Path) -> None:
    ck = tmp_path / "ck.json"
    PSO(_settings(2), checkpoint_path=ck).minimize(sphere, 3, BOUNDS)
    good = ck.read_bytes()
    ck.write_bytes(good[: len(good) // 2])
    with pytest.raises(InputError, match="not a vbp checkpoint"):
        PSOCheckpoint.load(ck)
    ck.write_bytes(good)
    other = PSOSettings(n_particles=8, iters=10, seed=3, patience=0)
    with pytest.raises(InputError) as e:
        PSO(other, checkpoint_path=ck, resume=True).minimize(sphere, 3, BOUNDS)
    assert any("n_particles" in p.field for p in e.value.problems)


_WRITER = """
import sys
import numpy as np
from policies.swarm.optimizer import PSOCheckpoint
path = sys.argv[1]
n = 60_000  # large enough that one save takes a while
k = 0
while True:
    k += 1
    a = np.full((n, 3), float(k))
    PSOCheckpoint(k, a, a, a, np.full(n, float(k)), np.zeros(3), float(k),
                  dict(np.random.default_rng(k).bit_generator.state)).save(path)
    print(k, flush=True)
"""


def test_a_process_killed_while_saving_leaves_a_valid_checkpoint(tmp_path: Path) -> None:
    # the writer saves back to back, so a kill at a random moment almost always lands in a save
    from packing.io.atomic import is_temporary

    ck = tmp_path / "ck.json"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    rng = np.random.default_rng(5)
    for _ in range(3):
        proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(ck)], stdout=subprocess.PIPE,
                                env=env, text=True)
        assert proc.stdout is not None
        assert proc.stdout.readline().strip()  # one complete save exists
        time.sleep(float(rng.uniform(0.05, 0.6)))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        loaded = PSOCheckpoint.load(ck)  # the previous (or the last complete) checkpoint, intact
        assert loaded.iteration >= 1
        assert np.all(loaded.position == float(loaded.iteration))
        others = [q for q in tmp_path.iterdir() if q != ck]
        assert all(is_temporary(q) for q in others)  # at most a named temporary, never a cut file
        ck.unlink()
        for q in others:
            q.unlink()


def test_keyboard_interrupt_keeps_the_last_complete_iteration_and_resume_is_exact(
        tmp_path: Path) -> None:
    ck = tmp_path / "ck.json"
    full = PSO(_settings()).minimize(sphere, 3, BOUNDS)
    calls = [0]

    def interrupted_at_the_sixth_call(x: np.ndarray) -> np.ndarray:
        calls[0] += 1
        if calls[0] == 6:  # Ctrl-C while iteration 5 (0-based) is evaluated
            raise KeyboardInterrupt
        return sphere(x)

    with pytest.raises(KeyboardInterrupt):
        PSO(_settings(), checkpoint_path=ck).minimize(interrupted_at_the_sixth_call, 3, BOUNDS)
    assert PSOCheckpoint.load(ck).iteration == 5
    assert [q.name for q in tmp_path.iterdir()] == ["ck.json"]  # no temporary file left
    rest = PSO(_settings(), checkpoint_path=ck, resume=True).minimize(sphere, 3, BOUNDS)
    assert rest.best_cost == full.best_cost
    assert np.array_equal(rest.best_position, full.best_position)
    assert rest.history == full.history and rest.evaluations == full.evaluations


def test_keyboard_interrupt_while_saving_keeps_the_previous_checkpoint(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ck = tmp_path / "ck.json"
    real = os.fsync
    saves = [0]

    def fsync(fd: int) -> None:
        real(fd)
        if stat.S_ISDIR(os.fstat(fd).st_mode):  # the folder, after the rename
            return
        saves[0] += 1
        if saves[0] == 4:  # Ctrl-C in the middle of the fourth save
            raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(KeyboardInterrupt):
        PSO(_settings(), checkpoint_path=ck).minimize(sphere, 3, BOUNDS)
    assert PSOCheckpoint.load(ck).iteration == 3
    assert [q.name for q in tmp_path.iterdir()] == ["ck.json"]


def test_resuming_a_run_that_ran_out_of_patience_adds_nothing(tmp_path: Path) -> None:
    ck = tmp_path / "ck.json"
    flat = PSOSettings(n_particles=4, iters=50, seed=1, patience=2)

    def constant(x: np.ndarray) -> np.ndarray:
        return np.ones(len(x))

    first = PSO(flat, checkpoint_path=ck).minimize(constant, 3, BOUNDS)
    assert first.stopped_early and len(first.history) == 3
    again = PSO(flat, checkpoint_path=ck, resume=True).minimize(constant, 3, BOUNDS)
    assert again.history == first.history and again.evaluations == first.evaluations
    assert PSOCheckpoint.load(ck).iteration == 3
