"""SQL over stored entries, on DuckDB, read-only and sandboxed.

:func:`run_sql` runs one query over named tables (the main entry is ``entry``), each made from
a :class:`Source`: a stored NDJSON or JSON file, a CSV/TSV file, or rows given by the caller
(parsed log records, JSON items) or text lines as ``(line, text)``. :func:`describe` lists
each table's columns and types.

Sandbox (DuckDB's documented settings, set before any query runs and then locked):
- ``enable_external_access = false`` with ``allowed_paths`` naming only the files behind the
  tables: no other file, no network, no ``COPY``/``ATTACH``/``EXPORT`` target, no secrets;
- ``autoinstall_known_extensions`` / ``autoload_known_extensions`` /
  ``allow_community_extensions`` off (no ``INSTALL``/``LOAD``, so no ``httpfs``);
- ``python_enable_replacements`` off (a query cannot read Python variables by name);
- ``lock_configuration = true``: ``SET`` cannot undo any of it;
- and, before DuckDB sees it, the query must be exactly one ``SELECT`` (``WITH``, ``FROM``,
  ``VALUES``, ``DESCRIBE``, ``SUMMARIZE`` are selects) or ``EXPLAIN``: anything else is
  refused as ``sql_not_read_only``.
Errors: ``sql_not_read_only``, ``sql_access_denied`` (DuckDB refused a file/extension/setting),
``sql_error`` (syntax, binder, conversion), ``sql_timeout`` (the time limit interrupted it:
exit 3), ``invalid_argument`` (bad table names or limits).

Results keep DuckDB's values: integers of any size stay ``int``, DECIMAL stays ``Decimal``
(:func:`json_rows` writes both as exact JSON numbers), dates/times are ISO text in JSON.

DuckDB is imported inside the functions that use it: importing this module is cheap.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from scratch.errors import LimitExceeded, UsageError

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection

    from scratch.query.sqlcopy import Copy

TABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}\Z")
MAX_MEMORY = "2GB"
_CSV_TYPES = {"integer": "BIGINT", "number": "DOUBLE", "boolean": "BOOLEAN"}


class SqlError(UsageError):
    code = "sql_error"


class SqlTimeout(LimitExceeded):
    code = "sql_timeout"


@dataclass(frozen=True)
class Source:
    """What a table is made of. Build one with the class methods."""

    kind: str  # ndjson, json, csv, rows, lines
    path: Path | None = None
    rows: Callable[[], Iterable[Mapping[str, object]]] | None = field(default=None, compare=False)
    location: tuple[str | int, ...] = ()  # json: where the array of items is
    delimiter: str = ","
    columns: tuple[tuple[str, str], ...] = ()  # csv: (name, scratch column type)
    # where this table's columnar copy lives (scratch.query.sqlcopy), or None: no copy
    copy: Copy | None = field(default=None, compare=False)

    def with_copy(self, copy: Copy | None) -> Source:
        """This source, its queries answered from the columnar copy ``copy`` once made."""
        return replace(self, copy=copy)

    @classmethod
    def ndjson(cls, path: Path) -> Source:
        """Each line of a stored NDJSON file is a row (objects' keys are the columns)."""
        return cls("ndjson", Path(path))

    @classmethod
    def json_array(cls, path: Path, location: Sequence[str | int] = ()) -> Source:
        """The items of the array at ``location`` (() is the root) of a stored JSON file."""
        return cls("json", Path(path), location=tuple(location))

    @classmethod
    def csv(cls, path: Path, delimiter: str = ",",
            columns: Sequence[tuple[str, str]] = ()) -> Source:
        """Rows of a stored CSV/TSV file; ``columns`` are the index's (name, type) pairs, which
        name and type the columns (types: integer, number, boolean, anything else text)."""
        return cls("csv", Path(path), delimiter=delimiter, columns=tuple(columns))

    @classmethod
    def records(cls, rows: Callable[[], Iterable[Mapping[str, object]]]) -> Source:
        """Rows given by the caller (parsed log records, JSON items): ``rows()`` is called once
        and must give JSON-like dicts."""
        return cls("rows", rows=rows)

    @classmethod
    def lines(cls, path: Path) -> Source:
        """The lines of a text file as ``(line, text)``: line numbers from 1, terminators
        (``\\n`` and a ``\\r`` before it) removed."""
        return cls("lines", Path(path))


@dataclass(frozen=True)
class SqlResult:
    """Typed rows: ``columns`` names, ``types`` DuckDB type names, ``rows`` value tuples;
    ``truncated`` when the query had more rows than ``row_limit``."""

    columns: list[str]
    types: list[str]
    rows: list[tuple[object, ...]]  # DuckDB's values (json_value writes them as JSON)
    truncated: bool
    row_limit: int
    seconds: float
    copied: tuple[str, ...] = ()  # the tables read from their columnar copy

    def to_dict(self) -> dict[str, object]:
        return {"columns": self.columns, "types": self.types,
                "rows": [list(r) for r in self.rows], "truncated": self.truncated,
                "row_limit": self.row_limit}


# ---------------------------------------------------------------------------------- setup


def _q(text: str) -> str:
    """A SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _write_ndjson(rows: Iterable[Mapping[str, object]], out: Path) -> None:
    import orjson

    from scratch.progress import report
    with open(out, "wb") as fh:
        buf: list[bytes] = []
        for n, row in enumerate(rows, 1):
            if not n % 10_000:
                report("rows", n)
            try:
                buf.append(orjson.dumps(row, default=str))
            except TypeError:  # integers beyond 64 bits: the stdlib writes them exactly
                import json

                buf.append(json.dumps(row, ensure_ascii=False, default=str).encode())
            if len(buf) >= 4096:
                fh.write(b"\n".join(buf) + b"\n")
                buf.clear()
        if buf:
            fh.write(b"\n".join(buf) + b"\n")


def _write_lines(path: Path, out: Path) -> None:
    from scratch.index.textinfo import iter_text_lines

    _write_ndjson(({"line": n, "text": t} for n, t in enumerate(iter_text_lines(path), 1)),
                  out)


def _views(name: str, src: Source, tmp: Path) -> tuple[list[str], list[Path]]:
    """Candidate view bodies for a table (the first that works is used; later ones read more
    carefully), and the files they read."""
    if src.kind == "ndjson":
        assert src.path is not None
        p = _q(str(src.path))
        return ([f"SELECT * FROM read_ndjson({p})",
                 f"SELECT * FROM read_ndjson({p}, sample_size=-1)",
                 f"SELECT * FROM read_ndjson({p}, sample_size=-1, ignore_errors=true)"],
                [src.path])
    if src.kind == "json":
        assert src.path is not None
        p = _q(str(src.path))
        size = max(src.path.stat().st_size + 1, 16 << 20)
        if not src.location:
            return ([f"SELECT * FROM read_json({p}, format='array', maximum_object_size={size})",
                     f"SELECT * FROM read_json({p}, format='array', sample_size=-1, "
                     f"maximum_object_size={size})"], [src.path])
        expr = "j"
        for seg in src.location:
            expr += f"[{seg + 1}]" if isinstance(seg, int) else f".{_ident(seg)}"
        base = f"read_json({p}, format='auto', records=false, maximum_object_size={size}"
        return ([f"SELECT t.* FROM (SELECT unnest({expr}) AS t FROM {base}) AS r(j))",
                 f"SELECT t.* FROM (SELECT unnest({expr}) AS t FROM {base}, "
                 "sample_size=-1) AS r(j))"], [src.path])
    if src.kind == "csv":
        assert src.path is not None
        p = _q(str(src.path))
        opts = f"delim={_q(src.delimiter)}, header=true"
        if src.columns:
            names = "[" + ", ".join(_q(n) for n, _ in src.columns) + "]"
            types = "{" + ", ".join(f"{_q(n)}: {_q(_CSV_TYPES.get(t, 'VARCHAR'))}"
                                    for n, t in src.columns) + "}"
            return ([f"SELECT * FROM read_csv({p}, {opts}, names={names}, types={types})",
                     f"SELECT * FROM read_csv({p}, {opts}, names={names}, all_varchar=true)"],
                    [src.path])
        return ([f"SELECT * FROM read_csv({p}, {opts})",
                 f"SELECT * FROM read_csv({p}, {opts}, all_varchar=true)"], [src.path])
    if src.kind in ("rows", "lines"):
        out = tmp / f"{name}.ndjson"
        if src.kind == "lines":
            assert src.path is not None
            _write_lines(src.path, out)
            p = _q(str(out))
            return ([f"SELECT * FROM read_ndjson({p}, columns={{'line': 'BIGINT', "
                     "'text': 'VARCHAR'})"], [out])
        assert src.rows is not None
        _write_ndjson(src.rows(), out)
        p = _q(str(out))
        if out.stat().st_size == 0:
            return (["SELECT NULL AS _line WHERE false"], [out])
        return ([f"SELECT * FROM read_ndjson({p}, sample_size=-1)"], [out])
    raise UsageError(f"unknown table source {src.kind!r}", code="invalid_argument")


def _size(files: Sequence[Path]) -> int:
    """Bytes of ``files`` (0 when one cannot be read: then no copy is made of it)."""
    try:
        return sum(f.stat().st_size for f in files)
    except OSError:
        return 0


class _Session:
    """A sandboxed DuckDB connection with one view per table (closed on exit).

    ``copies`` (:data:`scratch.query.sqlcopy.MODES`): whether tables with a columnar copy
    are read from it, and when a missing one is made (see :mod:`scratch.query.sqlcopy`)."""

    def __init__(self, tables: Mapping[str, Source], tmp_dir: Path | None = None,
                 copies: str = "off") -> None:
        from scratch.query.duck import duckdb_module
        duckdb = duckdb_module()

        if not tables:
            raise UsageError("no tables to query", code="invalid_argument")
        for name in tables:
            if not TABLE_NAME.match(name):
                raise UsageError(f"invalid table name {name!r}: letters, digits and _ only",
                                 code="invalid_argument", table=name)
        self.mode = copies
        self.copied: dict[str, Copy] = {}  # tables read from their copy
        self.missing: dict[str, Copy] = {}  # tables whose copy is made after the query
        # rows given by the caller are written here for DuckDB to read: 0700, removed on close
        self.tmp = Path(tempfile.mkdtemp(prefix="scratch-sql-", dir=tmp_dir))
        try:
            self.con = duckdb.connect(":memory:", config={
                "autoinstall_known_extensions": False, "autoload_known_extensions": False,
                "allow_community_extensions": False, "allow_unsigned_extensions": False,
                "python_enable_replacements": False, "max_memory": MAX_MEMORY})
            from scratch.query.duck import show_progress
            show_progress(self.con)
            plans = self._plans(tables)
            files = sorted({str(f) for _, fs in plans.values() for f in fs})
            self.con.execute("SET allowed_paths = [" + ", ".join(_q(f) for f in files) + "]")
            self.con.execute("SET allowed_directories = []")
            self.con.execute("SET enable_external_access = false")
            self.con.execute("SET lock_configuration = true")
        except BaseException:
            if hasattr(self, "con"):
                self.con.close()
            shutil.rmtree(self.tmp, ignore_errors=True)
            raise
        self.plans = {name: bodies for name, (bodies, _) in plans.items()}
        self.files = {name: fs for name, (_, fs) in plans.items()}
        self.choice = dict.fromkeys(tables, 0)
        for name in tables:
            self._create(name)

    def _plans(self, tables: Mapping[str, Source]
               ) -> dict[str, tuple[list[str], list[Path]]]:
        """Each table's view bodies and the files they read: a table with a columnar copy is
        read from it (attached read-only, before the configuration is locked; made first
        when it is to be made now), without reading or spooling its rows at all."""
        from scratch.query import sqlcopy
        plans: dict[str, tuple[list[str], list[Path]]] = {}
        aliases: dict[Path, str] = {}
        for name, src in tables.items():
            copy = src.copy if self.mode != "off" else None
            if copy is not None and src.path is not None and \
                    _size([src.path]) < sqlcopy.MIN_BYTES:
                copy = None  # read in milliseconds: a copy would only take room
            if copy is None:
                plans[name] = _views(name, src, self.tmp)
                continue
            alias = aliases.get(copy.path)
            if alias is None:
                alias = f"copy_{name}"
                if not sqlcopy.attach(self.con, copy, alias):
                    bodies, files = plans[name] = _views(name, src, self.tmp)
                    if _size(files) < sqlcopy.MIN_BYTES:
                        continue
                    if not self._build_now(files):
                        self.missing[name] = copy  # made after the query, in the background
                        continue
                    sqlcopy.build_now(copy, bodies, files)
                    if not sqlcopy.attach(self.con, copy, alias):
                        continue  # it could not be made: the stored file is read
                aliases[copy.path] = alias
            plans[name] = ([f"SELECT * FROM {_ident(alias)}.main.{sqlcopy.TABLE}"], [])
            self.copied[name] = copy
        return plans

    def _build_now(self, files: Sequence[Path]) -> bool:
        from scratch.query import sqlcopy
        if self.mode == "foreground":
            return True
        return self.mode == "auto" and _size(files) <= sqlcopy.FOREGROUND_BYTES

    def build_missing(self) -> None:
        """Start the background builds of the copies this session's tables lacked, from the
        reading each table ended up with (files spooled for a table go with its build)."""
        from scratch.query import sqlcopy
        started: set[Path] = set()
        for name, copy in self.missing.items():
            if copy.path in started or not sqlcopy.directory_ok(copy):
                continue  # (a copies directory that is a symlink: nothing is moved there)
            started.add(copy.path)
            bodies = self.plans[name][self.choice[name]:]
            files, spools = [], []
            for f in self.files[name]:
                if f.parent != self.tmp:
                    files.append(f)
                    continue
                moved = copy.path.parent / f".spool-{copy.path.stem}-{os.getpid()}-{f.name}"
                try:
                    moved.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                    shutil.move(str(f), str(moved))
                except OSError:
                    break
                bodies = [b.replace(_q(str(f)), _q(str(moved))) for b in bodies]
                files.append(moved)
                spools.append(moved)
            else:
                if not sqlcopy.build_later(copy, bodies, files, spools):
                    for sp in spools:
                        with contextlib.suppress(OSError):
                            os.unlink(sp)

    def drop_copies(self) -> None:
        """Remove the copies this session read (one of them turned out damaged)."""
        from scratch.query import sqlcopy
        for copy in self.copied.values():
            sqlcopy.remove(copy)

    def _create(self, name: str) -> None:
        body = self.plans[name][self.choice[name]]
        self.con.execute(f"CREATE OR REPLACE VIEW {_ident(name)} AS {body}")

    def fallback(self) -> bool:
        """Move every table that has a more careful reading to it; False when none has."""
        moved = False
        for name, bodies in self.plans.items():
            if self.choice[name] + 1 < len(bodies):
                self.choice[name] += 1
                self._create(name)
                moved = True
        return moved

    def close(self) -> None:
        try:
            self.con.close()
        finally:
            shutil.rmtree(self.tmp, ignore_errors=True)

    def __enter__(self) -> _Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _check_read_only(con: DuckDBPyConnection, query: str) -> None:
    from scratch.query.duck import duckdb_module
    duckdb = duckdb_module()

    try:
        statements = con.extract_statements(query)
    except duckdb.Error as exc:
        raise SqlError(_message(exc), query=query) from None
    if len(statements) != 1:
        raise SqlError(f"one statement at a time ({len(statements)} given)", query=query,
                       code="sql_not_read_only" if len(statements) > 1 else "sql_error")
    kind = statements[0].type
    if kind not in (duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN):
        raise SqlError(f"only SELECT queries run here (this is {kind.name}): the tables are "
                       "read-only and nothing outside them can be reached",
                       code="sql_not_read_only", statement=kind.name, query=query)


def _message(exc: BaseException) -> str:
    return str(exc).strip().split("\n\n")[0]


def _classify(exc: BaseException, query: str) -> SqlError:
    from scratch.query.duck import duckdb_module
    duckdb = duckdb_module()

    msg = _message(exc)
    if isinstance(exc, duckdb.PermissionException) or "disabled by configuration" in msg or \
            "configuration has been locked" in msg:
        return SqlError(f"refused: {msg} (queries read only their tables)",
                        code="sql_access_denied", query=query)
    return SqlError(msg, query=query, error=type(exc).__name__)


def _retryable(exc: BaseException) -> bool:
    from scratch.query.duck import duckdb_module
    duckdb = duckdb_module()

    return isinstance(exc, (duckdb.ConversionException, duckdb.InvalidInputException)) and \
        "disabled by configuration" not in str(exc)


# ---------------------------------------------------------------------------------- run


def run_sql(tables: Mapping[str, Source], query: str, *, row_limit: int = 1000,
            time_limit: float = 30.0, tmp_dir: Path | None = None,
            copies: str = "off") -> SqlResult:
    """Run one read-only query; at most ``row_limit`` rows are kept (``truncated`` says if
    there were more); past ``time_limit`` seconds the query is interrupted (``sql_timeout``).
    ``tmp_dir``: where rows given by the caller are spooled for DuckDB (pass a directory of
    the store's, which is private; default: the system's temporary directory).
    ``copies``: whether tables with a columnar copy (:attr:`Source.copy`) are read from it
    and when a missing one is made (:data:`scratch.query.sqlcopy.MODES`; ``off``: never)."""
    if row_limit < 0 or time_limit <= 0:
        raise UsageError("row limit must be >= 0 and time limit > 0", code="invalid_argument",
                         row_limit=row_limit, time_limit=time_limit)
    started = time.monotonic()
    # a damaged copy is removed and the query runs again: the copy is made again as a missing
    # one is (should that one fail too, the stored files are read)
    for mode in (copies, copies):
        try:
            return _run(tables, query, row_limit, time_limit, tmp_dir, mode, started)
        except _CopyDamaged:
            continue
    return _run(tables, query, row_limit, time_limit, tmp_dir, "off", started)


class _CopyDamaged(Exception):
    """A columnar copy a session read turned out damaged (it has been removed)."""


def _run(tables: Mapping[str, Source], query: str, row_limit: int, time_limit: float,
         tmp_dir: Path | None, copies: str, started: float) -> SqlResult:
    from scratch.query.duck import duckdb_module
    duckdb = duckdb_module()

    key = _pool.key(tables, copies) if _pool is not None else None
    s = _pool.take(key) if _pool is not None and key is not None else None
    if s is None:
        s = _Session(tables, tmp_dir, copies)
    keep = False
    fired: list[bool] = []

    def stop() -> None:
        fired.append(True)
        s.con.interrupt()

    try:
        try:
            _check_read_only(s.con, query)
        except SqlError:
            keep = key is not None and len(s.copied) == len(tables)  # the query's own error
            raise
        while True:
            timer = threading.Timer(max(0.0, time_limit - (time.monotonic() - started)), stop)
            timer.daemon = True
            timer.start()
            try:
                from scratch.query.duck import watched
                with watched(s.con, "query"):
                    cur = s.con.execute(query)
                    columns = [d[0] for d in cur.description or []]
                    types = [str(d[1]) for d in cur.description or []]
                    rows = cur.fetchmany(row_limit + 1) if row_limit else cur.fetchmany(1)
                break
            except duckdb.InterruptException:
                raise SqlTimeout(f"the query ran past the time limit of {time_limit:g} s and "
                                 "was stopped", limit=time_limit, query=query) from None
            except duckdb.Error as exc:
                if s.copied and _copy_damaged(exc):
                    s.drop_copies()
                    raise _CopyDamaged from None
                if _retryable(exc) and s.fallback():
                    continue  # a later row did not fit the sampled types: read them all
                # a query's own error leaves a session of copies as it was: keep it
                keep = key is not None and len(s.copied) == len(tables)
                raise _classify(exc, query) from None
            finally:
                timer.cancel()
        s.build_missing()
        truncated = len(rows) > row_limit
        keep = key is not None and len(s.copied) == len(tables)
        return SqlResult(columns, types, [tuple(r) for r in rows[:row_limit]], truncated,
                         row_limit, time.monotonic() - started, tuple(sorted(s.copied)))
    finally:
        if keep and not fired and _pool is not None and key is not None:
            _pool.give(key, s)  # (an interrupt that came as the query ended could hit the next)
        else:
            s.close()


_PoolKey = tuple[tuple[str, str], ...]  # a kept session's tables: (name, copy path), sorted


class _SessionPool:
    """Sessions whose every table is read from a columnar copy, kept open between queries by
    a long-lived process (:func:`keep_sessions`): opening DuckDB and attaching the copies is
    most of what a query of a copy costs (~50 ms of ~60).

    Why reusing one is safe: such a session reads no file (``allowed_paths`` is empty, the
    configuration locked), its copies are attached read-only, and a query is one SELECT
    (DuckDB's ``query()`` runs SELECTs only), so no query changes what the next one sees. A
    session is handed to one query at a time; one that met an error other than the query's
    own (a damaged copy, an interrupt) is closed, not kept."""

    def __init__(self, size: int) -> None:
        from collections import OrderedDict
        self.size = size
        self.lock = threading.Lock()
        self.idle: OrderedDict[_PoolKey, list[_Session]] = OrderedDict()

    def key(self, tables: Mapping[str, Source], copies: str) -> _PoolKey | None:
        if copies == "off":
            return None
        pairs = [(name, str(src.copy.path)) for name, src in tables.items()
                 if src.copy is not None]
        return tuple(sorted(pairs)) if len(pairs) == len(tables) else None

    def take(self, key: _PoolKey) -> _Session | None:
        with self.lock:
            free = self.idle.get(key)
            if not free:
                return None
            s = free.pop()
            if not free:
                del self.idle[key]
        if all(Path(p).is_file() for _, p in key):
            return s
        s.close()  # a copy was removed (the cache cleared): open anew, so it is made again
        return None

    def give(self, key: _PoolKey, s: _Session) -> None:
        shutil.rmtree(s.tmp, ignore_errors=True)  # nothing is spooled for copies
        drop: list[_Session] = []
        with self.lock:
            self.idle.setdefault(key, []).append(s)
            self.idle.move_to_end(key)
            while sum(len(v) for v in self.idle.values()) > self.size:
                oldest = next(iter(self.idle))
                drop.append(self.idle[oldest].pop(0))
                if not self.idle[oldest]:
                    del self.idle[oldest]
        for d in drop:
            d.close()

    def clear(self) -> None:
        with self.lock:
            sessions = [s for v in self.idle.values() for s in v]
            self.idle.clear()
        for s in sessions:
            s.close()


_pool: _SessionPool | None = None


def keep_sessions(size: int) -> None:
    """Keep up to ``size`` sessions of columnar copies open between queries (a long-lived
    process such as the MCP server; 0: none, closing those kept). A CLI command keeps none."""
    global _pool
    if _pool is not None:
        _pool.clear()
    _pool = _SessionPool(size) if size > 0 else None


def _copy_damaged(exc: BaseException) -> bool:
    from scratch.query import sqlcopy
    return sqlcopy.damaged(exc)


def describe(tables: Mapping[str, Source], *, tmp_dir: Path | None = None,
             copies: str = "off") -> dict[str, list[tuple[str, object]]]:
    """``{table: [(column, DuckDB type), ...]}`` (``copies`` as for :func:`run_sql`); each
    type a DuckDB type object: ``str()`` spells it whole, :func:`short_type` in short,
    :func:`expand_type` lists the fields one level inside it."""
    for mode in (copies, copies):
        try:
            return _describe(tables, tmp_dir, mode)
        except _CopyDamaged:
            continue
    return _describe(tables, tmp_dir, "off")


def _describe(tables: Mapping[str, Source], tmp_dir: Path | None, copies: str
              ) -> dict[str, list[tuple[str, object]]]:
    from scratch.query.duck import duckdb_module
    duckdb = duckdb_module()

    out: dict[str, list[tuple[str, object]]] = {}
    with _Session(tables, tmp_dir, copies) as s:
        for name in tables:
            while True:
                try:
                    from scratch.query.duck import watched
                    # the columns' type objects (DESCRIBE gives only their whole text)
                    with watched(s.con, "query"):
                        found = s.con.execute(f"SELECT * FROM {_ident(name)} LIMIT 0"
                                              ).description
                    break
                except duckdb.Error as exc:
                    if s.copied and _copy_damaged(exc):
                        s.drop_copies()
                        raise _CopyDamaged from None
                    if _retryable(exc) and s.fallback():
                        continue
                    raise _classify(exc, f"DESCRIBE {name}") from None
            out[name] = [(str(d[0]), d[1]) for d in found or ()]
        s.build_missing()
    return out


# ------------------------------------------------------------------------- column types

SHORT_TYPE_CHARS = 60  # a column type longer than this is described in short


def short_type(kind: object) -> str:
    """A DuckDB type as ``--describe`` lists it: whole when at most :data:`SHORT_TYPE_CHARS`
    characters, else in short, every STRUCT inside it as ``STRUCT(42 fields)``
    (``MAP(VARCHAR, STRUCT(11 fields))``, ``STRUCT(3 fields)[]``): the whole type of a
    nested record costs thousands of tokens (an OpenAPI document's ``paths``)."""
    text = str(kind)
    return text if len(text) <= SHORT_TYPE_CHARS else _outline(kind)


def outlined(kind: object) -> bool:
    """Whether :func:`short_type` leaves parts of ``kind`` out."""
    return short_type(kind) != str(kind)


_NESTED = ("struct", "map", "list", "array", "union")


def _children(kind: object) -> list[tuple[str, object]]:
    """A nested type's children (name, type); none for another (DuckDB refuses to list them)."""
    if str(getattr(kind, "id", "")) not in _NESTED:
        return []
    children: list[tuple[str, object]] = list(getattr(kind, "children", ()))
    return children


def _outline(kind: object) -> str:
    tag = str(getattr(kind, "id", ""))
    children = _children(kind)
    if tag == "struct":
        return f"STRUCT({len(children)} field{'' if len(children) == 1 else 's'})"
    if tag == "map" and len(children) == 2:
        return f"MAP({_outline(children[0][1])}, {_outline(children[1][1])})"
    if tag == "list" and children:
        return f"{_outline(children[0][1])}[]"
    if tag == "array" and children:
        size = dict(children).get("size")
        return f"{_outline(children[0][1])}[{size}]"
    if tag == "union":
        members = [c for c in children if c[0]]
        return f"UNION({len(members)} member{'' if len(members) == 1 else 's'})"
    return str(kind)


def _inside(kind: object) -> tuple[object, list[str]]:
    """The type a value of ``kind`` holds records of, through maps (their values) and lists
    (their elements), and the steps taken (``value``, ``element``)."""
    steps: list[str] = []
    while True:
        tag = str(getattr(kind, "id", ""))
        children = _children(kind)
        if tag == "map" and len(children) == 2:
            kind = children[1][1]
            steps.append("value")
        elif tag in ("list", "array") and children:
            kind = children[0][1]
            steps.append("element")
        else:
            return kind, steps


class Expanded(NamedTuple):
    """One column opened a level: ``fields`` of the records it holds (name, type), reached
    from ``kind`` (the type at the path) through ``steps`` (maps' values, lists' elements)."""

    kind: object  # a DuckDB type object
    steps: list[str]
    fields: list[tuple[str, object]]


def expand_type(kind: object, names: Sequence[str]) -> Expanded:
    """The fields one level inside the struct at ``names`` (struct field names, after the
    column's own) of a column of type ``kind``, stepping through maps and lists on the way.
    A name no struct there has raises ``KeyError`` with the fields that are (``args[1]``)."""
    for i, name in enumerate(names):
        inner, _ = _inside(kind)
        fields = _children(inner) if str(getattr(inner, "id", "")) == "struct" else []
        found = [t for n, t in fields if n == name]
        if not found:
            raise KeyError(i, [n for n, _ in fields])
        kind = found[0]
    inner, steps = _inside(kind)
    fields = _children(inner) if str(getattr(inner, "id", "")) == "struct" else []
    return Expanded(kind, steps, fields)


# ---------------------------------------------------------------------------------- JSON


def json_value(value: object) -> object:
    """A result value as orjson can write it exactly (big integers and decimals as number
    fragments, dates and times as ISO text, bytes as hex, UUIDs as text)."""
    import datetime as dt
    import decimal
    import uuid

    import orjson

    if value is None or isinstance(value, (bool, str, float)):
        return value
    if isinstance(value, int):
        return value if -(1 << 63) <= value < (1 << 64) else orjson.Fragment(str(value))
    if isinstance(value, decimal.Decimal):
        return orjson.Fragment(str(value)) if value.is_finite() else str(value)
    if isinstance(value, (dt.date, dt.time, dt.datetime)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, dict):
        return {str(k): json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    return str(value)


def json_rows(result: SqlResult) -> bytes:
    """``{"columns", "types", "rows", "truncated", "row_limit"}`` as JSON bytes, numbers exact."""
    import orjson

    doc = result.to_dict()
    doc["rows"] = [[json_value(v) for v in row] for row in result.rows]
    return orjson.dumps(doc)


def iter_dict_rows(result: SqlResult) -> Iterator[dict[str, object]]:
    """The rows as dicts keyed by column name (a repeated name keeps its last value)."""
    for row in result.rows:
        yield dict(zip(result.columns, row, strict=True))

