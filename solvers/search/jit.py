"""Whether a compiled (numba) search can run without compiling first.

``auto`` gives a stage that would have to compile its numba code (about 15 s for the tabu search)
only a budget that covers the compiling. A fresh process — every ``vbp solve`` — has compiled
nothing, but numba's on-disk cache (``cache=True``) usually holds the machine code already: then
the first call costs well under a second. :func:`ready` tells the two apart.
"""

from __future__ import annotations

from typing import Any


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


__all__ = ["ready"]
