"""sql: one read-only SQL query over stored entries, on DuckDB, as a candidate answer.

The entry is the table ``entry``; ``table`` (a list of ``NAME=REF``) adds others. What a table holds
depends on the entry's format (:func:`source_of`):

- NDJSON: one row per line (objects' keys are the columns), read by DuckDB from the file;
- JSON: the items of an array (``path``, else the root array, else the array the pointer
  calls "items of": the largest array of objects), read by DuckDB from the file; or, at a
  ``path`` naming one, the records of a map of records (each with its key, ``_key`` unless
  ``key_field`` names it) or nested arrays flattened (``items[*].lines``: each row with
  ``_parent``), as :func:`scratch.answers.rows.arrays.rows_at` reads them;
- YAML: the items of an array likewise (rows spooled for DuckDB; a non-object item is a row
  ``{"value": item}``);
- CSV/TSV: the rows, columns named and typed as ``schema`` lists them;
- a parsed log: its records (``_line``, the format's fields; ``_raw`` for lines that do not
  parse);
- any other text: its lines as ``(line, text)``.

Invariants:
- The query runs in :func:`scratch.query.sql.run_sql`'s sandbox: one SELECT only, no file,
  network, extension or setting reachable from it (refused with ``sql_not_read_only`` or
  ``sql_access_denied``), at most :data:`MAX_ROWS` rows kept (``truncated`` says there were
  more) and :data:`TIME_LIMIT` seconds (``sql_timeout``).
- The answer is a list of rows (:class:`~scratch.answers.rows.lists.RowList`): priced and
  capped like any answer, ``fit`` pages rows and ``next`` continues at the first row not
  shown (the query runs again: its rows come back in the same order for the same version).
- ``describe``: the columns and DuckDB types of every table, without running a query.
- A table of a version is read from its columnar copy once one is made
  (:mod:`scratch.query.sqlcopy`: kept beside the version's index, made on its first query
  -- before it for small tables, in the background after it for big ones, config
  ``sql.copy``); the rows and types are those of the stored file. ``from_copy`` lists the
  tables a query read from their copy.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Annotated

from scratch.answers.commands._args import FIT, KEY_FIELD, REF
from scratch.answers.kernel.candidate import Candidate
from scratch.answers.kernel.context import Context
from scratch.answers.kernel.result import Words
from scratch.answers.kernel.target import Target, open_target
from scratch.answers.rows.lists import RowList, cell_text
from scratch.calls import Call, call
from scratch.declare import Arg, Command, Tool
from scratch.errors import ScratchError, UsageError, argument
from scratch.words import plural

if TYPE_CHECKING:
    from pathlib import Path

    from scratch.answers.rows.arrays import RowsAt
    from scratch.answers.rows.items import Info, Row
    from scratch.query.sql import Source

MAX_ROWS = 10_000
TIME_LIMIT = 20.0


def _json_rows(target: Target, path: str | None, key_field: str | None = None
               ) -> tuple[RowsAt, str]:
    """The rows of a JSON/YAML/NDJSON entry's table (an array, a map of records, or nested
    arrays flattened), and how to say what they are."""
    from scratch.answers.rows.arrays import rows_at
    from scratch.pathnames import format_path
    if path is None:
        schema = target.index.info.get("schema")
        if isinstance(schema, dict) and schema.get("type") != "array":
            from scratch.answers.pointer.build import array_nodes
            arrays = array_nodes(schema)
            if not arrays:
                maps = _record_maps(schema)
                found = "".join(f"; {m['path']} is a map of {m['length']:,} records"
                                for m in maps[:3])
                raise UsageError("this entry holds no array of items to query; give "
                                 f"{argument('path')}: the path to an array or a map of "
                                 f"records{found}", code="invalid_path", argument="path",
                                 suggestions=[*(call("sql", ref=target.ref, describe=True,
                                                     path=str(m["path"])) for m in maps[:3]),
                                              call("schema", ref=target.ref)])
            path = str(arrays[0].get("path") or ".")
        else:
            path = "."
    at = rows_at(target, path, key_field)
    where = format_path(list(at.segments))
    if at.kind == "map":
        return at, f"the {plural(at.total, 'record', grouped=True)} of the map {where}"
    if at.kind == "nested":
        return at, f"the {plural(at.total, 'item', grouped=True)} of {at.inner}"
    return at, f"the {plural(at.total, 'item', grouped=True)} of {where}"


def _record_maps(schema: Info) -> list[Info]:
    """The outline's maps of records, the most records first."""
    from scratch.index.schema import record_map_size
    found: list[Info] = []

    def walk(node: Info) -> None:
        if record_map_size(node) is not None:
            found.append(node)
        for child in node.get("children") or []:
            walk(child)

    walk(schema)
    return sorted(found, key=lambda n: -int(n.get("length") or 0))


def source_of(target: Target, path: str | None = None, key_field: str | None = None
              ) -> tuple[Source, str]:
    """(the :class:`~scratch.query.sql.Source` of ``target``'s table, what its rows are)."""
    from scratch.query.sql import Source
    fmt = target.format
    if fmt in ("csv", "tsv"):
        from scratch.answers.rows.csv_rows import CsvRows
        rows = CsvRows(target)
        what = f"the {plural(rows.total, 'row', grouped=True)} of the {fmt}"
        info = target.index.info
        if info.get("ragged_rows") or rows.warnings:
            # rows of other lengths than the header, or a record that does not parse: the
            # rows as scratch reads them (extra cells under _rest), not DuckDB's strict reader
            return Source.records(lambda: rows.iter_rows(0, rows.total)), what
        types = [str(c.get("type")) for c in info.get("column_info") or []]
        columns = [(name, types[i] if i < len(types) else "string")
                   for i, name in enumerate(rows.columns)]
        return Source.csv(target.path, rows.delimiter, columns), what
    if fmt == "log":
        from scratch.answers.rows.log_records import LogRows, parsed_log
        rec = parsed_log(target)
        if rec is not None:
            log = LogRows(target, rec)  # its records: header lines are no rows
            return Source.records(log.iter_records), log.about()
    if getattr(target.index, "layout", None) == "ndjson" and path in (None, ".", "$", ""):
        lines = plural(target.index.line_count, "line", grouped=True)
        return Source.ndjson(target.path), f"the {lines}"
    if fmt in ("json", "yaml", "ndjson"):
        at, what = _json_rows(target, path, key_field)
        if at.kind != "array":  # a map's records, nested items: the rows as scratch reads them
            return Source.records(lambda: iter(at.rows)), what
        location = list(at.segments)
        if fmt == "json" and all(isinstance(s, str) or (isinstance(s, int) and s >= 0)
                                 for s in location):
            return Source.json_array(target.path, location), what
        return _spooled(target, location), what
    return (Source.lines(target.path),
            f"the {plural(target.index.line_count, 'line', grouped=True)} as (line, text)")


def _spooled(target: Target, location: list[str | int]) -> Source:
    from scratch.query.sql import Source

    def rows() -> Iterator[Row]:
        for item in target.index.value_at(location):
            yield item if isinstance(item, dict) else {"value": item}

    return Source.records(rows)


def _tables(ctx: Context, main: Target, path: str | None, tables: list[str],
            key_field: str | None = None
            ) -> tuple[dict[str, Source], dict[str, str], list[Target]]:
    """{table: Source}, {table: what it holds}, and the other targets opened."""
    src, what = source_of(main, path, key_field)
    sources = {"entry": _with_copy(src, main, path, key_field)}
    about = {"entry": f"{main.ref}: {what}"}
    opened: list[Target] = []
    for spec in split_tables(tables):
        name, sep, ref = spec.partition("=")
        name, ref = name.strip(), ref.strip()
        if not sep or not name or not ref:
            raise UsageError(f"{argument('table')} takes NAME=REF, not {spec!r}",
                             code="invalid_argument", argument="table")
        if name in sources:
            raise UsageError(f"table {name!r} is given twice (entry is REF itself)",
                             code="invalid_argument", table=name)
        other = open_target(ctx, ref, logs=True)
        opened.append(other)
        src, what = source_of(other)
        sources[name] = _with_copy(src, other, None)
        about[name] = f"{other.ref}: {what}"
    return sources, about, opened


def _with_copy(src: Source, target: Target, path: str | None,
               key_field: str | None = None) -> Source:
    """``src`` with the columnar copy of its table of this version (:mod:`scratch.query.sqlcopy`),
    kept in the version's index directory. The copy's key must name everything that decides
    the rows: the source's own fields, and for rows made here (logs, YAML, spooled JSON) the
    format and ``path`` (a new argument that changes which rows a path gives belongs here)."""
    from scratch.query.sqlcopy import copy_for
    extra = [target.format, path] if src.kind in ("rows", "lines") else []
    if target.format == "log" and src.kind == "rows":
        extra.append("records")  # a log's rows lost its header lines: copies made before differ
    return src.with_copy(copy_for(target.index.index_dir, src.kind, src.location,
                                  src.delimiter, src.columns, extra=str(extra)))


def copy_mode(ctx: Context) -> str:
    """Config ``sql.copy`` (:data:`scratch.query.sqlcopy.MODES`), checked."""
    from scratch.errors import ConfigError
    from scratch.query.sqlcopy import MODES
    mode = str(ctx.store().config["sql.copy"])
    if mode not in MODES:
        raise ConfigError(f"sql.copy must be one of {', '.join(MODES)}, not {mode!r}",
                          key="sql.copy")
    return mode


def split_tables(tables: str | Iterable[object] | None) -> list[str]:
    parts: list[str] = []
    for t in ([tables] if isinstance(tables, str) else list(tables or [])):
        parts += [p.strip() for p in str(t).split(",") if p.strip()]
    return parts


QUERY = Arg("SELECT ... FROM entry (and the --table tables).",
            metavar="QUERY", max_length=1 << 16)
TABLE = Arg("More entries as tables: comma-separated NAME=REF.", flags=("--table",),
            metavar="NAME=REF")
SQL_PATH = Arg("The array (map of records, items[*].lines) whose items are the rows "
               "(default: the largest).",
               flags=("--path",), metavar="PATH")
DESCRIBE = Arg("List the columns and types instead (nested ones in short).",
               flags=("--describe",))
COLUMN = Arg("With describe: this column's fields, one level in (a.b: deeper).",
             flags=("--column",), metavar="COLUMN", max_length=4096)
OFFSET = Arg("Skip this many rows; negative: from the end.",
             flags=("--offset",), metavar="N")
LIMIT = Arg("At most this many rows (a query keeps 10,000).",
            flags=("--limit",), metavar="N", minimum=1)


def sql(ctx: Context, ref: Annotated[str, REF], query: Annotated[str | None, QUERY] = None,
        table: Annotated[list[str] | None, TABLE] = None,
        path: Annotated[str | None, SQL_PATH] = None,
        describe: Annotated[bool, DESCRIBE] = False,
        column: Annotated[str | None, COLUMN] = None, offset: Annotated[int, OFFSET] = 0,
        limit: Annotated[int | None, LIMIT] = None, fit: Annotated[bool, FIT] = False,
        key_field: Annotated[str | None, KEY_FIELD] = None, *, asked: Call) -> Candidate:
    if column is not None and not describe:
        raise UsageError(f"{argument('column')} opens a column of {argument('describe')}: "
                         "give both", code="invalid_argument", argument="column",
                         suggestions=[call("sql", ref=ref, describe=True, column=column,
                                           path=path, table=split_tables(table) or None,
                                           key_field=key_field)])
    if describe and query:
        raise UsageError(f"{argument('describe')} lists the tables' columns; give it without "
                         f"{argument('query')}", code="invalid_argument", argument="describe")
    if not describe and not (query or "").strip():
        raise UsageError(f"sql needs {argument('query')}: one SELECT ... FROM entry (the "
                         f"columns: {argument('describe')})", code="invalid_argument",
                         argument="query", suggestions=[call("sql", ref=ref, describe=True)])
    if limit is not None and limit < 1:
        raise UsageError(f"{argument('limit')} must be >= 1, not {limit}",
                         code="invalid_argument", argument="limit")
    names = split_tables(table)
    asked = asked.with_args(table=names or None)  # split at commas
    target = open_target(ctx, ref, logs=True)
    opened: list[Target] = []

    def close() -> None:
        for t in (target, *opened):
            t.index.close()

    try:
        try:
            sources, about, opened = _tables(ctx, target, path, names, key_field)
        except UsageError as exc:
            from scratch.answers.rows.arrays import suggest_key_field
            suggest_key_field(exc, asked)
            raise
        tmp = target.store.cache_dir / "tmp"
        tmp.mkdir(mode=0o700, parents=True, exist_ok=True)
        base = {"name": target.name, "version": target.version, "tables": about}
        copies = copy_mode(ctx)
        if describe:
            return _describe(asked, sources, about, base, tmp, offset=offset, limit=limit,
                             fit=fit, on_close=close, copies=copies, column=column)
        return _query(asked, sources, str(query), base, tmp, ref=target.ref, offset=offset,
                      limit=limit, fit=fit, on_close=close, copies=copies)
    except BaseException:
        close()
        raise


def _engine_error(exc: BaseException) -> ScratchError | None:
    """A DuckDB error the engine let through (reading a table it could not make sense of),
    as a clear ``sql_error``; None for anything else."""
    from scratch.query.duck import duckdb_module
    from scratch.query.sql import SqlError
    if isinstance(exc, duckdb_module().Error):
        message = str(exc).strip().split("\n")[0]
        return SqlError(f"DuckDB could not read a table: {message}", error=type(exc).__name__)
    return None


def _with_help(exc: ScratchError, ref: str) -> ScratchError:
    if exc.code in ("sql_error",) and not exc.details.get("suggestions"):
        exc.details["suggestions"] = [call("sql", ref=ref, describe=True)]
    return exc


def _query(asked: Call, sources: dict[str, Source], query: str, base: Mapping[str, object],
           tmp: Path, *, ref: str, offset: int, limit: int | None, fit: bool,
           on_close: Callable[[], None], copies: str = "off") -> Candidate:
    from scratch.query.sql import json_value, run_sql
    try:
        result = run_sql(sources, query, row_limit=MAX_ROWS, time_limit=TIME_LIMIT,
                         tmp_dir=tmp, copies=copies)
    except ScratchError as exc:
        raise _with_help(exc, ref) from None
    except Exception as exc:
        err = _engine_error(exc)
        if err is None:
            raise
        raise err from None
    columns, types, rows = result.columns, result.types, result.rows

    def cells(row: tuple[object, ...]) -> list[str]:
        return [cell_text(json_value(v)) for v in row]

    def make_data(shown: list[tuple[object, ...]], start: int, k: int) -> dict[str, object]:
        return {**base, "query": query, "columns": columns, "types": types,
                "rows": [[json_value(v) for v in r] for r in shown], "offset": start,
                "row_count": len(rows), "truncated": result.truncated,
                "row_limit": result.row_limit, "seconds": round(result.seconds, 3),
                "from_copy": list(result.copied)}

    def notices(start: int, k: int) -> tuple[str, ...]:
        n = plural(len(rows), "row", grouped=True)
        cut = (f" (the first {MAX_ROWS:,}: the query has more; aggregate, or page it with "
               "LIMIT/OFFSET)") if result.truncated else ""
        shown = "" if k == len(rows) else f"; rows {start}..{start + k - 1} shown"
        copy = ", columnar copy" if result.copied else ""
        return (f"{n}{cut}{shown} ({result.seconds:.2f} s{copy})",)

    return RowList(asked, command="sql", code="sql_too_large", columns=columns, rows=rows,
                   offset=offset, limit=limit, fit=fit, cells=cells, make_data=make_data,
                   notices=notices, on_close=on_close)


def _describe(asked: Call, sources: dict[str, Source], about: dict[str, str],
              base: Mapping[str, object], tmp: Path, *, offset: int, limit: int | None, fit: bool,
              on_close: Callable[[], None], copies: str = "off",
              column: str | None = None) -> Candidate:
    """The tables' columns and their types, a nested type in short (a record of 42 fields
    is ``STRUCT(42 fields)``); with ``column``, the fields one level inside that column."""
    from scratch.query.sql import describe, outlined, short_type
    try:
        described = describe(sources, tmp_dir=tmp, copies=copies)
    except ScratchError:
        raise
    except Exception as exc:
        err = _engine_error(exc)
        if err is None:
            raise
        raise err from None
    said: list[str | Words] = []
    extra: dict[str, object] = {}
    if column is not None:
        rows, opened = _opened(described, column)
        said += opened
        extra["column"] = column
    else:
        rows = [(table, name, short_type(kind)) for table, cols in described.items()
                for name, kind in cols]
        short = [name for cols in described.values() for name, kind in cols if outlined(kind)]
        if short:
            first = call("sql", ref=asked.args["ref"], describe=True, column=short[0],
                         path=asked.args.get("path"), table=asked.args.get("table"),
                         key_field=asked.args.get("key_field"))
            extra.update(outlined=short, expand=first)
            said.append(Words((f"{plural(len(short), 'type')} in short (STRUCT(n fields)); "
                               "a column's fields: ", first)))

    def make_data(shown: list[tuple[str, str, str]], start: int, k: int) -> dict[str, object]:
        tables: dict[str, list[dict[str, str]]] = {}
        for table, name, kind in shown:
            tables.setdefault(table, []).append({"column": name, "type": kind})
        return {**base, "columns": tables, "offset": start, "column_count": len(rows), **extra}

    def notices(start: int, k: int) -> tuple[str | Words, ...]:
        return (*(f"{table} = {what}" for table, what in about.items()), *said)

    return RowList(asked, command="sql", code="sql_too_large",
                   columns=["table", "column", "type"], rows=rows, offset=offset, limit=limit,
                   fit=fit, cells=lambda r: [cell_text(x) for x in r], make_data=make_data,
                   notices=notices, on_close=on_close)


def _opened(described: Mapping[str, list[tuple[str, object]]], column: str
            ) -> tuple[list[tuple[str, str, str]], list[str | Words]]:
    """The rows of ``--describe --column COLUMN``: the fields one level inside the column (a
    dot path goes deeper through its records' fields; maps and lists are stepped through),
    in every table that has it; and what the column is."""
    from scratch.errors import KeyPathNotFound
    from scratch.pathnames import format_path
    from scratch.query.paths import parse_path
    from scratch.query.sql import expand_type, short_type
    segments: list[object] = list(parse_path(column).segments or [])
    if not segments:
        raise UsageError(f"{argument('column')} names a column (and its fields: a.b), not "
                         f"{column!r}", code="invalid_argument", argument="column")
    names = [str(x) for x in segments]
    rows: list[tuple[str, str, str]] = []
    said: list[str | Words] = []
    columns: list[str] = []
    for table, cols in described.items():
        kinds = dict(cols)
        columns += [c for c in kinds if c not in columns]
        if names[0] not in kinds:
            continue
        try:
            opened = expand_type(kinds[names[0]], names[1:])
        except KeyError as exc:
            at, fields = exc.args
            where = format_path(names[:at + 1])
            raise KeyPathNotFound(_no_such(f"{where} has no field {names[at + 1]!r}",
                                           names[at + 1], fields, "its fields"),
                                  argument="column", column=column) from None
        path = format_path(names)
        how = {"value": "values", "element": "elements"}
        through = " of its ".join(how[s] for s in opened.steps)
        if opened.fields:
            said.append(f"{table}.{path} is {short_type(opened.kind)}: "
                        + (f"the fields of its {through}" if through else "its fields"))
            rows += [(table, format_path([*names, name]), short_type(kind))
                     for name, kind in opened.fields]
        else:
            said.append(f"{table}.{path} holds no record to open")
            rows.append((table, path, str(opened.kind)))
    if not rows:
        raise KeyPathNotFound(_no_such(f"no table has a column {names[0]!r}", names[0], columns,
                                       "the columns"), argument="column", column=column)
    return rows, said


def _no_such(what: str, name: str, known: list[str], label: str) -> str:
    from scratch.query.items import close_keys
    near = close_keys(name, known)
    shown = ", ".join(known[:20]) + (f", ... {len(known) - 20} more" if len(known) > 20 else "")
    return (what + (f"; did you mean {' or '.join(near)}?" if near else "")
            + f" ({label}: {shown})")


COMMAND = Command(
    "sql", "Run one read-only SQL query (DuckDB) over REF as the table 'entry'; --table "
    "NAME=REF adds others. Only SELECT runs: no file, network or extension is reachable from "
    "a query; rows and time are limited.\n\n"
    "The table holds the items of a JSON array (--path, else the root array, else the "
    "largest array of objects; --path may name a map of records, or items[*].lines for "
    "nested arrays flattened), NDJSON lines, CSV/TSV rows, a parsed log's records, or text "
    "lines as (line, text).\n\n"
    "--describe lists each table's columns and types (a nested one in short: STRUCT(42 "
    "fields), MAP(VARCHAR, STRUCT(11 fields))); --describe --column NAME lists the fields "
    "one level inside column NAME (NAME.field for deeper). Rows print as a tab-separated table "
    "(--json: columns, types and rows); --fit pages them.\n\n"
    "Example: scratch sql access \"SELECT status, count(*) AS n FROM entry GROUP BY status "
    "ORDER BY n DESC\"\n\n"
    "Example: scratch sql pods --describe",
    sql,
    tools=(Tool("sql", "A read-only DuckDB SELECT over an entry's rows as table entry (a text: "
                "line, text).",
                names={"ref": "file", "table": "tables"},
                helps={"query": "SELECT ... FROM entry (and tables)."}, toolset="explore"),))
