"""Layers point one way: every import of every module (function-level ones included) is read here.

    vbp  ->  policies, solvers  ->  packing

``packing`` imports none of the others; ``policies`` and ``solvers`` import ``packing`` only (never
each other); ``vbp`` may import all. Only ``policies`` may import torch (the learned agents). Within a
package, modules do not import each other in a circle.

Inside ``packing`` and ``solvers`` the modules live in rooms (subpackages) by concern. A room's
docstring says what lives there and, on its line ``May import:``, which other rooms of its package
(or the whole of another package) its modules may import; that line is the rule checked here, so
the docstring and the code cannot disagree. The top level of each package holds only its face
(``__init__``) and the few files every room uses (:data:`SHARED`).

The command line is the top: nothing outside ``vbp/cli`` (the libraries, ``vbp``'s orchestration,
the examples and the benchmarks) imports ``vbp.cli``. A private name is private to where it is
defined: a ``_name`` of a module is imported by no other module, and a ``_module`` only by the
modules of its own package. Ray is used through its public API only: no module (nor example, nor
benchmark) imports a private name of Ray (``ray._raylet``, ``ray._private...``) or reads one off the
``ray`` module.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("packing", "policies", "solvers", "vbp")
ALLOWED = {
    "packing": {"packing"},
    "policies": {"packing", "policies"},
    "solvers": {"packing", "solvers"},
    "vbp": {"packing", "policies", "solvers", "vbp"},
}
TORCH_OK = {"policies"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path) -> list[tuple[int, str]]:
    """``(line, module)`` for every import statement anywhere in the file (absolute names)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    pkg = module_name(path).split(".") if path.is_relative_to(REPO) else []
    if pkg and path.name != "__init__.py":
        pkg = pkg[:-1]
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg[: len(pkg) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.append((node.lineno, mod))
            out += [(node.lineno, f"{mod}.{a.name}") for a in node.names]
    return out


def all_modules() -> dict[str, Path]:
    mods = {}
    for pkg in PACKAGES:
        for p in sorted((REPO / pkg).rglob("*.py")):
            mods[module_name(p)] = p
    return mods


MODULES = all_modules()


def test_the_packages_exist() -> None:
    for pkg in PACKAGES:
        assert pkg in MODULES, f"{pkg}/__init__.py is missing"
    assert "packing.sim.engine" in MODULES and "packing.sim.policy" in MODULES and "vbp.cli" in MODULES


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_point_down(name: str) -> None:
    top = name.split(".")[0]
    bad = []
    for line, mod in imports(MODULES[name]):
        first = mod.split(".")[0]
        if first in PACKAGES and first not in ALLOWED[top]:
            bad.append(f"line {line}: {mod}")
        if first == "torch" and top not in TORCH_OK:
            bad.append(f"line {line}: torch")
    assert not bad, f"{name} imports against the layers: {bad}"


def test_no_import_cycles_within_a_package() -> None:
    graph: dict[str, set[str]] = {}
    for name, path in MODULES.items():
        deps = set()
        for _, mod in imports(path):
            while mod and mod not in MODULES:
                mod = mod.rpartition(".")[0]
            # a package's __init__ re-exporting its modules is not a cycle of logic
            if mod and mod != name and mod.split(".")[0] == name.split(".")[0] \
                    and not name.startswith(mod + "."):
                deps.add(mod)
        graph[name] = deps
    seen: dict[str, int] = {}
    stack: list[str] = []

    def visit(n: str) -> None:
        seen[n] = 1
        stack.append(n)
        for m in sorted(graph[n]):
            if seen.get(m) == 1:
                cycle = stack[stack.index(m):] + [m]
                raise AssertionError(f"import cycle: {' -> '.join(cycle)}")
            if m not in seen:
                visit(m)
        stack.pop()
        seen[n] = 2

    for n in sorted(graph):
        if n not in seen:
            visit(n)


ROOMED = ("packing", "solvers")
"""The packages whose modules live in rooms."""

SHARED: dict[str, set[str]] = {
    "packing.errors": set(),
    "solvers.result": set(),
    "solvers.base": {"solvers.result"},
}
"""The files at the top of a roomed package that every room uses, and what each of them may import
from its own package."""


def room_of(name: str) -> str:
    """The room of a module: ``packing.sim`` for ``packing.sim.engine``; a top-level file is its own."""
    parts = name.split(".")
    if len(parts) >= 2 and (REPO / parts[0] / parts[1]).is_dir():
        return ".".join(parts[:2])
    return ".".join(parts[:2]) if len(parts) >= 2 else name


def rooms() -> dict[str, set[str]]:
    """Room -> the rooms (or packages) its docstring's ``May import:`` line names."""
    out = {}
    for pkg in ROOMED:
        for init in sorted((REPO / pkg).glob("*/__init__.py")):
            name = module_name(init)
            doc = ast.get_docstring(ast.parse(init.read_text())) or ""
            lines = [ln for ln in doc.splitlines() if ln.startswith("May import:")]
            assert len(lines) == 1, f"{name}: its docstring needs one line 'May import: ...'"
            names = lines[0].removeprefix("May import:").strip().rstrip(".")
            out[name] = {n.strip() for n in names.split(",") if n.strip()}
    return out


ROOMS = rooms()


def room_imports(name: str, path: Path) -> set[tuple[str, str]]:
    """``(name, room)`` for every import of another room of its own package the rules do not allow."""
    top = name.split(".")[0]
    if top not in ROOMED or name == top:
        return set()
    mine = room_of(name)
    allowed = ROOMS[mine] if mine in ROOMS else SHARED[mine]
    bad = set()
    for _, mod in imports(path):
        while mod and mod not in MODULES:
            mod = mod.rpartition(".")[0]
        if not mod or mod.split(".")[0] != top:
            continue
        other = top if mod == top else room_of(mod)
        if other != mine and other not in allowed:
            bad.add((name, other))
    return bad


def test_every_module_of_a_roomed_package_is_in_a_room() -> None:
    for pkg in ROOMED:
        top = {n for n in MODULES if n.startswith(pkg + ".") and room_of(n) == n and n not in ROOMS}
        assert top == {n for n in SHARED if n.startswith(pkg + ".")}, \
            f"files at the top of {pkg}/ that are not shared by every room: {sorted(top)}"
        face = ast.get_docstring(ast.parse(MODULES[pkg].read_text())) or ""
        for shared in (n for n in SHARED if n.startswith(pkg + ".")):
            assert f":mod:`{shared}`" in face, f"{pkg}'s docstring does not name its shared file {shared}"
        for room in (r for r in ROOMS if r.startswith(pkg + ".")):
            assert f":mod:`{room}`" in face, f"{pkg}'s docstring does not name its room {room}"


def test_rooms_import_only_what_their_docstring_allows() -> None:
    found = set().union(*(room_imports(n, p) for n, p in MODULES.items()))
    assert found == set(), f"imports of rooms a room's 'May import:' line does not name: {sorted(found)}"


def test_the_room_check_catches_a_forbidden_import(tmp_path: Path) -> None:
    f = tmp_path / "m.py"
    f.write_text("def f():\n    from packing.sim.engine import Engine\n"
                 "    from packing.errors import InputError\n"
                 "    from solvers.exact.cpsat import solve_cpsat\n"
                 "    return Engine, InputError, solve_cpsat\n")
    assert room_imports("packing.model.x", f) == {("packing.model.x", "packing.sim")}
    assert room_imports("packing.sim.x", f) == set()
    assert room_imports("solvers.search.x", f) == {("solvers.search.x", "solvers.exact")}
    assert room_imports("solvers.plan.x", f) == set()
    assert room_imports("packing.errors", f) == {("packing.errors", "packing.sim")}


SCRIPTS = {f"{d}.{p.stem}": p for d in ("benchmarks", "examples") for p in sorted((REPO / d).glob("*.py"))}
"""The example and benchmark scripts, by a module-like name."""

CLI_IMPORTS_TO_FIX: set[tuple[str, str]] = set()
"""Scripts that still import the command line's helpers (each helper belongs in a library module)."""

PRIVATE_IMPORTS_TO_FIX: set[tuple[str, str]] = set()
"""Private names still imported across modules (each should become public, or move to its user)."""


def cli_imports(name: str, path: Path) -> set[tuple[str, str]]:
    """``(name, vbp.cli module)`` for every import of the command line by a module outside it."""
    if name == "vbp.cli" or name.startswith("vbp.cli."):
        return set()
    out = set()
    for _, mod in imports(path):
        if mod == "vbp.cli" or mod.startswith("vbp.cli."):
            while mod not in MODULES and "." in mod:
                mod = mod.rpartition(".")[0]
            out.add((name, mod))
    return out


def private_imports(name: str, path: Path) -> set[tuple[str, str]]:
    """``(name, private name)`` for every private name of the project imported from outside its home.

    The home of ``a.b._c`` (and of ``a.b._c.d``) is ``a.b``: the module that defines ``_c``, or the
    package that holds the module ``_c``; only the home itself and the modules inside it may
    import it.
    """
    out = set()
    for _, mod in imports(path):
        parts = mod.split(".")
        if parts[0] not in PACKAGES:
            continue
        for i, part in enumerate(parts):
            if part.startswith("_") and not part.startswith("__"):
                home = ".".join(parts[:i])
                if name != home and not name.startswith(home + "."):
                    out.add((name, ".".join(parts[:i + 1])))
                break
    return out


def test_only_the_command_line_imports_the_command_line() -> None:
    found = set().union(*(cli_imports(n, p) for n, p in {**MODULES, **SCRIPTS}.items()))
    assert found - CLI_IMPORTS_TO_FIX == set(), "imports of vbp.cli from outside vbp/cli"
    assert CLI_IMPORTS_TO_FIX - found == set(), "fixed: remove these from CLI_IMPORTS_TO_FIX"


def test_private_names_stay_home() -> None:
    found = set().union(*(private_imports(n, p) for n, p in {**MODULES, **SCRIPTS}.items()))
    assert found - PRIVATE_IMPORTS_TO_FIX == set(), "private names imported across modules"
    assert PRIVATE_IMPORTS_TO_FIX - found == set(), "fixed: remove these from PRIVATE_IMPORTS_TO_FIX"


def test_the_checks_catch_a_cli_import_and_a_private_import(tmp_path: Path) -> None:
    f = tmp_path / "m.py"
    f.write_text("def f():\n    from vbp.cli.common import SEED\n"
                 "    from packing.feasibility.bounds import _slack\n"
                 "    from packing.loaders._csv import CsvReader\n    return SEED, _slack, CsvReader\n")
    assert cli_imports("solvers.x", f) == {("solvers.x", "vbp.cli.common")}
    assert cli_imports("vbp.cli.x", f) == set()
    assert private_imports("solvers.x", f) == {("solvers.x", "packing.feasibility.bounds._slack"),
                                               ("solvers.x", "packing.loaders._csv")}
    assert private_imports("packing.loaders.x", f) == {
        ("packing.loaders.x", "packing.feasibility.bounds._slack")}


def private_ray_names(path: Path) -> set[tuple[int, str]]:
    """``(line, name)`` for every private name of Ray the file imports or reads off the ``ray`` module.

    A name is private when a dotted component after ``ray`` starts with ``_`` (``ray._raylet``,
    ``ray._private.worker``, ``ray.util._x``); dunders such as ``ray.__version__`` are public.
    ``import ray`` (or ``import ray as r``) then ``ray._private.services`` counts as well.
    """

    def private(name: str) -> str | None:
        parts = name.split(".")
        if parts[0] != "ray":
            return None
        for i, part in enumerate(parts[1:], start=2):
            if part.startswith("_") and not (part.startswith("__") and part.endswith("__")):
                return ".".join(parts[:i])
        return None

    out = {(line, p) for line, mod in imports(path) if (p := private(mod))}
    tree = ast.parse(path.read_text(), filename=str(path))
    bound: dict[str, str] = {}  # local name -> the module or name of Ray it stands for
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):  # `import ray.x` binds ray; `import ray.x as y` binds y to ray.x
            for a in node.names:
                if a.name.split(".")[0] == "ray":
                    bound[a.asname or "ray"] = a.name if a.asname else "ray"
        elif isinstance(node, ast.ImportFrom) and not node.level \
                and (node.module or "").split(".")[0] == "ray":
            bound.update({a.asname or a.name: f"{node.module}.{a.name}" for a in node.names})
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            chain, value = [node.attr], node.value
            while isinstance(value, ast.Attribute):
                chain.insert(0, value.attr)
                value = value.value
            if isinstance(value, ast.Name) and value.id in bound \
                    and (p := private(".".join([bound[value.id], *chain]))):
                out.add((node.lineno, p))
    return out


def test_no_module_uses_a_private_name_of_ray() -> None:
    found = {(name, line, p) for name, path in {**MODULES, **SCRIPTS}.items()
             for line, p in private_ray_names(path)}
    assert found == set(), "private names of Ray (use its public API and documented settings)"


def test_the_check_catches_a_private_ray_name(tmp_path: Path) -> None:
    f = tmp_path / "m.py"
    f.write_text("import ray as r\nimport ray.exceptions\nfrom ray import __version__, util\n"
                 "def f():\n    from ray._raylet import GcsClient\n    import ray.util._hidden.x\n"
                 "    return GcsClient, ray.exceptions.AuthenticationError, r._private.services.x\n"
                 "def g():\n    return ray._private, util._x, __version__, r.init, util.state\n")
    assert private_ray_names(f) == {(5, "ray._raylet"), (6, "ray.util._hidden"), (7, "ray._private"),
                                    (9, "ray._private"), (9, "ray.util._x")}


def test_the_checker_catches_an_upward_import(tmp_path: Path) -> None:
    """The test above can fail: an upward import in a function body is found."""
    f = tmp_path / "m.py"
    f.write_text("def f():\n    from policies.heuristics import BestFit\n    return BestFit\n")
    assert (2, "policies.heuristics") in imports(f)


CLI_SHARED = {"vbp.cli", "vbp.cli.__main__", "vbp.cli.common", "vbp.cli.outputs", "vbp.cli.formats",
              "vbp.cli.train_report"}
"""The modules of ``vbp.cli`` that are shared helpers, not commands."""

COMMAND_DISPATCH: set[tuple[str, str]] = {
    ("vbp.cli.train", "vbp.cli.train_gcn"),
    ("vbp.cli.train", "vbp.cli.train_jobfusion"),
}
"""The one dispatcher: ``vbp train gcn DATA`` runs the placement trainer or the JobFusion trainer,
chosen by what DATA is; it imports the chosen command and shares no logic with it. Every other
subcommand is registered in :data:`vbp.cli.COMMANDS` (as ``"train rl"``)."""


def command_imports(name: str, path: Path) -> set[tuple[str, str]]:
    """``(name, command module)`` for every import of another command module by a command module."""
    if not name.startswith("vbp.cli.") or name in CLI_SHARED:
        return set()
    out = set()
    for _, mod in imports(path):
        while mod not in MODULES and "." in mod:
            mod = mod.rpartition(".")[0]
        if mod.startswith("vbp.cli.") and mod not in CLI_SHARED and mod != name:
            out.add((name, mod))
    return out


def test_command_modules_import_no_other_command_module() -> None:
    found = set().union(*(command_imports(n, p) for n, p in MODULES.items()))
    assert found - COMMAND_DISPATCH == set(), "a vbp.cli command module imports another one"
    assert COMMAND_DISPATCH - found == set(), "the dispatcher changed: update COMMAND_DISPATCH"


def test_the_check_catches_a_command_importing_a_command(tmp_path: Path) -> None:
    f = tmp_path / "m.py"
    f.write_text("from vbp.cli.common import SEED\nfrom vbp.cli.solve import METHOD_NAMES\n"
                 "def f():\n    from vbp.cli.generate_multicluster import multicluster_command\n")
    assert command_imports("vbp.cli.plan", f) == {("vbp.cli.plan", "vbp.cli.solve"),
                                                  ("vbp.cli.plan", "vbp.cli.generate_multicluster")}
    assert command_imports("vbp.cli.common", f) == set()


def test_registered_subcommands_are_in_their_group() -> None:
    import click

    from vbp.cli import COMMANDS, cli

    ctx = click.Context(cli)
    for key in (k for k in COMMANDS if " " in k):
        parent, _, sub = key.rpartition(" ")
        group = cli.get_command(ctx, parent)
        assert isinstance(group, click.Group) and sub in group.commands, key
        assert sub not in cli.list_commands(ctx) and cli.get_command(ctx, key) is None


def test_a_group_summary_names_exactly_its_subcommands() -> None:
    """``vbp --help`` lists a group's subcommands in its one-line help: all of them, no others."""
    import re

    import click

    from vbp.cli import COMMANDS, cli

    ctx = click.Context(cli)
    groups = {n: g for n in cli.list_commands(ctx)
              if isinstance(g := cli.get_command(ctx, n), click.Group)}
    names = set(cli.list_commands(ctx)).union(*(g.commands for g in groups.values()))
    assert {"generate", "jobs", "train"} <= set(groups)
    for name, group in groups.items():
        words = {w.lower() for w in re.findall(r"[A-Za-z][\w-]*", COMMANDS[name][2])}
        assert set(group.commands) <= words, name
        assert (words & names) - set(group.commands) - {name} == set(), name
