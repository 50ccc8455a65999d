"""Connecting to an existing Ray cluster: the checks before ``ray.init``, and a real two-node cluster.

The cluster test starts Ray as a user would, as separate processes on loopback (``ray start --head``
and one more node with ``ray start --address``, the commands of docs/scale-out.md), with token
authentication on: the head finds a token in ``~/.ray/auth_token`` (as Ray makes one for its first
local cluster) and switches it on by itself; the other node is told with ``RAY_AUTH_MODE=token``,
as Ray wants on every node it adds. Then the documented ``vbp compare``, ``vbp sweep`` and ``vbp
train swarm`` commands with ``--ray-address`` must give the serial numbers, and a machine without
the token or with another one gets one line and exit status 2. The cluster is
stopped by terminating the two ``ray start --block`` processes this test started (each stops the
Ray processes of its node); ``ray stop`` would stop every Ray of this user on the machine.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import re
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import types
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from packing.errors import InputError
from packing.sim import ray_cluster
from packing.sim.ray_cluster import (
    EnvChanges,
    Probe,
    check_connects,
    check_reachable,
    split_address,
    token_source,
)
from vbp.cli import cli

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "scale-out.md"
DOC_ADDRESS = "HEAD_IP:6379"
RAY_VARS = ("RAY_ADDRESS", "RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")


def free_port() -> int:
    """A TCP port nothing listens on now (the OS picks it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# ------------------------------------------------------------------------------------------------
# the checks, without a cluster
@pytest.mark.parametrize(("address", "want"), [
    ("127.0.0.1:6379", ("127.0.0.1", 6379)), ("head.example:1", ("head.example", 1)),
    ("ray://head:10001", ("head", 10001)), ("[::1]:6380", ("::1", 6380)),
])
def test_split_address(address: str, want: tuple[str, int]) -> None:
    assert split_address(address) == want


@pytest.mark.parametrize("address", ["head", "head:", ":6379", "head:port", "head:0", "head:70000"])
def test_split_address_refuses_a_missing_or_bad_port(address: str) -> None:
    with pytest.raises(InputError) as e:
        split_address(address)
    assert e.value.problems[0].source == "--ray-address" and "HOST:PORT" in e.value.problems[0].reason


def test_unreachable_cluster_is_one_input_error_naming_the_address() -> None:
    port = free_port()
    t0 = time.monotonic()
    with pytest.raises(InputError) as e:
        check_reachable(f"127.0.0.1:{port}", timeout=5.0)
    assert time.monotonic() - t0 < 5.0
    p = e.value.problems[0]
    assert (p.source, p.field) == ("--ray-address", f"127.0.0.1:{port}")
    assert "connection refused" in p.reason and f"ray start --head --port {port}" in p.reason


def test_token_is_looked_up_where_ray_looks(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in RAY_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert token_source() is None
    (tmp_path / ".ray").mkdir()
    (tmp_path / ".ray" / "auth_token").write_text("t0")
    assert token_source() == str(tmp_path / ".ray" / "auth_token")
    monkeypatch.setenv("RAY_AUTH_TOKEN_PATH", "/some/file")
    assert token_source() == "RAY_AUTH_TOKEN_PATH=/some/file"
    monkeypatch.setenv("RAY_AUTH_TOKEN", "t1")
    assert token_source() == "RAY_AUTH_TOKEN"


@pytest.fixture
def no_token_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No Ray token variables and an empty home (no ~/.ray/auth_token); returns the home."""
    for name in RAY_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


def probe_as(monkeypatch: pytest.MonkeyPatch, result: Probe) -> list[str | None]:
    """Replace the probe by one that returns ``result``; returns the ``RAY_AUTH_MODE`` it saw."""
    seen: list[str | None] = []

    def fake(address: str, timeout: float) -> Probe:
        seen.append(os.environ.get("RAY_AUTH_MODE"))
        return result
    monkeypatch.setattr(ray_cluster, "probe", fake)
    return seen


@pytest.mark.parametrize("ray_imported", [False, True])
def test_a_token_here_switches_token_authentication_on_before_ray_is_imported(
        monkeypatch: pytest.MonkeyPatch, no_token_settings: Path, ray_imported: bool) -> None:
    monkeypatch.setenv("RAY_AUTH_TOKEN", "t")
    if ray_imported:
        monkeypatch.setitem(sys.modules, "ray", types.ModuleType("ray"))
    else:
        monkeypatch.delitem(sys.modules, "ray", raising=False)
    seen = probe_as(monkeypatch, Probe("ok"))
    env = EnvChanges()
    check_connects("127.0.0.1:1", 1.0, env)
    want = None if ray_imported else "token"  # a Ray already imported may have read the variable
    assert seen == [want] and os.environ.get("RAY_AUTH_MODE") == want
    env.restore()
    assert "RAY_AUTH_MODE" not in os.environ


@pytest.mark.parametrize(("settings", "result", "message"), [
    ({}, Probe("timeout"), "no connection within 1 s and this machine has no token: if the cluster uses "
                           "token authentication, give this machine the cluster's token"),
    ({"RAY_AUTH_TOKEN": "t"}, Probe("timeout"),
     "no connection within 1 s with the token from RAY_AUTH_TOKEN: check that it is the cluster's token"),
    ({"RAY_AUTH_TOKEN": "t"}, Probe("connection", "ConnectionError", "Failed to connect"),
     "no connection within 1 s with the token from RAY_AUTH_TOKEN"),
    ({"RAY_AUTH_TOKEN": "t", "RAY_AUTH_MODE": "disabled"}, Probe("timeout"),
     "no connection within 1 s with RAY_AUTH_MODE=disabled here (no token sent): if the cluster uses "
     "token authentication, unset RAY_AUTH_MODE"),
    ({"RAY_AUTH_MODE": "token"}, Probe("timeout"), "RAY_AUTH_MODE=token here but this machine has no token"),
    ({"RAY_AUTH_TOKEN_PATH": "/nowhere"}, Probe("auth", "AuthenticationError", "RAY_AUTH_TOKEN_PATH is set "
                                                "but file cannot be opened or is empty: /nowhere.\nmore"),
     "Ray rejects this machine's token settings (AuthenticationError: RAY_AUTH_TOKEN_PATH is set but file "
     "cannot be opened or is empty: /nowhere.): give this machine"),
    ({}, Probe("error", "RuntimeError", "Version mismatch\ndetails"),
     "could not connect to the Ray cluster: RuntimeError: Version mismatch (check that the cluster runs the "
     "same Ray and Python versions"),
])
def test_a_failed_connection_names_what_this_machine_presented(
        monkeypatch: pytest.MonkeyPatch, no_token_settings: Path, settings: dict[str, str],
        result: Probe, message: str) -> None:
    for name, value in settings.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delitem(sys.modules, "ray", raising=False)
    probe_as(monkeypatch, result)
    with pytest.raises(InputError) as e:
        check_connects("127.0.0.1:1", 1.0, EnvChanges())
    p = e.value.problems[0]
    assert (p.source, p.field) == ("--ray-address", "127.0.0.1:1") and p.reason.startswith(message)
    assert os.environ.get("RAY_AUTH_MODE") == settings.get("RAY_AUTH_MODE")  # put back


def test_a_token_but_ray_imported_first_says_to_set_the_mode_before_python_starts(
        monkeypatch: pytest.MonkeyPatch, no_token_settings: Path) -> None:
    monkeypatch.setenv("RAY_AUTH_TOKEN", "t")
    monkeypatch.setitem(sys.modules, "ray", types.ModuleType("ray"))
    probe_as(monkeypatch, Probe("timeout"))
    with pytest.raises(InputError, match="Ray was imported in this process before token authentication "
                                         "could be switched on for the token from RAY_AUTH_TOKEN.*set "
                                         "RAY_AUTH_MODE=token before Python starts"):
        check_connects("127.0.0.1:1", 1.0, EnvChanges())


def test_a_port_that_is_not_a_ray_clusters_is_one_input_error_within_the_timeout(
        no_token_settings: Path) -> None:
    """A new process tries ``ray.init`` and is stopped after the timeout (its import of Ray aside)."""
    pytest.importorskip("ray")
    with socket.socket() as server:  # accepts TCP connections, answers nothing
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        address = f"127.0.0.1:{server.getsockname()[1]}"
        t0 = time.monotonic()
        with pytest.raises(InputError) as e:
            ray_cluster.check(address, timeout=2.0)
        assert time.monotonic() - t0 < 2.0 + 30  # the timeout, and starting Python with Ray
    assert e.value.problems[0].reason.startswith("no connection within 2 s and this machine has no token")


def test_cli_unreachable_cluster_exits_2_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("ray")
    from vbp.cli import main

    port = free_port()
    with pytest.raises(SystemExit) as e:
        main(["compare", "sigma", "--policies", "ff", "--orders", "1", "--executor", "ray",
              "--ray-address", f"127.0.0.1:{port}"])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: --ray-address: 127.0.0.1:{port}: no Ray "
                                               "cluster answers there")


# ------------------------------------------------------------------------------------------------
# a real cluster of two nodes on this machine
@dataclass
class Cluster:
    """A running cluster: its address and the environment of a machine that has its token."""

    address: str
    env: dict[str, str]
    home: Path
    tmpdir: Path
    """``RAY_TMPDIR`` under which the head node records itself as this machine's cluster."""


def _ray_cli() -> str | None:
    here = Path(sys.executable).parent / "ray"
    return str(here) if here.is_file() else shutil.which("ray")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Terminate one ``ray start --block`` process (it stops its node's Ray processes)."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:  # pragma: no cover - a node that does not drain
            proc.kill()
            proc.wait(timeout=10)


def _wait_for_nodes(address: str, env: dict[str, str], n: int, timeout: float) -> None:
    """Wait until the cluster at ``address`` has ``n`` live nodes (a driver with the token asks)."""
    script = textwrap.dedent(f"""
        import time, ray
        ray.init(address={address!r}, log_to_driver=False, logging_level="ERROR")
        deadline = time.monotonic() + {timeout}
        while sum(1 for x in ray.nodes() if x["Alive"]) < {n}:
            if time.monotonic() > deadline:
                raise SystemExit("the cluster has " + str(len(ray.nodes())) + " nodes")
            time.sleep(0.5)
    """)
    out = subprocess.run([sys.executable, "-c", script], env={**env, "RAY_AUTH_MODE": "token"},
                         capture_output=True, text=True, timeout=timeout + 60, check=False)
    assert out.returncode == 0, out.stderr[-2000:]


def doc_ray_starts(ray_cli: str, port: int) -> list[tuple[dict[str, str], list[str]]]:
    """The two ``ray start`` lines of docs/scale-out.md (head, other node): environment, command."""
    lines = [ln for block in re.findall(r"```sh\n(.*?)```", DOC.read_text(), re.S)
             for ln in block.splitlines() if "ray start" in ln]
    assert len(lines) == 2 and "--head" in lines[0] and "--address" in lines[1]
    out = []
    for ln in lines:
        words = shlex.split(ln.replace(DOC_ADDRESS, f"127.0.0.1:{port}").replace("6379", str(port)))
        env = dict(w.split("=", 1) for w in words if "=" in w and not w.startswith("-"))
        cmd = [w for w in words if w not in {f"{k}={v}" for k, v in env.items()}]
        assert cmd[:2] == ["ray", "start"]
        out.append((env, [ray_cli, *cmd[1:]]))
    return out


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    """A head node and one worker node (one CPU each) on loopback, with token authentication."""
    pytest.importorskip("ray")
    ray_cli = _ray_cli()
    if ray_cli is None:
        pytest.skip("the ray command is not installed")
    root = Path(tempfile.mkdtemp(prefix="vbp-ray-", dir="/tmp"))  # short: Ray's socket paths
    home = root / "home"
    (home / ".ray").mkdir(parents=True)
    (home / ".ray" / "auth_token").write_text(secrets.token_hex(32))
    env = {k: v for k, v in os.environ.items() if k not in RAY_VARS}
    env.update(HOME=str(home), RAY_USAGE_STATS_ENABLED="0", PYTHONPATH=str(REPO))
    port = free_port()
    address = f"127.0.0.1:{port}"
    procs: list[subprocess.Popen[bytes]] = []
    logs = contextlib.ExitStack()
    try:
        (head_env, head), (worker_env, worker) = doc_ray_starts(ray_cli, port)
        local = ["--node-ip-address", "127.0.0.1", "--num-cpus", "1", "--object-store-memory",
                 str(100 * 2**20), "--disable-usage-stats", "--block",
                 "--dashboard-agent-listen-port"]  # one CPU each, a port of its own; stop = SIGTERM
        head += ["--include-dashboard", "false", "--temp-dir", str(root / "ray"), *local,
                 str(free_port())]
        procs.append(subprocess.Popen(head, env={**env, **head_env}, cwd=REPO,
                                      stdout=subprocess.DEVNULL,
                                      stderr=logs.enter_context((root / "head.log").open("wb"))))
        deadline = time.monotonic() + 90
        while True:  # the head's GCS port opens once it runs
            if procs[0].poll() is not None:
                pytest.fail("ray start --head exited: " + (root / "head.log").read_text()[-2000:])
            try:
                check_reachable(address, timeout=1.0)
                break
            except InputError:
                if time.monotonic() > deadline:
                    pytest.fail("the head node did not start within 90 s")
                time.sleep(0.5)
        procs.append(subprocess.Popen(worker + [*local, str(free_port())],
                                      env={**env, **worker_env}, cwd=REPO,
                                      stdout=subprocess.DEVNULL,
                                      stderr=logs.enter_context((root / "worker.log").open("wb"))))
        _wait_for_nodes(address, env, 2, timeout=90)
        yield Cluster(address, env, home, root)
    finally:
        for p in reversed(procs):
            _stop(p)
        logs.close()
        shutil.rmtree(root, ignore_errors=True)


def vbp(env: dict[str, str], *args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    """Run ``python -m vbp.cli`` (this checkout: ``PYTHONPATH``, also on the cluster's nodes)."""
    return subprocess.run([sys.executable, "-m", "vbp.cli", *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=600, check=False)


def doc_commands() -> list[list[str]]:
    """The ``vbp`` commands of docs/scale-out.md that run on the cluster at ``HEAD_IP:6379``."""
    lines = [ln for block in re.findall(r"```sh\n(.*?)```", DOC.read_text(), re.S)
             for ln in block.splitlines()]
    return [shlex.split(ln)[1:] for ln in lines if ln.startswith("vbp ") and DOC_ADDRESS in ln]


def without_ray(args: list[str]) -> list[str]:
    """The same command on the default (serial) executor: the Ray options left out."""
    out: list[str] = []
    skip = 0
    for i, a in enumerate(args):
        if skip:
            skip -= 1
        elif a in ("--executor", "--backend") and args[i + 1] == "ray" or a == "--ray-address":
            skip = 1
        else:
            out.append(a)
    return out


def test_the_docs_commands_give_the_serial_numbers_on_a_cluster(
        cluster: Cluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/scale-out.md as written: compare (its table), sweep and swarm training."""
    commands = doc_commands()
    assert [c[:2] for c in commands] == [["compare", "sigma"], ["sweep", "sigma"], ["train", "swarm"]]
    (tmp_path / "ray").mkdir()
    (tmp_path / "serial").mkdir()
    monkeypatch.chdir(tmp_path / "serial")
    for args in commands:
        r = vbp(cluster.env, *[a.replace(DOC_ADDRESS, cluster.address) for a in args],
                cwd=tmp_path / "ray")
        assert r.returncode == 0, r.stderr
        plain = CliRunner().invoke(cli, without_ray(args))
        assert plain.exit_code == 0, plain.output
        if args[0] == "compare":
            shown = re.findall(r"```text\n(.*?)```", DOC.read_text(), re.S)[0]
            assert r.stdout == plain.stdout == shown
            continue
        out = args[args.index("--out") + 1]
        got, want = tmp_path / "ray" / out, tmp_path / "serial" / out
        if args[0] == "sweep":
            assert table(got) == table(want) != []
        else:
            docs = [json.loads(f.read_text()) for f in (got, want)]
            assert docs[0]["weights"] == docs[1]["weights"]
            for key in ("training_cost", "initial_cost", "iterations", "evaluations"):
                assert docs[0]["training"][key] == docs[1]["training"][key]


def table(path: Path) -> list[dict[str, str]]:
    """A sweep's rows without the wall time and the executor's name."""
    with path.open() as f:
        return [{k: v for k, v in row.items() if k not in ("seconds", "executor")}
                for row in csv.DictReader(f)]


def test_a_machine_without_the_clusters_token_gets_one_line_and_exit_2(
        cluster: Cluster, tmp_path: Path) -> None:
    cases = [({"HOME": str(tmp_path)}, "no connection within 10 s and this machine has no token"),
             ({"RAY_AUTH_TOKEN": "not-the-token"},
              "no connection within 10 s with the token from RAY_AUTH_TOKEN: check that it is the "
              "cluster's token"),
             ({"RAY_AUTH_TOKEN_PATH": str(tmp_path / "no-such-file")},
              "Ray rejects this machine's token settings (AuthenticationError: RAY_AUTH_TOKEN_PATH")]
    for extra, message in cases:
        r = vbp({**cluster.env, **extra}, "compare", "sigma", "--policies", "ff", "--orders", "1",
                "--executor", "ray", "--ray-address", cluster.address)
        assert r.returncode == 2, r.stderr
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"error: --ray-address: {cluster.address}: ")
        assert message in lines[0] and "~/.ray/auth_token" in lines[0]


STAMP = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}"
RAY_LOG_LINE = re.compile(rf"{STAMP}\s+(DEBUG|INFO|WARNING|ERROR|CRITICAL) \S+:\d+ -- "
                          rf"|\[{STAMP} [DIWEF] \d+ \d+\] ")
"""A line of Ray's own logging (Python's format, then its C++ one), which vbp does not write."""


def vbp_lines(stderr: str) -> list[str]:
    """The lines of ``stderr`` that are not Ray's own log lines (vbp's)."""
    return [ln for ln in stderr.strip().splitlines() if not RAY_LOG_LINE.match(ln)]


def test_ray_log_lines_are_told_from_vbps() -> None:
    ray_lines = ["2026-01-02 03:04:05,678\tWARNING services.py:443 -- Found multiple active Ray instances: "
                 "{'10.0.0.1:6379', '10.0.0.1:6380'}. Connecting to latest cluster at 10.0.0.1:6379.",
                 "[2026-01-02 03:04:05,678 W 123 456] gcs_client.cc:210: Failed to get cluster ID"]
    mine = ["error: --workers: 2: Ray connects to the cluster", "2026 was a year"]
    assert vbp_lines("\n".join([ray_lines[0], mine[0], ray_lines[1], mine[1]])) == mine


def test_workers_for_a_local_ray_while_ray_start_runs_here_is_one_line(cluster: Cluster) -> None:
    """Without an address Ray joins the cluster ``ray start`` runs on this machine (CPUs fixed).

    When more Ray clusters run on the machine (another test's, another user's), Ray logs a warning
    that it found several before it joins the one ``ray start`` started last; vbp writes one line.
    """
    r = vbp({**cluster.env, "RAY_TMPDIR": str(cluster.tmpdir)}, "compare", "sigma", "--policies", "ff",
            "--orders", "1", "--json", "--executor", "ray", "--workers", "2")
    assert r.returncode == 2, r.stderr
    lines = vbp_lines(r.stderr)
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("error: --workers: 2: Ray connects to the cluster")
