"""Writing output files safely: never over an input, never over a file unasked, never half-written.

Every file vbp writes (instances, placements, tables, plots, policies, model files) goes through
:func:`atomic_path` (or :func:`write_text` / :func:`write_with`, built on it):

* on Linux the content is written to an *anonymous* file in the target's folder (``O_TMPFILE``:
  it has no name, so a process killed while writing leaves nothing behind, ``kill -9`` included);
  the writer gets it as ``/proc/self/fd/<n>`` (a writer that picks a format by suffix must be told
  the format). When the write is done the file is flushed to disk, given a name
  ``<stem>.vbp-tmp-<host>-<pid>-<random><suffix>`` (``linkat``) and renamed over the target in one
  step (:func:`os.replace`): the name exists only for the instant between those two calls. Where
  anonymous files are not supported (another system, a file system without them) the temporary
  is named from the start. The previous file stays intact until the rename, and readers see either
  the old or the new file, never a part;
* on any exception, Ctrl-C (SIGINT), SIGTERM or SIGHUP during the write, the temporary is removed
  and the target left as it was;
* several files of one run (:func:`write_texts`) are replaced all or none: every temporary is
  written first, then they are renamed with the catchable signals held back;
* a ``kill -9`` (or a power cut) cannot run any clean-up: in the instant between naming and
  renaming (or during the whole write, without anonymous files) it may leave one temporary file of
  that pattern next to the target, never a damaged target. The next write into that folder removes
  temporaries of this machine (``<host>``) whose process id (``<pid>``) no longer runs
  (:func:`remove_stale_temporaries`); those of other machines sharing the folder are left alone.

:func:`check_target` is the rule for output paths, checked before any work: an output that is one
of the inputs (the same file after symbolic and hard links, compared by device and inode) is
refused, even with ``--force``; an existing file is refused unless ``force`` is given.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import signal
import socket
import stat
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from types import FrameType

from packing.errors import InputError, Problem

TEMP_MARK = ".vbp-tmp-"
"""What the name of every temporary file vbp writes contains (after the target's stem)."""

_TEMP_RE = re.compile(r"^.*\.vbp-tmp-(?P<host>[A-Za-z0-9_-]+)-(?P<pid>[0-9]+)-[0-9a-f]{8}"
                      r"(\.[^.]*)?$")


def _host() -> str:
    """This machine's name as it appears in temporary names (letters, digits, ``_``, ``-``)."""
    name = re.sub(r"[^A-Za-z0-9_-]", "_", socket.gethostname())[:40]
    return name or "host"

_SIGNALS = tuple(getattr(signal, n) for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n))
"""Signals turned into a clean exit (temporary removed) while a file is being written."""


def temp_path(target: str | Path, pid: int | None = None) -> Path:
    """A fresh temporary name beside ``target``: ``<stem>.vbp-tmp-<host>-<pid>-<8 hex><suffix>``."""
    t = Path(target)
    pid = os.getpid() if pid is None else pid
    return t.with_name(f"{t.stem}{TEMP_MARK}{_host()}-{pid}-{secrets.token_hex(4)}{t.suffix}")


def is_temporary(path: str | Path) -> bool:
    """Whether ``path`` is named like a temporary file of :func:`atomic_path`."""
    return _TEMP_RE.match(Path(path).name) is not None


def _running(pid: int) -> bool:
    """Whether a process with this id exists (on this machine)."""
    if pid <= 0:
        return True  # not ours to judge
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # PermissionError: it exists, owned by someone else
        return True
    return True


def remove_stale_temporaries(folder: str | Path) -> list[Path]:
    """Remove the temporaries in ``folder`` left by vbp processes that no longer run.

    Only regular files named like :func:`temp_path` by this machine whose process id is not
    running are removed (a ``kill -9`` during a write leaves such a file). A temporary of a running
    process, including this one, or of another machine (a shared folder) is kept. Errors (a file
    vanished, no permission) are ignored.

    Returns:
        The files removed.
    """
    removed: list[Path] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    me, host = os.getpid(), _host()
    for e in entries:
        m = _TEMP_RE.match(e.name)
        if m is None or m.group("host") != host:
            continue
        pid = int(m.group("pid"))
        try:
            if pid == me or _running(pid) or not e.is_file(follow_symlinks=False):
                continue
            os.unlink(e.path)
            removed.append(Path(e.path))
        except OSError:
            continue
    return removed


def _same_file(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def check_target(path: str | Path | None, option: str, *, force: bool = False,
                 inputs: Iterable[str | Path | None] = (),
                 remedy: str = "pass --force to replace it, or choose another file") -> None:
    """Refuse an output path that would destroy an input, or replace a file without ``force``.

    Args:
        path: the output path (``None``: nothing to check).
        option: the option naming it, for the message (e.g. ``"--out"``).
        force: whether an existing file may be replaced (``--force``).
        inputs: the files the command reads (paths that do not exist, or are not files, are
            skipped). The output may not be any of them, even with ``force``: compared by device
            and inode, so a symbolic or hard link to an input is the input.
        remedy: what the message for an existing file suggests.

    Raises:
        InputError: naming the path, the option and the reason.
    """
    if path is None:
        return
    try:
        out = os.stat(path)
    except OSError:
        return  # does not exist (or cannot be examined: writing will say why)
    for inp in inputs:
        if inp is None:
            continue
        try:
            st = os.stat(inp)
        except OSError:
            continue
        if _same_file(out, st):
            raise InputError([Problem(str(path), option, f"is the input file {str(inp)!r}; "
                                      "writing there would destroy it (choose another file; "
                                      "--force does not change this)")])
    if not force:
        raise InputError([Problem(str(path), option, f"already exists; {remedy}")])


def check_writable(path: str | Path, option: str) -> None:
    """An output path that can be written (missing folders are created when writing).

    The target is not a folder and, when it exists, is writable; the nearest existing parent is a
    folder vbp may write in.

    Raises:
        InputError: naming the path, the option and the reason.
    """
    p = Path(path)

    def bad(reason: str) -> InputError:
        return InputError([Problem(str(path), option, reason)])

    if p.is_dir():
        raise bad("is a folder, expected a file name")
    if p.exists() and not os.access(p, os.W_OK):
        raise bad("cannot be written (permission denied)")
    parent = p.parent if str(p.parent) else Path(".")
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise bad(f"cannot be written: {str(parent)!r} is not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise bad(f"cannot be written: no permission to write in folder {str(parent)!r}")


def same_file(a: str | Path, b: str | Path) -> bool:
    """Whether ``a`` and ``b`` are the same existing file (device and inode; links followed)."""
    try:
        return _same_file(os.stat(a), os.stat(b))
    except OSError:
        return False


@contextlib.contextmanager
def _signals_exit() -> Iterator[None]:
    """While writing, SIGTERM and SIGHUP raise :class:`SystemExit` (128 + signal).

    So the temporary is removed. Only in the main thread, and only where the default action is
    set (a handler someone installed is left alone).
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: FrameType | None) -> None:
        raise SystemExit(128 + signum)

    previous = {}
    for s in _SIGNALS:
        try:
            if signal.getsignal(s) == signal.SIG_DFL:
                previous[s] = signal.signal(s, handler)
        except (OSError, ValueError):
            continue
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def _cannot_write(path: Path, e: OSError) -> InputError:
    return InputError([Problem(str(path), "", f"cannot write: {e.strerror or e}")])


ANONYMOUS = sys.platform.startswith("linux") and hasattr(os, "O_TMPFILE")
"""Whether this system can write anonymous files (``O_TMPFILE``); tests may switch it off."""


def _anonymous(folder: Path) -> int | None:
    """A descriptor of a new anonymous file in ``folder``, or ``None`` where there are none."""
    if not ANONYMOUS:
        return None
    try:
        return os.open(folder, os.O_TMPFILE | os.O_RDWR, 0o600)
    except OSError:  # e.g. a file system without O_TMPFILE
        return None


def _link(fd: int, name: Path) -> None:
    """Give the anonymous file ``fd`` the name ``name`` (``linkat`` through ``/proc/self/fd``)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    at_fdcwd, at_symlink_follow = -100, 0x400
    if libc.linkat(at_fdcwd, f"/proc/self/fd/{fd}".encode(), at_fdcwd, os.fsencode(name),
                   at_symlink_follow) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), str(name))


def _mode(target: Path) -> int:
    """The mode the new file gets: the replaced file's, else ``0666 & ~umask``."""
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path to write; on success it replaces ``path`` in one rename.

    The temporary is in the target's folder (created if missing) and named by
    :func:`temp_path`. When the block ends normally the file is flushed to disk, given the mode
    of the file it replaces (else the usual ``0666 & ~umask``) and renamed over the target (a
    symbolic link target is followed: the file it points to is replaced). On any exception,
    SIGINT, SIGTERM or SIGHUP it is removed and the target is untouched. Stale temporaries of dead
    vbp processes in the folder are removed first (:func:`remove_stale_temporaries`).

    Raises:
        InputError: the folder or file cannot be written (naming it and the reason).
    """
    target = Path(path)
    if target.is_symlink():
        target = Path(os.path.realpath(target))
    folder = target.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise _cannot_write(target, e) from None
    remove_stale_temporaries(folder)
    with _signals_exit():
        tmp = temp_path(target)
        anonymous = _anonymous(folder)
        if anonymous is None:  # a named temporary from the start
            try:
                os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            except OSError as e:
                raise _cannot_write(target, e) from None
        fd = anonymous
        try:
            yield tmp if anonymous is None else Path(f"/proc/self/fd/{anonymous}")
            if fd is None:
                fd = os.open(tmp, os.O_RDONLY)
            os.fsync(fd)
            os.fchmod(fd, _mode(target))
            if anonymous is not None:
                _link(anonymous, tmp)  # the temporary gets its name only now
            os.replace(tmp, target)
        except OSError as e:
            tmp.unlink(missing_ok=True)
            raise _cannot_write(target, e) from None
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        finally:
            if fd is not None:
                os.close(fd)
    _sync_folder(folder)


def _sync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable (best effort)."""
    with contextlib.suppress(OSError):
        dfd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


def write_with(path: str | Path, write: Callable[[Path], object]) -> Path:
    """Write ``path`` atomically with ``write(tmp)``, a callback that writes the file it is given.

    For writers that take a path (``torch.save``, ``fig.savefig``, ``pyarrow.parquet``). The path
    given may have no suffix (an anonymous file): a writer that picks its format by suffix must be
    told the format (``fig.savefig(tmp, format=...)``, :func:`save_figure`). Returns ``path``.
    """
    with atomic_path(path) as tmp:
        write(tmp)
    return Path(path)


def save_figure(fig: object, path: str | Path, **kwargs: object) -> Path:
    """Save a matplotlib figure atomically, in the format of ``path``'s suffix (PNG, SVG, PDF...)."""
    fmt = Path(path).suffix.lstrip(".").lower() or None
    return write_with(path, lambda tmp: fig.savefig(tmp, format=fmt, **kwargs))  # type: ignore[attr-defined]


def write_text(path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically. Returns ``path``."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)


class SetInterrupted(KeyboardInterrupt):
    """Ctrl-C while :func:`write_texts` wrote a set of files; the message says which were replaced."""


_HELD = tuple(getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n))
"""Signals held back while the files of a set are renamed into place."""


@contextlib.contextmanager
def _deferred() -> Iterator[list[int]]:
    """Hold SIGINT, SIGTERM and SIGHUP back: the signals that arrive are listed, not acted on.

    Only in the main thread (where Python runs signal handlers); an ignored signal stays ignored.
    """
    caught: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield caught
        return
    previous = {}
    for s in _HELD:
        with contextlib.suppress(OSError, ValueError):
            if signal.getsignal(s) is not signal.SIG_IGN:
                previous[s] = signal.signal(s, lambda signum, frame: caught.append(signum))
    try:
        yield caught
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def write_texts(items: Iterable[tuple[str | Path, str]]) -> list[Path]:
    """Write several files as one: every file replaced, or none (UTF-8 texts).

    Every text is first written in full to a temporary beside its target and flushed to disk; an
    error, Ctrl-C, SIGTERM or SIGHUP in that phase removes them all and replaces nothing. Then the
    temporaries are renamed over their targets one after another with SIGINT, SIGTERM and SIGHUP
    held back, so no signal a process can catch separates them (a signal that arrives then acts
    once every file is in place). Only ``kill -9`` or a power cut in those microseconds can leave
    the set part old, part new (and a temporary of the :func:`temp_path` pattern, removed by the
    next write).

    Returns:
        The targets, in order.

    Raises:
        SetInterrupted: Ctrl-C; its message says whether none or all of the files were replaced.
        InputError: a folder or file cannot be written (nothing replaced).
    """
    pairs = [(Path(os.path.realpath(p)) if Path(p).is_symlink() else Path(p), t) for p, t in items]
    n = len(pairs)
    done: list[tuple[Path, Path]] = []
    with _signals_exit():
        try:
            for target, text in pairs:
                try:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    remove_stale_temporaries(target.parent)
                    tmp = temp_path(target)
                    with open(tmp, "x", encoding="utf-8") as f:
                        done.append((tmp, target))
                        f.write(text)
                        f.flush()
                        os.fsync(f.fileno())
                    os.chmod(tmp, _mode(target))
                except OSError as e:
                    raise _cannot_write(target, e) from None
        except BaseException as e:
            for tmp, _ in done:
                tmp.unlink(missing_ok=True)
            if isinstance(e, KeyboardInterrupt):
                raise SetInterrupted(f"none of the {n} files was replaced") from None
            raise
        with _deferred() as caught:
            for tmp, target in done:
                os.replace(tmp, target)
        if caught:
            if caught[0] == getattr(signal, "SIGINT", None):
                raise SetInterrupted(f"all {n} files were replaced")
            raise SystemExit(128 + caught[0])
    for folder in {t.parent for _, t in done}:
        _sync_folder(folder)
    return [p for p, _ in pairs]


__all__ = ["ANONYMOUS", "TEMP_MARK", "SetInterrupted", "atomic_path", "check_target", "check_writable",
           "is_temporary", "remove_stale_temporaries", "same_file", "save_figure", "temp_path",
           "write_text", "write_texts", "write_with"]
