"""Connecting this process to an existing Ray cluster, with token authentication where it is used.

:func:`check` and :func:`connect` are what :class:`packing.sim.evaluation.RayExecutor` calls for an
address (the check when the executor is made, so that a command fails before any work). They check
the cluster before ``ray.init`` so that a wrong address or a missing token is one clear
:class:`~packing.errors.InputError` within seconds (``ray.init`` itself retries for about 20 s and
then names only the address). Ray is used through its public API and documented settings only:

1. the head node's port must accept a TCP connection within ``timeout`` seconds (plain sockets);
2. for a ``HOST:PORT`` address, the token settings are chosen from Ray's documented ones: when
   ``RAY_AUTH_MODE`` is not set and this machine has a token where Ray looks for it (in this
   order: the ``RAY_AUTH_TOKEN`` environment variable, the file named by ``RAY_AUTH_TOKEN_PATH``,
   ``~/.ray/auth_token``), token authentication is switched on for this process
   (``RAY_AUTH_MODE=token``), as ``ray.init`` does by itself (since Ray 2.59) for the local
   cluster it finds without an address. A cluster without token authentication accepts such a
   connection too (as Ray 2.60 does). Ray's documentation has the variable set before Ray starts,
   and a Ray already imported may have read it, so this is done only while this process has not
   imported Ray;
3. a new Python process runs ``ray.init(address)`` with these settings and is stopped after
   ``timeout`` seconds (its own import of Ray not counted). A new process reads the settings
   afresh, and a connection that does not succeed in time cannot hold this process up;
4. ``ray.init(address)`` runs here.

What public API cannot tell is why a connection fails: Ray keeps retrying a cluster that refuses
its token (or a port that is not a Ray cluster's, or a head node this machine runs no node of)
until it gives up with a ``ConnectionError`` that names the address only. So the message of a
failed check says what this machine presented (no token, or the token from where it was found)
and lists the likely causes; it cannot say that the cluster uses token authentication, nor that
it refused the token. A token setting Ray itself rejects before connecting (``RAY_AUTH_TOKEN_PATH``
naming a missing or empty file) raises the public ``ray.exceptions.AuthenticationError``, and its
message is passed on. Step 4 is bounded only by step 3 having just connected: Ray has no
documented setting for ``ray.init``'s own retries.

The check connects once as a driver of its own (a short job on the cluster, ended at once).

``"auto"`` (the cluster ``ray start`` last started on this machine) goes to ``ray.init`` directly;
``ray://HOST:PORT`` (Ray Client) is checked for reachability only.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packing.errors import input_error

OPTION = "--ray-address"
"""The option the address comes from (the field of every error)."""

TOKEN_HELP = ("give this machine the cluster's token: copy the head node's ~/.ray/auth_token "
              "(`ray get-auth-token` on the head prints it) to ~/.ray/auth_token here, or set "
              "RAY_AUTH_TOKEN or RAY_AUTH_TOKEN_PATH")


def split_address(address: str) -> tuple[str, int]:
    """``(host, port)`` of ``HOST:PORT``, ``[IPv6]:PORT`` or ``ray://HOST:PORT``.

    Raises:
        InputError: no port, or a port that is not a number in 1..65535.
    """
    rest = address.split("://", 1)[1] if "://" in address else address
    host, sep, port = rest.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise input_error(OPTION, address, "expected HOST:PORT (the head node's address and GCS "
                          "port, 6379 unless `ray start --head --port` said otherwise), 'auto', or "
                          "ray://HOST:PORT")
    return host.strip("[]"), int(port)


def token_source() -> str | None:
    """Where Ray would take this process's token from, or ``None`` when there is none.

    Ray's documented order (https://docs.ray.io/en/latest/ray-security/token-auth.html):
    ``RAY_AUTH_TOKEN``, then the file ``RAY_AUTH_TOKEN_PATH``, then ``~/.ray/auth_token``.
    """
    if os.environ.get("RAY_AUTH_TOKEN"):
        return "RAY_AUTH_TOKEN"
    path = os.environ.get("RAY_AUTH_TOKEN_PATH")
    if path:
        return f"RAY_AUTH_TOKEN_PATH={path}"
    default = Path.home() / ".ray" / "auth_token"
    return str(default) if default.is_file() and default.stat().st_size > 0 else None


def check_reachable(address: str, timeout: float) -> None:
    """Raise unless the head node at ``address`` accepts a TCP connection within ``timeout`` s.

    Raises:
        InputError: naming the address, why it failed, and what to check.
    """
    host, port = split_address(address)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except OSError as e:
        why = (f"no answer within {timeout:g} s" if isinstance(e, TimeoutError)
               else (e.strerror or type(e).__name__).lower())
        raise input_error(OPTION, address, f"no Ray cluster answers there ({why}): check that "
                          f"the head node runs (`ray start --head --port {port}` on {host}), the "
                          "host and port, and that this machine can reach that port (firewall)"
                          ) from None


PROBE_MARKER = "vbp-ray-probe: "
"""The prefix of the one line the probe process reports on (its other output is Ray's)."""

IMPORT_ALLOWANCE = 60.0
"""Seconds the probe process may take, beyond the connection's ``timeout``, to start and import Ray."""

_PROBE_SCRIPT = """\
import json, os, sys, threading
sys.path = [p for p in sys.path if p]  # not the working directory: the Ray this Python has
address, timeout, marker = sys.argv[1], float(sys.argv[2]), sys.argv[3]
lock = threading.Lock()

def report(outcome, error=None):
    lock.acquire()  # one report: the other caller waits here until the process ends
    line = {"outcome": outcome}
    if error is not None:
        line["error"] = type(error).__name__
        line["message"] = str(error.args[0]) if error.args else str(error)
    sys.stdout.write(marker + json.dumps(line) + "\\n")
    sys.stdout.flush()

import ray
import ray.exceptions

def give_up():
    report("timeout")
    os._exit(0)

timer = threading.Timer(timeout, give_up)
timer.daemon = True
timer.start()
try:
    ray.init(address=address, log_to_driver=False, logging_level="ERROR")
except BaseException as e:
    auth = getattr(ray.exceptions, "AuthenticationError", None)
    report("auth" if auth is not None and isinstance(e, auth)
           else "connection" if isinstance(e, ConnectionError) else "error", e)
    os._exit(0)
timer.cancel()
report("ok")
ray.shutdown()
os._exit(0)
"""
"""Run by a new Python as ``-c SCRIPT ADDRESS TIMEOUT MARKER``: one ``ray.init(ADDRESS)``, reported
as one line ``MARKER {"outcome": ...}``; the outcome is ``ok``, ``timeout`` (no connection within
TIMEOUT seconds of importing Ray), ``auth`` (Ray raised ``ray.exceptions.AuthenticationError``),
``connection`` (a ``ConnectionError``: Ray gave up retrying) or ``error`` (any other exception)."""


@dataclass(frozen=True)
class Probe:
    """How one connection attempt from a new process ended.

    Attributes:
        outcome: ``"ok"``, ``"timeout"``, ``"auth"``, ``"connection"`` or ``"error"`` (see
            :data:`_PROBE_SCRIPT`).
        error: the exception's type name (empty unless it raised one).
        message: the exception's message (empty unless it raised one).
    """

    outcome: str
    error: str = ""
    message: str = ""

    @property
    def ok(self) -> bool:
        """Whether the process connected."""
        return self.outcome == "ok"

    def first_line(self) -> str:
        """``Type: first line of the message`` of the exception."""
        lines = self.message.strip().splitlines()
        return f"{self.error}: {lines[0]}" if lines else self.error


def probe(address: str, timeout: float) -> Probe:
    """Try ``ray.init(address)`` in a new Python process with this process's environment.

    The process is stopped ``timeout`` seconds after it imported Ray (and in any case after
    ``timeout`` + :data:`IMPORT_ALLOWANCE` seconds); its output other than the report is dropped.

    Args:
        address: ``HOST:PORT`` of the head node's GCS.
        timeout: seconds for the connection.

    Returns:
        How the attempt ended.
    """
    posix = os.name == "posix"
    proc = subprocess.Popen([sys.executable, "-c", _PROBE_SCRIPT, address, f"{timeout:g}", PROBE_MARKER],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, errors="replace",
                            start_new_session=posix)
    out = err = ""
    try:
        out, err = proc.communicate(timeout=timeout + IMPORT_ALLOWANCE)
    except subprocess.TimeoutExpired:
        pass
    finally:
        if proc.poll() is None:  # timed out, or this process was interrupted: stop it and its children
            if posix:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
            else:  # pragma: no cover - Windows
                proc.kill()
            out, err = proc.communicate()
    for line in reversed(out.splitlines()):
        if line.startswith(PROBE_MARKER):
            try:
                report: dict[str, Any] = json.loads(line[len(PROBE_MARKER):])
            except ValueError:
                break
            return Probe(str(report.get("outcome", "error")), str(report.get("error", "")),
                         str(report.get("message", "")))
    if proc.returncode not in (0, -getattr(signal, "SIGKILL", 9)):  # it failed before it could report
        last = [ln for ln in err.splitlines() if ln.strip()][-1:] or [f"exit status {proc.returncode}"]
        return Probe("error", "a new Python process failed", last[0].strip())
    return Probe("timeout")


class EnvChanges:
    """Environment variables this module set for a connection; :meth:`restore` puts them back.

    Restoring changes the environment only: a Ray this process imported keeps what it read.
    """

    def __init__(self) -> None:
        self._saved: dict[str, str | None] = {}

    def set(self, name: str, value: str) -> None:
        """Set ``os.environ[name]``, remembering the value before the first change."""
        self._saved.setdefault(name, os.environ.get(name))
        os.environ[name] = value

    def restore(self) -> None:
        """Put every variable back as it was (unset if it was unset)."""
        for name, value in self._saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        self._saved.clear()


def check_connects(address: str, timeout: float, env: EnvChanges) -> None:
    """Choose the token settings for ``address`` and check that a new process connects with them.

    Steps 2 and 3 of the module docstring.

    Raises:
        InputError: no connection within ``timeout`` seconds, or Ray refused the token settings
            (naming what this machine presented and what to check).
    """
    mode = os.environ.get("RAY_AUTH_MODE")
    source = token_source()
    if mode is None and source is not None and "ray" not in sys.modules:
        env.set("RAY_AUTH_MODE", "token")
    sends = os.environ.get("RAY_AUTH_MODE", "").lower() == "token"
    try:
        result = probe(address, timeout)
    except BaseException:
        env.restore()
        raise
    if result.ok:
        return
    env.restore()
    raise input_error(OPTION, address, _failure(result, timeout, mode, source, sends))


def _failure(result: Probe, timeout: float, mode: str | None, source: str | None, sends: bool) -> str:
    """The reason of the error for a failed probe.

    Args:
        result: how the probe ended.
        timeout: its timeout.
        mode: ``RAY_AUTH_MODE`` as the user set it (``None``: not set).
        source: where this machine's token is (:func:`token_source`).
        sends: whether the probe ran with token authentication on.
    """
    if result.outcome == "auth":
        return f"Ray rejects this machine's token settings ({result.first_line()}): {TOKEN_HELP}"
    if result.outcome == "error":
        return (f"could not connect to the Ray cluster: {result.first_line()} (check that the cluster "
                "runs the same Ray and Python versions as this machine)")
    none = f"no connection within {timeout:g} s"
    port = ("that the port is the head node's GCS port (`ray start --head --port`, 6379 by default) "
            "and that this machine runs a node of the cluster")
    if sends and source is None:
        return f"RAY_AUTH_MODE=token here but this machine has no token: {TOKEN_HELP}"
    if sends:
        return (f"{none} with the token from {source}: check that it is the cluster's token "
                f"({TOKEN_HELP}), {port}")
    if mode is not None:
        return (f"{none} with RAY_AUTH_MODE={mode} here (no token sent): if the cluster uses token "
                f"authentication, unset RAY_AUTH_MODE (or set it to token) and {TOKEN_HELP}; check {port}")
    if source is not None:
        return (f"{none} without a token: Ray was imported in this process before token authentication "
                f"could be switched on for the token from {source}; if the cluster uses token "
                f"authentication, set RAY_AUTH_MODE=token before Python starts; check {port}")
    return (f"{none} and this machine has no token: if the cluster uses token authentication, "
            f"{TOKEN_HELP}; check {port}")


def check(address: str, timeout: float = 10.0) -> EnvChanges:
    """Check that the cluster at ``address`` can be reached and lets this machine connect.

    The first three steps of the module docstring; ``ray.init`` is not called in this process.

    Args:
        address: ``HOST:PORT`` (the head node's GCS), ``ray://HOST:PORT`` (Ray Client) or ``auto``
            (not checked).
        timeout: seconds for each check.

    Returns:
        The environment variables set for the connection (``RAY_AUTH_MODE=token`` when this
        machine has a token and the mode was not set); ``restore()`` them after ``ray.shutdown()``.

    Raises:
        InputError: the cluster cannot be reached or does not let this machine connect (naming the
            address and what to check).
    """
    env = EnvChanges()
    if address != "auto":
        check_reachable(address, timeout)
    if address != "auto" and not address.startswith("ray://"):
        check_connects(address, timeout, env)
    return env


def connect(address: str, timeout: float = 10.0, env: EnvChanges | None = None,
            **init_options: Any) -> EnvChanges:
    """Connect this process to the Ray cluster at ``address`` (``ray.init``), checking it first.

    Args:
        address: ``HOST:PORT`` (the head node's GCS), ``ray://HOST:PORT`` (Ray Client) or ``auto``.
        timeout: seconds for each check.
        env: what :func:`check` returned for this address (then it is not checked again).
        **init_options: more keyword arguments of ``ray.init``.

    Returns:
        The environment variables set for the connection (``restore()`` them after
        ``ray.shutdown()``).

    Raises:
        InputError: the cluster cannot be reached or does not let this machine connect (naming the
            address and what to check).
    """
    if env is None:
        env = check(address, timeout)
    import ray

    try:
        ray.init(address=address, **init_options)
    except (ConnectionError, RuntimeError) as e:
        env.restore()
        text = str(e).strip().splitlines()
        raise input_error(OPTION, address, "could not connect to the Ray cluster: "
                          f"{text[0] if text else type(e).__name__} (check the address, that the "
                          "cluster runs the same Ray and Python versions as this machine, and its "
                          "token)") from None
    except BaseException:
        env.restore()
        raise
    return env


__all__ = ["IMPORT_ALLOWANCE", "OPTION", "PROBE_MARKER", "TOKEN_HELP", "EnvChanges", "Probe", "check",
           "check_connects", "check_reachable", "connect", "probe", "split_address", "token_source"]
