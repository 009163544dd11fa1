"""The one place that decides how a result looks.

- ``--json``: exactly one JSON document on stdout (the envelope of ``scratch.result``), for
  success and failure alike.
- Human mode: data on stdout, diagnostics (warnings, notices, the token footer, errors) on
  stderr. Rich formatting only when stdout is a terminal and ``NO_COLOR`` is unset; plain text
  otherwise, so pipes get stable, parseable output.
"""

from __future__ import annotations

import os
import sys
from typing import IO, Any

import orjson

from scratch.errors import ScratchError
from scratch.result import Result, Table, envelope_error, envelope_ok


def _dumps(obj: Any, pretty: bool = False) -> bytes:
    option = orjson.OPT_NON_STR_KEYS | (orjson.OPT_INDENT_2 if pretty else 0)
    # JSON numbers exactly as stored, integers beyond 64 bits exact, lone surrogates escaped
    from scratch.formats.jsonnum import dumps
    return dumps(obj, option)


def _is_tty(stream: IO[Any]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def use_rich(stream: IO[Any] | None = None) -> bool:
    return _is_tty(stream or sys.stdout) and not os.environ.get("NO_COLOR")


def _write_out(data: bytes | str) -> None:
    if isinstance(data, str):
        data = data.encode("utf-8", errors="surrogateescape")
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def _err(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def footer(meta: dict[str, Any]) -> str | None:
    tokens = meta.get("tokens")
    if tokens is None:
        return None
    unit = "token" if tokens["count"] == 1 else "tokens"
    parts = [f"{tokens['count']:,} {unit} ({tokens['encoding']}"
             + ("" if tokens.get("exact", True) else ", estimate") + ")"]
    budget = meta.get("budget")
    if budget:
        parts.append(f"budget {budget['remaining']:,} of {budget['usable']:,} left")
    return "-- " + " · ".join(parts)


def plain_table(table: Table) -> str:
    rows = [table.columns] + [["" if v is None else str(v) for v in row] for row in table.rows]
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(table.columns))]
    out = []
    for row in rows:
        cells = [str(v).ljust(w) for v, w in zip(row, widths, strict=True)]
        out.append("  ".join(cells).rstrip())
    return "\n".join(out) + "\n"


def _rich_table(table: Table) -> None:
    from rich.console import Console
    from rich.table import Table as RichTable

    rt = RichTable(title=table.title, header_style="bold")
    for col in table.columns:
        rt.add_column(col, overflow="fold")
    for row in table.rows:
        rt.add_row(*["" if v is None else str(v) for v in row])
    Console().print(rt)


def _rich_text(text: str, style: str | None) -> None:
    from rich.console import Console
    from rich.syntax import Syntax

    console = Console()
    if style in ("diff", "json", "yaml"):
        console.print(Syntax(text.rstrip("\n"), style, word_wrap=True))
    else:
        console.print(text, end="" if text.endswith("\n") else "\n", markup=False,
                      highlight=False, soft_wrap=True)


def _plain_data(data: Any) -> str:
    if isinstance(data, dict) and all(not isinstance(v, (dict, list)) for v in data.values()):
        return "".join(f"{k}: {'' if v is None else v}\n" for k, v in data.items())
    return _dumps(data, pretty=True).decode() + "\n"


def envelope_text(result: Result) -> str:
    """The --json document of ``result`` as the agent reads it (to price it exactly)."""
    return _dumps(envelope_ok(result)).decode("utf-8", errors="replace") + "\n"


def render(result: Result, *, json_mode: bool) -> int:
    if json_mode:
        _write_out(_dumps(envelope_ok(result)) + b"\n")
        return result.exit_code
    rich = use_rich()
    if result.text is not None:
        if isinstance(result.text, bytes) or not rich:
            _write_out(result.text)
        else:
            _rich_text(result.text, result.style)
    elif result.table is not None:
        if rich:
            _rich_table(result.table)
        else:
            _write_out(plain_table(result.table))
    elif result.data is not None:
        _write_out(_plain_data(result.data))
    for warning in result.warnings:
        _err(f"warning: {warning}")
    for notice in result.notices:
        _err(notice)
    line = footer(result.meta)
    if line:
        _err(line)
    return result.exit_code


def render_error(command: str, error: ScratchError, *, json_mode: bool) -> int:
    info = error.to_dict()
    if json_mode:
        _write_out(_dumps(envelope_error(command, info)) + b"\n")
    else:
        _err(f"Error: {error.code}: {error.message}")
        extra = {k: v for k, v in info.items() if k not in ("code", "message")}
        if extra:
            # refusals carry actionable fields (suggestions, estimated_tokens): keep them
            # machine-readable even without --json
            _err(_dumps({"error": info}).decode())
    return int(error.exit_code)
