"""sql: a read-only SQL query over stored entries (DuckDB, imported only when it runs)."""

from typing import Annotated, List, Optional

import typer

from scratch.answers.kernel.context import Context
from scratch.calls import call
from scratch.cli.common import RefArg, command
from scratch.cli.explore_opts import FitOpt


@command("sql", help="Run one read-only SQL query (DuckDB) over REF as the table 'entry'; "
         "--table NAME=REF adds others. Only SELECT runs: no file, network or extension is "
         "reachable from a query; rows and time are limited.\n\n"
         "The table holds the items of a JSON array (--path, else the root array, else the "
         "largest array of objects), NDJSON lines, CSV/TSV rows, a parsed log's records, or "
         "text lines as (line, text).\n\n"
         "--describe lists each table's columns and types. Rows print as a tab-separated "
         "table (--json: columns, types and rows); --fit pages them.\n\n"
         "Example: scratch sql access \"SELECT status, count(*) AS n FROM entry GROUP BY "
         "status ORDER BY n DESC\"\n\n"
         "Example: scratch sql pods --describe")
def sql_cmd(ctx: Context, ref: RefArg,
            query: Annotated[Optional[str], typer.Argument(
                metavar="QUERY", help="One SELECT statement (tables: entry and --table names).",
                show_default=False)] = None,
            tables: Annotated[Optional[List[str]], typer.Option(
                "--table", metavar="NAME=REF", help="Another entry as table NAME (repeatable).",
                show_default=False)] = None,
            path: Annotated[Optional[str], typer.Option(
                "--path", metavar="PATH", help="JSON/YAML: the array whose items are the rows.",
                show_default=False)] = None,
            describe: Annotated[bool, typer.Option(
                "--describe", help="The columns and types of the tables, no query.")] = False,
            offset: Annotated[int, typer.Option(
                "--offset", metavar="N", help="Skip the first N rows of the answer.")] = 0,
            limit: Annotated[Optional[int], typer.Option(
                "--limit", metavar="N", help="At most N rows of the answer.",
                show_default=False)] = None,
            fit: FitOpt = False):
    return call("sql", ref=ref, query=query, table=tables or None, path=path,
                describe=describe or None, offset=offset or None, limit=limit, fit=fit or None)
