"""Whether a compiled (numba) search can run without compiling first, and its Python twin.

``auto`` gives a stage that would have to compile its numba code (about 15 s for the tabu search)
only a budget that covers the compiling. A fresh process — every ``vbp solve`` — has compiled
nothing, but numba's on-disk cache (``cache=True``) usually holds the machine code already: then
the first call costs well under a second. :func:`ready` tells the two apart.

That second is still most of a short ``vbp solve``: importing numba takes about 0.3 s of CPU and
loading the first function from its cache about 0.7 s (numba's typing registries load, and with
them scipy.linalg). On small instances the same code run as plain Python often finishes first:
:func:`python_twin` loads a second copy of a module's source in which ``numba.njit`` leaves
every function as it is (nothing of numba is imported), so its functions are the compiled
ones' Python originals, taking the same decisions, only slower. :func:`numba_loaded` tells
whether the process has paid for numba already.
"""

from __future__ import annotations

import builtins
import importlib.util
import sys
import types
from typing import Any

TWIN_SUFFIX = "__python_twin"
"""The name of a module's twin in ``sys.modules``: the module's name with this suffix."""


def _cached(dispatcher: Any) -> bool:
    """Whether numba's on-disk cache holds code for this source and this CPU.

    Uses numba's cache index (``FunctionCache`` internals, present from numba 0.60 to 0.68): the
    index is empty when the source file changed since it was written; an entry names the CPU it
    was compiled for. Anything unexpected counts as "not cached" (the caller then assumes
    compiling).
    """
    try:
        cache = dispatcher._cache
        index = cache._cache_file._load_index()
        magic = dispatcher.targetctx.codegen().magic_tuple()
        return any(isinstance(key, tuple) and len(key) > 1 and key[1] == magic for key in index)
    except Exception:  # noqa: BLE001 - an internal API: never let it break a solve
        return False


def ready(*dispatchers: Any, on_disk: bool = False) -> bool:
    """Whether every numba function given runs without compiling.

    Args:
        dispatchers: ``numba.njit(cache=True)`` functions.
        on_disk: only numba's on-disk cache counts (what a new process will find), not code
            compiled in this process.

    Returns:
        True when each is compiled in this process (unless ``on_disk``) or loadable from numba's
        on-disk cache for the current source and CPU.
    """
    return all((not on_disk and bool(d.signatures)) or _cached(d) for d in dispatchers)


def numba_loaded() -> bool:
    """Whether numba is imported in this process (a compiled part ran, or was imported)."""
    return "numba" in sys.modules


def _njit(*args: Any, **options: Any) -> Any:
    """``numba.njit`` of a twin: the function itself (``njit(f)`` or ``njit(**options)(f)``)."""
    if len(args) == 1 and callable(args[0]) and not options:
        return args[0]
    return lambda f: f


_NO_NUMBA = types.SimpleNamespace(njit=_njit)


def _twin_import(twins: frozenset[str]) -> Any:
    """An ``__import__`` that gives a twin no numba, and the twins of ``twins`` for their names."""
    real = builtins.__import__

    def imp(name: str, globals: Any = None, locals: Any = None,  # noqa: A002 - __import__'s own
            fromlist: Any = (), level: int = 0) -> Any:
        if level == 0 and (name == "numba" or name.startswith("numba.")):
            return _NO_NUMBA
        if level == 0 and name in twins and fromlist:
            return python_twin(name, twins)
        if level == 0 and fromlist and any(f"{name}.{f}" in twins for f in fromlist):
            return types.SimpleNamespace(**{
                f: python_twin(f"{name}.{f}", twins) if f"{name}.{f}" in twins
                else getattr(real(name, globals, locals, (f,), 0), f) for f in fromlist})
        return real(name, globals, locals, fromlist, level)

    return imp


def python_twin(name: str, twins: frozenset[str] | None = None) -> types.ModuleType:
    """A second copy of module ``name`` whose numba functions stay plain Python.

    The module's source runs again, as module ``name + TWIN_SUFFIX``, with an ``__import__`` that
    hands it a stand-in for numba (``numba.njit`` returns the function unchanged) and, for
    ``from X import Y`` of a module named in ``twins``, that module's twin: the functions of
    the twin call each other, and the other twins', as Python. Importing a twin imports nothing
    of numba; the twin is kept in ``sys.modules`` and made once.

    Args:
        name: the module (its source file is read; the module itself is not imported).
        twins: the modules whose twins this one (and they) import instead of them (default:
            just ``name``).
    """
    key = name + TWIN_SUFFIX
    if key in sys.modules:
        return sys.modules[key]
    twins = frozenset({name} if twins is None else twins | {name})
    found = importlib.util.find_spec(name)
    if found is None or found.origin is None:
        raise ImportError(f"no source for {name}")
    spec = importlib.util.spec_from_file_location(key, found.origin)
    if spec is None or spec.loader is None:  # pragma: no cover - a .py file always has one
        raise ImportError(f"cannot load {found.origin}")
    mod = importlib.util.module_from_spec(spec)
    names = dict(vars(builtins))
    names["__import__"] = _twin_import(twins)
    mod.__dict__["__builtins__"] = names
    sys.modules[key] = mod
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        del sys.modules[key]
        raise
    return mod


__all__ = ["TWIN_SUFFIX", "numba_loaded", "python_twin", "ready"]
