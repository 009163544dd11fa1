"""DuckDB, imported the quick way: its compiled core alone when the package ships one.

The ``duckdb`` package (2.x) is a Python layer over the compiled module ``_duckdb``; importing
that layer (relations, expressions, type helpers, its version from package metadata) costs
about 0.1 s, a sixth of a whole ``--count-by`` over 100 MB of NDJSON. Everything scratch
calls (``connect``, ``execute``, ``fetchall``/``fetchmany``, ``interrupt``,
``extract_statements``, ``StatementType`` and the exception classes) is the core's own,
re-exported unchanged by the package, so the core is used when it has all of them, and the
package otherwise (1.x, whose core is not importable on its own).

Imported only by the functions that run a query: importing this module imports nothing.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection

NEEDED = ("connect", "Error", "StatementType", "InterruptException", "PermissionException",
          "ConversionException", "InvalidInputException")


def duckdb_module() -> ModuleType:
    """The module to call DuckDB through (see the module docstring)."""
    try:
        import _duckdb  # type: ignore[import-not-found, unused-ignore]  # in some duckdb builds
    except ImportError:
        pass
    else:
        if all(hasattr(_duckdb, name) for name in NEEDED):
            return _duckdb  # type: ignore[no-any-return, unused-ignore]
    import duckdb

    return duckdb



def show_progress(con: DuckDBPyConnection) -> None:
    """Let ``con`` measure how far its statements are (read by :func:`watched`), when someone
    listens (:mod:`scratch.progress`); before its configuration is locked. DuckDB prints none
    of it itself."""
    from scratch import progress
    if progress.active():
        con.execute("SET enable_progress_bar = true")
        con.execute("SET enable_progress_bar_print = false")


@contextlib.contextmanager
def watched(con: DuckDBPyConnection, stage: str) -> Iterator[None]:
    """``con``'s statement, run in this context, reports its progress as ``stage`` (DuckDB's
    ``query_progress``, polled from a thread; nothing without a listener)."""
    from scratch import progress
    end = progress.watching(lambda: float(con.query_progress()), stage, stop=lambda: False)
    try:
        yield
    finally:
        end()
