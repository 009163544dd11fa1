"""Columnar copies of SQL tables: one DuckDB database per table of a stored version.

Reading a 100 MB NDJSON entry costs DuckDB a full JSON parse on every query; the same rows in
DuckDB's own columnar storage answer a GROUP BY in milliseconds. So the first query of a table
of a version makes a copy: ``CREATE TABLE entry AS <the view the table would have>`` in a
database file beside the version's index (``<index dir>/sql/<key>.duckdb``), and later queries
read the copy instead of the stored file.

Invariants:
- A copy is keyed by what decides its rows: the table's kind, the array's location, a CSV's
  delimiter and column types, this module's :data:`COPY_VERSION` and DuckDB's version (a file
  written by another DuckDB is not opened). It lives in the index directory of the content, so
  it is counted with the store's cache, cleared with it, and never outlives the index it
  belongs to (a new version has another index directory, so another copy).
- A copy holds exactly the rows and types the view over the stored file gives: it is made
  from the same view body (the first of the careful readings that reads every row).
- Written atomically: built in a ``.tmp-<pid>-...`` file of the same directory, checkpointed,
  closed, then renamed over the copy's name. A query never sees half a copy; two builders of
  one copy are kept apart by an exclusive ``flock`` on ``<key>.lock`` (the second one does
  not build: it waits for the first in the foreground, or leaves it alone in the background).
  What a killed builder left (``.tmp-<pid>-...`` of a process that is gone) is removed by
  the next build in that directory; a copies directory that is a symlink gets no copy.
- Missing or damaged (not a DuckDB file, truncated, a block whose checksum fails, no
  ``entry`` table): the copy is removed and the query reads the stored file; the copy is made
  again.
- Tables read from files under :data:`MIN_BYTES` get no copy.
- When (:data:`MODES`, config ``sql.copy``): ``auto`` builds tables of at most
  :data:`FOREGROUND_BYTES` before the query (a few milliseconds) and bigger ones in a detached
  background process after the answer, so the first query costs what a query of the stored
  file costs; that process runs at the lowest priority (:func:`lower_priority`: the idle
  scheduling class, nice 19), so it yields the CPUs to the agent's next query;
  ``foreground`` always builds before the query; ``background`` always after;
  ``off`` never makes or reads a copy.
- The builder's DuckDB is locked down like a query's: no extension, no Python variables, and
  file access only to the files the view reads.

DuckDB is imported inside the functions that use it: importing this module is cheap.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection

COPY_VERSION = 1
DIR = "sql"
TABLE = "entry"
MODES = ("auto", "foreground", "background", "off")
MIN_BYTES = 1 << 20  # a table read from files smaller than this gets no copy (a copy is
# at least half a megabyte, and reading so small a file takes DuckDB milliseconds)
FOREGROUND_BYTES = 4 << 20  # auto: build tables of up to this many bytes before the query
_MAX_MEMORY = "2GB"


@dataclass(frozen=True)
class Copy:
    """Where the copy of one table lives (``path``) and what its key was made from."""

    path: Path

    @property
    def lock(self) -> Path:
        return self.path.with_suffix(".lock")


def copy_for(index_dir: Path, kind: str, location: Sequence[str | int] = (),
             delimiter: str = ",", columns: Sequence[tuple[str, str]] = (),
             extra: str = "") -> Copy:
    """The copy of the table of ``kind`` (ndjson, json, csv, rows, lines) made from the
    content indexed in ``index_dir``; ``extra`` tells apart tables of one kind that other
    arguments do not (e.g. which rows a ``rows`` source gives)."""
    from scratch.query.duck import duckdb_module
    key = json.dumps([COPY_VERSION, duckdb_module().__version__, kind, list(location),
                      delimiter, [list(c) for c in columns], extra],
                     separators=(",", ":"), ensure_ascii=False)
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return Copy(Path(index_dir) / DIR / f"{digest}.duckdb")


def _q(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _config() -> dict[str, str | bool]:
    return {"autoinstall_known_extensions": False, "autoload_known_extensions": False,
            "allow_community_extensions": False, "allow_unsigned_extensions": False,
            "python_enable_replacements": False, "max_memory": _MAX_MEMORY}


def remove(copy: Copy) -> None:
    """Remove a copy (and the write-ahead log DuckDB may have left beside it)."""
    for p in (copy.path, copy.path.with_name(copy.path.name + ".wal")):
        with contextlib.suppress(OSError):
            os.unlink(p)


def damaged(exc: BaseException) -> bool:
    """Whether a DuckDB error says a database file is unreadable (not a query's fault)."""
    from scratch.query.duck import duckdb_module
    duckdb = duckdb_module()
    text = str(exc).lower()
    return isinstance(exc, (duckdb.IOException, duckdb.SerializationException,
                            duckdb.InternalException)) or "corrupt" in text or \
        "checksum" in text or "not a valid duckdb database" in text


def attach(con: DuckDBPyConnection, copy: Copy, alias: str) -> bool:
    """Attach ``copy`` read-only to ``con`` as ``alias``; False (and the copy removed) when it
    is missing or damaged."""
    from scratch.query.duck import duckdb_module
    duckdb = duckdb_module()
    try:
        if not copy.path.is_file() or copy.path.is_symlink():
            return False
    except OSError:
        return False
    try:
        con.execute(f"ATTACH {_q(str(copy.path))} AS \"{alias}\" (READ_ONLY)")
    except duckdb.Error:
        remove(copy)
        return False
    try:
        ok = con.execute("SELECT count(*) FROM duckdb_tables() WHERE database_name = ? AND "
                         "schema_name = 'main' AND table_name = ?", [alias, TABLE]
                         ).fetchone()
        if ok and ok[0] == 1:
            return True
    except duckdb.Error:
        pass
    with contextlib.suppress(duckdb.Error):
        con.execute(f"DETACH \"{alias}\"")
    remove(copy)
    return False


def directory_ok(copy: Copy) -> bool:
    """Make the copies' directory (0700) inside the index directory; False when it is not a
    real directory (a symlink there would send the copy elsewhere: no copy is made)."""
    directory = copy.path.parent
    try:
        directory.mkdir(mode=0o700, exist_ok=True)
    except OSError:
        return False
    return directory.is_dir() and not directory.is_symlink() and \
        not directory.parent.is_symlink()


def _sweep(directory: Path) -> None:
    """Remove what killed builders left: ``.tmp-<pid>-...`` files whose process is gone."""
    from scratch.store.locking import orphaned_temps
    for path in orphaned_temps(directory):
        with contextlib.suppress(OSError):
            os.unlink(path)


@contextlib.contextmanager
def _locked(copy: Copy, *, wait: bool) -> Iterator[int | None]:
    """An open descriptor holding the copy's build lock, or None when another process holds
    it and ``wait`` is false (or the directory is not one to write in)."""
    if not directory_ok(copy):
        yield None
        return
    fd = os.open(copy.lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield None
            return
        yield fd
    finally:
        os.close(fd)


def build(copy: Copy, bodies: Sequence[str], files: Sequence[Path | str]) -> bool:
    """Make the copy from the first of ``bodies`` (view bodies, most trusting first) that reads
    every row; False when none does (nothing is left behind). The caller holds the lock."""
    from scratch.query.duck import duckdb_module
    duckdb = duckdb_module()
    directory = copy.path.parent
    if not directory_ok(copy):
        return False
    _sweep(directory)
    tmp = directory / f".tmp-{os.getpid()}-{threading.get_ident()}-{copy.path.stem}.duckdb"
    leftovers = (tmp, tmp.with_name(tmp.name + ".wal"))
    for p in leftovers:
        with contextlib.suppress(OSError):
            os.unlink(p)
    try:
        con = duckdb.connect(str(tmp), config=_config())
        try:
            from scratch.query.duck import show_progress, watched
            show_progress(con)
            con.execute("SET allowed_paths = [" + ", ".join(_q(str(f)) for f in files) + "]")
            con.execute("SET allowed_directories = []")
            con.execute("SET enable_external_access = false")
            con.execute("SET lock_configuration = true")
            for body in bodies:
                try:
                    with watched(con, "copy"):
                        con.execute(f"CREATE OR REPLACE TABLE {TABLE} AS {body}")
                    break
                except duckdb.Error:
                    continue
            else:
                return False
            con.execute("CHECKPOINT")
        finally:
            con.close()
        os.replace(tmp, copy.path)
        return True
    except (OSError, duckdb.Error):
        return False
    finally:
        for p in leftovers:
            with contextlib.suppress(OSError):
                os.unlink(p)


def build_now(copy: Copy, bodies: Sequence[str], files: Sequence[Path | str]) -> None:
    """Build the copy unless it is there (waiting for a builder already at it)."""
    with _locked(copy, wait=True) as fd:
        if fd is None or copy.path.is_file():
            return
        build(copy, bodies, files)


def build_later(copy: Copy, bodies: Sequence[str], files: Sequence[Path | str],
                spools: Sequence[Path] = ()) -> bool:
    """Start a detached process that builds the copy (and then removes ``spools``, files made
    for it); False when a builder is already at it. The build lock is taken here and handed
    to the process, so once this returns the lock is held until the copy is in place."""
    fds: list[int] = []
    for f in files:  # the current version is read through a descriptor the store holds open
        head, _, tail = str(f).rpartition("/")
        if head == "/proc/self/fd" and tail.isdigit():
            fds.append(int(tail))
    with _locked(copy, wait=False) as fd:
        if fd is None:
            return False
        spec = json.dumps({"copy": str(copy.path), "bodies": list(bodies),
                           "files": [str(f) for f in files], "spools": [str(s) for s in spools],
                           "lock": fd})
        try:
            proc = subprocess.Popen(
                [sys.executable, "-m", "scratch.query.sqlcopy", spec],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                pass_fds=(fd, *fds), start_new_session=True, close_fds=True,
                env=_child_env())
        except OSError:
            return False
    # reap it when it ends (a long-lived server would otherwise keep a zombie)
    threading.Thread(target=proc.wait, daemon=True).start()
    return True


def _child_env() -> dict[str, str]:
    """This process's environment, with the scratch it runs first on the path."""
    import scratch
    here = str(Path(scratch.__file__).resolve().parent.parent)
    rest = os.environ.get("PYTHONPATH", "")
    return {**os.environ, "PYTHONPATH": here + (os.pathsep + rest if rest else "")}


def lower_priority() -> None:
    """Make this process (and the threads it starts after, DuckDB's among them) yield the CPU
    to every other: the agent's next query must not wait behind a copy being built. The idle
    scheduling class where the system has one (Linux: it runs only when a CPU would otherwise
    be idle), and the lowest nice value in any case."""
    with contextlib.suppress(OSError, AttributeError):
        os.nice(19)
    with contextlib.suppress(OSError, AttributeError):
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))  # type: ignore[attr-defined, unused-ignore]


def _main(argv: Sequence[str]) -> int:
    lower_priority()  # the answer that started it, and the next query, go first
    spec = json.loads(argv[0])
    copy = Copy(Path(spec["copy"]))
    try:
        if not copy.path.is_file():
            build(copy, spec["bodies"], spec["files"])
    finally:
        for s in spec["spools"]:
            with contextlib.suppress(OSError):
                os.unlink(s)
        os.close(int(spec["lock"]))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
