"""packing.io.atomic: a write replaces the target whole or not at all; the overwrite rule.

The signal tests run a real writer in a subprocess that stops half-way through its write (it has
written part of the new content into the temporary file) and send it a real SIGINT, SIGTERM or
SIGKILL there: the previous file must be intact; after SIGINT/SIGTERM no temporary is left;
after SIGKILL the one left is removed by the next write into that folder.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from packing.errors import InputError
from packing.io.atomic import (
    ANONYMOUS,
    TEMP_MARK,
    check_target,
    is_temporary,
    remove_stale_temporaries,
    temp_path,
    write_text,
    write_with,
)

REPO = Path(__file__).resolve().parents[3]


def temporaries(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if TEMP_MARK in p.name)


def test_write_replaces_whole_and_leaves_no_temporary(tmp_path: Path) -> None:
    f = tmp_path / "out.json"
    write_text(f, "old\n")
    write_text(f, "new\n")
    assert f.read_text() == "new\n"
    assert temporaries(tmp_path) == []


def test_write_keeps_the_mode_of_the_file_it_replaces(tmp_path: Path) -> None:
    f = tmp_path / "out.json"
    f.write_text("old")
    os.chmod(f, 0o640)
    write_text(f, "new")
    assert stat.S_IMODE(f.stat().st_mode) == 0o640


def test_an_exception_in_the_writer_leaves_the_target_and_no_temporary(tmp_path: Path) -> None:
    f = tmp_path / "out.csv"
    f.write_text("old")

    def half(tmp: Path) -> None:
        tmp.write_text("partial")
        raise RuntimeError("writer failed")

    with pytest.raises(RuntimeError):
        write_with(f, half)
    assert f.read_text() == "old"
    assert temporaries(tmp_path) == []


def test_temporary_names_are_visible_and_keep_the_suffix(tmp_path: Path) -> None:
    t = temp_path(tmp_path / "table.csv", pid=123)
    assert t.parent == tmp_path and not t.name.startswith(".")
    assert t.suffix == ".csv" and t.name.startswith("table.vbp-tmp-")
    assert t.name.split("-")[-2] == "123"
    assert is_temporary(t) and not is_temporary(tmp_path / "table.csv")


def dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_stale_temporaries_of_dead_processes_are_removed(tmp_path: Path) -> None:
    stale = temp_path(tmp_path / "a.json", pid=dead_pid())
    mine = temp_path(tmp_path / "b.json")
    other = tmp_path / "a.vbp-tmp-notes.json"  # not the pattern: never touched
    elsewhere = tmp_path / stale.name.replace(TEMP_MARK, TEMP_MARK + "another-machine_")
    for p in (stale, mine, other, elsewhere):
        p.write_text("x")
    assert remove_stale_temporaries(tmp_path) == [stale]
    assert not stale.exists() and mine.exists() and other.exists()
    assert is_temporary(elsewhere) and elsewhere.exists()  # another machine's pid: not ours to judge


def test_check_target_refuses_an_existing_file_without_force(tmp_path: Path) -> None:
    f = tmp_path / "out.json"
    check_target(f, "--out")  # does not exist: fine
    f.write_text("x")
    with pytest.raises(InputError) as e:
        check_target(f, "--out")
    assert "--force" in e.value.problems[0].reason
    check_target(f, "--out", force=True)


@pytest.mark.skipif(sys.platform == "win32", reason="links")
@pytest.mark.parametrize("link", ["same", "symlink", "hardlink"])
def test_check_target_refuses_an_input_even_with_force(tmp_path: Path, link: str) -> None:
    inp = tmp_path / "in.json"
    inp.write_text("{}")
    out = tmp_path / "out.json"
    if link == "same":
        out = inp
    elif link == "symlink":
        out.symlink_to(inp)
    else:
        os.link(inp, out)
    with pytest.raises(InputError) as e:
        check_target(out, "--out", force=True, inputs=["sigma", tmp_path / "missing.json", inp])
    assert "is the input file" in e.value.problems[0].reason
    assert e.value.problems[0].field == "--out"


WRITER = r"""
import signal, sys, time
from pathlib import Path
import packing.io.atomic
from packing.io.atomic import write_with

# a shell's defaults, whatever the test runs under (nohup ignores SIGHUP, and write_with leaves an
# ignored signal ignored)
for name in ("SIGTERM", "SIGHUP"):
    signal.signal(getattr(signal, name), signal.SIG_DFL)
packing.io.atomic.ANONYMOUS = sys.argv[2] == "anonymous"

def slow(tmp: Path) -> None:
    with tmp.open("w") as f:
        f.write("new, partial")
        f.flush()
        print("writing", flush=True)
        time.sleep(60)
        f.write(" and the rest")

write_with(sys.argv[1], slow)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("mode", [pytest.param("anonymous", marks=pytest.mark.skipif(
    not ANONYMOUS, reason="no anonymous files (O_TMPFILE) here")), "named"])
@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM", "SIGHUP", "SIGKILL"])
def test_a_signal_during_the_write_keeps_the_previous_file(tmp_path: Path, sig: str, mode: str) -> None:
    target = tmp_path / "table.csv"
    target.write_text("old table\n")
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(target), mode], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "writing"  # the temporary holds part of the new table
    # an anonymous temporary has no name in the folder; a named one is visible
    assert sorted(p.name for p in tmp_path.iterdir()) == (
        ["table.csv"] if mode == "anonymous" else sorted(["table.csv", temporaries(tmp_path)[0].name]))
    proc.send_signal(getattr(signal, sig))
    proc.communicate(timeout=30)
    assert proc.returncode != 0
    assert target.read_text() == "old table\n"
    left = temporaries(tmp_path)
    if mode == "anonymous":  # nothing was ever named: nothing is left, kill -9 included
        assert [p.name for p in tmp_path.iterdir()] == ["table.csv"]
    elif sig == "SIGKILL":  # no clean-up can run: one visible temporary, removed by the next write
        assert len(left) == 1 and not left[0].name.startswith(".")
        write_text(tmp_path / "other.csv", "x")
        assert temporaries(tmp_path) == []
    else:
        assert left == []
        if sig != "SIGINT":  # SIGINT: KeyboardInterrupt, which Python ends with the signal itself
            assert proc.returncode == 128 + getattr(signal, sig)


def test_no_signal_handler_is_left_behind(tmp_path: Path) -> None:
    before = signal.getsignal(signal.SIGTERM)
    write_text(tmp_path / "x.txt", "x")
    assert signal.getsignal(signal.SIGTERM) == before


# -- several files as one ---------------------------------------------------------------------------
def test_a_set_is_replaced_whole_or_not_at_all(tmp_path, monkeypatch) -> None:
    """write_texts: an error or Ctrl-C while the texts are written replaces none of the files, and
    a Ctrl-C during the renames waits until every file is in place; the message says which."""
    from packing.io import atomic
    from packing.io.atomic import SetInterrupted, write_texts

    a, b = tmp_path / "a.json", tmp_path / "b.yaml"
    a.write_text("old a")
    b.write_text("old b")
    assert write_texts([(a, "new a"), (b, "new b")]) == [a, b]
    assert (a.read_text(), b.read_text()) == ("new a", "new b")
    a.write_text("old a")
    b.write_text("old b")
    calls = []

    def fsync(fd: int) -> None:  # Ctrl-C while the second file is written
        calls.append(fd)
        if len(calls) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(atomic.os, "fsync", fsync)
    with pytest.raises(SetInterrupted, match="none of the 2 files was replaced"):
        write_texts([(a, "new a"), (b, "new b")])
    monkeypatch.undo()
    assert (a.read_text(), b.read_text()) == ("old a", "old b")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.yaml"]  # no temporary left
    with pytest.raises(InputError, match="cannot write"):  # the second folder is a file
        write_texts([(a, "new a"), (a / "x.yaml", "x")])
    assert a.read_text() == "old a"
    replace = os.replace

    def interrupted(src, dst):  # type: ignore[no-untyped-def]  # Ctrl-C between the renames
        if not calls:
            calls.append(1)
            os.kill(os.getpid(), signal.SIGINT)
        replace(src, dst)

    calls.clear()
    monkeypatch.setattr(atomic.os, "replace", interrupted)
    with pytest.raises(SetInterrupted, match="all 2 files were replaced"):
        write_texts([(a, "new a"), (b, "new b")])
    assert (a.read_text(), b.read_text()) == ("new a", "new b")
