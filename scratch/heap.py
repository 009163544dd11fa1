"""Giving the C heap's free memory back to the system.

glibc's ``malloc`` serves each thread from an arena of its own and keeps what is freed there
for the next allocation; a big ingest's threads (the object write's slices, their compressed
forms, the file's reads) leave ~170 MB so, which counted in the ingest's peak memory when its
end (the pointer's reads) came after them: 252 MB against 224 MB, depending on the order the
threads ended in. :func:`trim` hands the free pages back (``malloc_trim``); elsewhere (another C
library, no ``ctypes``) it does nothing.
"""

from __future__ import annotations

_TRIM: list[object] = []  # the bound malloc_trim, or None where there is none


def trim() -> bool:
    """Return the C heap's free pages to the system; whether anything was returned. Costs a
    walk of the heap's free lists and the release of their pages: ~3 ms for ~500 MB freed
    by three threads."""
    if not _TRIM:
        try:
            import ctypes

            found = ctypes.CDLL(None).malloc_trim
            found.argtypes, found.restype = [ctypes.c_size_t], ctypes.c_int
            _TRIM.append(found)
        except (ImportError, OSError, AttributeError, TypeError):  # no C library by name
            _TRIM.append(None)
    call = _TRIM[0]
    return bool(call(0)) if callable(call) else False


__all__ = ["trim"]
