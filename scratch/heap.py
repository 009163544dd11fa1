"""Giving the C heap's free memory back to the system.

glibc's ``malloc`` serves each thread from an arena of its own and keeps what is freed there
for the next allocation; a big ingest's threads (the object write's slices, their compressed
forms, the file's reads) leave ~170 MB so, which counted in the ingest's peak memory when its
end (the pointer's reads) came after them: 252 MB against 224 MB, depending on the order the
threads ended in. :func:`trim` hands the free pages back (``malloc_trim``); elsewhere (another C
library, no ``ctypes``) it does nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache


def trim() -> bool:
    """Return the C heap's free pages to the system; whether anything was returned. Costs a
    walk of the heap's free lists and the release of their pages: ~3 ms for ~500 MB freed
    by three threads."""
    call = _malloc_trim()
    return bool(call(0)) if call is not None else False


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    """The C library's ``malloc_trim``, or None where there is none."""
    try:
        import ctypes

        found = ctypes.CDLL(None).malloc_trim
    except (ImportError, OSError, AttributeError, TypeError):  # no C library by name
        return None
    found.argtypes, found.restype = [ctypes.c_size_t], ctypes.c_int
    return found


__all__ = ["trim"]
