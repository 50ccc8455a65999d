"""Connecting this process to an existing Ray cluster, with token authentication where it is used.

:func:`check` and :func:`connect` are what :class:`packing.sim.evaluation.RayExecutor` calls for an
address (the check when the executor is made, so that a command fails before any work). They check
the cluster before ``ray.init`` so that a wrong address or a missing token is one clear
:class:`~packing.errors.InputError` within seconds (``ray.init`` itself retries for about 20 s and
then names only the address):

1. the head node's port must accept a TCP connection within ``timeout`` seconds;
2. for a ``HOST:PORT`` address, one request to the cluster's control service (GCS) tells whether it
   wants a token. If it does and ``RAY_AUTH_MODE`` is not set, the token is taken from where Ray
   looks for it (in this order): the ``RAY_AUTH_TOKEN`` environment variable, the file named by
   ``RAY_AUTH_TOKEN_PATH``, or ``~/.ray/auth_token``; and token authentication is switched on for
   this process (``RAY_AUTH_MODE=token``), as ``ray.init`` does by itself for a cluster it finds
   without an address;
3. ``ray.init(address)`` runs with its connection retries bounded by ``timeout``.

``"auto"`` (the cluster ``ray start`` last started on this machine) goes to ``ray.init`` directly;
``ray://HOST:PORT`` (Ray Client) is checked for reachability only.
"""

from __future__ import annotations

import math
import os
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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

    Ray's order: ``RAY_AUTH_TOKEN``, then the file ``RAY_AUTH_TOKEN_PATH``, then ``~/.ray/auth_token``.
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


def _call_with_timeout(fn: Callable[[], Any], timeout: float) -> tuple[bool, Any]:
    """``(True, fn())``, ``(False, exception)``, or ``(False, None)`` after ``timeout`` s.

    On a timeout ``fn`` keeps running in a daemon thread.
    """
    box: list[Any] = []

    def target() -> None:
        try:
            box.append((True, fn()))
        except Exception as e:  # noqa: BLE001 - returned to the caller
            box.append((False, e))

    t = threading.Thread(target=target, name="vbp-ray-probe", daemon=True)
    with _quiet_stderr():  # Ray's C++ client logs a refused request as a warning line
        t.start()
        t.join(timeout)
    return box[0] if box else (False, None)


@contextmanager
def _quiet_stderr() -> Iterator[None]:
    """Send file descriptor 2 to the null device for the duration (no-op where it cannot)."""
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError, AttributeError):
        yield
        return
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


class EnvChanges:
    """Environment variables this module set for a connection; :meth:`restore` puts them back."""

    def __init__(self) -> None:
        self._saved: dict[str, str | None] = {}

    def set(self, name: str, value: str) -> None:
        """Set ``os.environ[name]``, remembering the value before the first change."""
        self._saved.setdefault(name, os.environ.get(name))
        os.environ[name] = value

    def restore(self) -> None:
        """Put every variable back as it was (unset if it was unset)."""
        changed = bool(self._saved)
        for name, value in self._saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        self._saved.clear()
        if changed and "ray" in sys.modules:
            _refresh_ray_config()


def _refresh_ray_config() -> None:
    """Make Ray's C++ side re-read ``RAY_*`` variables (the auth mode) and forget a cached token."""
    from ray._raylet import AuthenticationTokenLoader, Config  # type: ignore[attr-defined]

    Config.initialize("")
    AuthenticationTokenLoader.instance().reset_cache()


def ensure_token(address: str, timeout: float, env: EnvChanges) -> None:
    """Switch on token authentication when the cluster at ``address`` wants it (see the module doc).

    Raises:
        InputError: the cluster wants a token and this machine has none, or has another one; or
            the port answers but not as a Ray cluster's control service.
    """
    try:
        from ray._raylet import GcsClient  # type: ignore[attr-defined]
        from ray.exceptions import AuthenticationError
    except ImportError:  # a Ray without token authentication: nothing to do
        return

    def probe() -> tuple[bool, Any]:
        return _call_with_timeout(lambda: GcsClient(address=address, cluster_id=None).cluster_id,
                                  timeout)

    ok, err = probe()
    if ok:
        return
    if err is None:
        raise input_error(OPTION, address, f"the port answers but no Ray cluster replied within "
                          f"{timeout:g} s: check that this is the head node's GCS port (the "
                          "--port of `ray start --head`, 6379 by default)")
    if not isinstance(err, AuthenticationError):
        raise input_error(OPTION, address, f"not a Ray cluster, or one this Ray cannot talk to: "
                          f"{_first_line(err)}")
    mode = os.environ.get("RAY_AUTH_MODE")
    source = token_source()
    if mode is not None and mode.lower() == "token":
        raise input_error(OPTION, address, "the cluster refused this machine's token "
                          f"({source or 'none found'}): {TOKEN_HELP}")
    if mode is not None:
        raise input_error(OPTION, address, f"the cluster uses token authentication but "
                          f"RAY_AUTH_MODE={mode} here: unset it (or set it to token) and {TOKEN_HELP}")
    if source is None:
        raise input_error(OPTION, address, f"the cluster uses token authentication and this "
                          f"machine has no token: {TOKEN_HELP}")
    env.set("RAY_AUTH_MODE", "token")
    _refresh_ray_config()
    ok, err = probe()
    if not ok:
        raise input_error(OPTION, address, f"the cluster refused the token from {source}: "
                          f"{TOKEN_HELP}" if isinstance(err, AuthenticationError) else
                          f"could not connect with the token from {source}: {_first_line(err)}")


def _first_line(err: BaseException | None) -> str:
    text = str(err).strip().splitlines() if err is not None else []
    return text[0] if text else type(err).__name__


@contextmanager
def _bounded_retries(timeout: float) -> Iterator[None]:
    """Bound ``ray.init``'s connection retries (about one a second) by ``timeout``.

    A ``RAY_gcs_server_port_wait_time_s`` the user set is left as it is.
    """
    name = "RAY_gcs_server_port_wait_time_s"
    if name in os.environ:
        yield
        return
    os.environ[name] = str(max(1, math.ceil(timeout)))  # read by Python, not by Ray's C++ config
    try:
        yield
    finally:
        os.environ.pop(name, None)


def check(address: str, timeout: float = 10.0) -> EnvChanges:
    """Check that the cluster at ``address`` can be reached and takes this machine's token.

    The first two steps of the module docstring; ``ray.init`` is not called.

    Args:
        address: ``HOST:PORT`` (the head node's GCS), ``ray://HOST:PORT`` (Ray Client) or ``auto``
            (not checked).
        timeout: seconds for each check.

    Returns:
        The environment variables set for the connection (``RAY_AUTH_MODE=token`` when the
        cluster wants a token); ``restore()`` them after ``ray.shutdown()``.

    Raises:
        InputError: the cluster cannot be reached or refuses this machine (naming the address and
            what to check).
    """
    env = EnvChanges()
    if address != "auto":
        check_reachable(address, timeout)
    if address != "auto" and not address.startswith("ray://"):
        ensure_token(address, timeout, env)
    return env


def connect(address: str, timeout: float = 10.0, env: EnvChanges | None = None,
            **init_options: Any) -> EnvChanges:
    """Connect this process to the Ray cluster at ``address`` (``ray.init``), checking it first.

    Args:
        address: ``HOST:PORT`` (the head node's GCS), ``ray://HOST:PORT`` (Ray Client) or ``auto``.
        timeout: seconds for each check and for ``ray.init``'s connection retries.
        env: what :func:`check` returned for this address (then it is not checked again).
        **init_options: more keyword arguments of ``ray.init``.

    Returns:
        The environment variables set for the connection (``restore()`` them after
        ``ray.shutdown()``).

    Raises:
        InputError: the cluster cannot be reached or refuses this machine (naming the address and
            what to check).
    """
    import ray

    if env is None:
        env = check(address, timeout)
    try:
        with _bounded_retries(timeout):
            ray.init(address=address, **init_options)
    except (ConnectionError, RuntimeError) as e:
        env.restore()
        raise input_error(OPTION, address, f"could not connect to the Ray cluster: {_first_line(e)} "
                          "(check the address, that the cluster runs the same Ray and Python "
                          "versions as this machine, and its token)") from None
    except BaseException:
        env.restore()
        raise
    return env


__all__ = ["OPTION", "TOKEN_HELP", "EnvChanges", "check", "check_reachable", "connect", "ensure_token",
           "split_address", "token_source"]
