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

from typing import Any, NamedTuple

JSON_ENVELOPE_VERSION = 1

# Records on the path of every command are NamedTuples or plain classes, not dataclasses:
# building a dataclass costs ~0.4 ms at import, and a cold command pays for each one.


class Table(NamedTuple):
    """Rows for human output; rich draws a table, plain mode prints tab-separated columns."""

    columns: list[str]
    rows: list[list[Any]]
    title: str | None = None


class Result:
    """What a command answers: ``data`` for ``--json``, ``text``/``table`` for people."""

    __slots__ = ("command", "data", "text", "table", "meta", "warnings", "notices", "exit_code",
                 "style")

    def __init__(self, command: str, data: Any = None, text: str | bytes | None = None,
                 table: Table | None = None, meta: dict[str, Any] | None = None,
                 warnings: tuple[str, ...] = (), notices: tuple[str, ...] = (),
                 exit_code: int = 0, style: str | None = None) -> None:
        self.command = command
        self.data = data
        self.text = text
        self.table = table
        self.meta: dict[str, Any] = {} if meta is None else meta
        self.warnings = warnings
        self.notices = notices  # human-only lines for stderr (e.g. "unchanged")
        self.exit_code = exit_code
        self.style = style  # rendering hint: "diff", "json", "lines", "pointer"

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={getattr(self, k)!r}" for k in self.__slots__)
        return f"Result({fields})"


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
    from scratch.formats.jsonnum import dumps  # JSON numbers exactly as stored
    return dumps(value).decode("utf-8", errors="backslashreplace")
