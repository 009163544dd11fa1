"""What an operation hands back instead of printing.

Core functions return a :class:`Result`; ``scratch.render`` is the only place that decides how it
looks (rich on a terminal, plain text on a pipe, the versioned JSON envelope with ``--json``).

Invariants:
- ``data`` is JSON-serialisable (orjson) and is exactly what ``--json`` puts under ``"data"``.
- ``text`` is what human mode prints on stdout, byte for byte when it is ``bytes``; when it is
  ``None`` the renderer formats ``data`` itself (tables, key/value pairs).
- ``meta`` goes under ``"meta"`` in JSON; ``meta["tokens"]`` (when present) is the token cost of
  what was printed and ``meta["budget"]`` the budget left, shown as a footer on stderr in human
  mode.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

JSON_ENVELOPE_VERSION = 1


@dataclass(frozen=True)
class Table:
    """Rows for human output; rich draws a table, plain mode prints tab-separated columns."""

    columns: list[str]
    rows: list[list[Any]]
    title: str | None = None


@dataclass(frozen=True)
class Result:
    command: str
    data: Any = None
    text: str | bytes | None = None
    table: Table | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    notices: tuple[str, ...] = ()  # human-only lines for stderr (e.g. "unchanged")
    exit_code: int = 0
    style: str | None = None  # rendering hint: "diff", "json", "lines", "pointer"


def envelope_ok(result: Result) -> dict[str, Any]:
    """The success envelope; its keys are pinned by a test."""
    meta = dict(result.meta)
    if result.warnings:
        meta["warnings"] = list(result.warnings)
    return {
        "scratch": JSON_ENVELOPE_VERSION,
        "ok": True,
        "command": result.command,
        "data": result.data,
        "meta": meta,
    }


def envelope_error(command: str, error: dict[str, Any]) -> dict[str, Any]:
    """The failure envelope; ``error`` holds at least ``code`` and ``message``."""
    return {"scratch": JSON_ENVELOPE_VERSION, "ok": False, "command": command, "error": error}


def compact_json(value: Any) -> str:
    """One-line JSON text of ``value``; integers beyond 64 bits stay exact."""
    import orjson
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # orjson refuses integers beyond 64 bits
        import json
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
