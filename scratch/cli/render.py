"""The one place that decides how a result looks on the command line.

- ``--json``: exactly one JSON document on stdout (the versioned envelope), for success and
  failure alike. A refusal's suggestions and a page's ``next`` are objects
  ``{"command", "args", "shell"}``: the structured form and the shell line that runs it
  (``next`` once, under ``data``). They were sized for the ``--json`` answer (which costs
  other tokens than the text one), so their shell line says ``--json``: run as printed, it
  answers in the mode it was sized for. The pointer's next commands are shell lines (sized
  for no mode): eight call objects would not leave a pointer of 1% of its output room for
  the shape of the data.
- Human mode: data on stdout, diagnostics on stderr (warnings, notices, ``more: NEXT``, the
  token footer; an error as one line ``error [code]: message`` and its suggestions, one shell
  line each). Rich formatting only when stdout is a terminal and ``NO_COLOR`` is unset; plain
  text otherwise, so pipes get stable, parseable output.

The two :class:`~scratch.answers.kernel.rendering.Rendering` classes here tell the answers pipeline
what each mode prints, so answers are priced on exactly that.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import IO, TYPE_CHECKING

import orjson

from scratch.answers.kernel.rendering import Rendering, footer, table_text
from scratch.answers.kernel.result import Result, Table, spelled
from scratch.calls import Call
from scratch.cli.spelling import shell_line
from scratch.errors import ScratchError

if TYPE_CHECKING:
    from scratch.tokens import EncodingSpec


def _dumps(obj: object, pretty: bool = False) -> bytes:
    option = orjson.OPT_NON_STR_KEYS | (orjson.OPT_INDENT_2 if pretty else 0)
    # JSON numbers exactly as stored, integers beyond 64 bits exact, lone surrogates escaped
    from scratch.jsonvalues import dumps
    return dumps(obj, option)


def call_json(c: Call) -> dict[str, object]:
    """A call in --json: what to run, as data and as the shell line that runs it in --json,
    the mode a suggestion or ``next`` was sized in (see the module)."""
    return {"command": c.command, "args": c.args, "shell": json_shell_line(c)}


def json_shell_line(c: Call) -> str:
    """``c``'s shell line answering in --json."""
    return shell_line(c) + " --json"


def _calls_spelled(value: object) -> object:
    """Calls in an answer's data: one call as an object; a list of them (the pointer's next
    commands) as shell lines, which is what keeps a pointer within its size rule."""
    if isinstance(value, Call):
        return call_json(value)
    if isinstance(value, list) and value and isinstance(value[0], Call):
        return [shell_line(v) if isinstance(v, Call) else v for v in value]
    return value


def envelope_ok(result: Result[object]) -> dict[str, object]:
    """The success envelope (built where every interface's is: kernel.rendering.envelope);
    its keys are pinned by a test."""
    from scratch.answers.kernel.rendering import envelope
    return envelope(result, _calls_spelled, call_json)


def _spell(error: ScratchError, command: str | None = None) -> Callable[[str], str]:
    """How this interface writes the arguments ``error`` names: as ``command`` takes them."""
    from scratch.cli.spelling import flag_of
    named = error.command or command
    return lambda name: flag_of(named, name)


def error_object(error: ScratchError, command: str | None = None) -> dict[str, object]:
    info = error.to_dict(_spell(error, command))
    if "suggestions" in info:
        info["suggestions"] = [call_json(s) if isinstance(s, Call) else s
                               for s in error.detail_list("suggestions")]
    return info


def envelope_error(command: str, error: ScratchError) -> dict[str, object]:
    """The failure envelope; ``error`` holds at least ``code`` and ``message``."""
    from scratch.answers.kernel.rendering import error_envelope
    return error_envelope(command, error_object(error, command))


def envelope_text(result: Result[object]) -> str:
    """The --json document of ``result`` as the agent reads it."""
    return _dumps(envelope_ok(result)).decode("utf-8", errors="replace") + "\n"


def error_lines(error: ScratchError, command: str | None = None) -> list[str]:
    """Human mode's error: ``error [code]: message``, then each suggestion as a shell line."""
    out = [f"error [{error.code}]: {error.spelled(_spell(error, command))}"]
    for s in error.detail_list("suggestions"):
        out.append(f"  {shell_line(s) if isinstance(s, Call) else s}")
    return out


class ShellText(Rendering):
    """Human mode: the text on stdout (the footer and notices on stderr are not priced)."""

    name = "text"

    def spell(self, call: Call) -> str:
        return shell_line(call)

    def error_cost(self, command: str, error: ScratchError, spec: EncodingSpec) -> int:
        from scratch.tokens import count_text
        return count_text("\n".join(error_lines(error, command)) + "\n", spec)


class JsonEnvelope(Rendering):
    """--json: the whole envelope, which states its own count and the budget after it."""

    name = "json"
    states_meta = True
    text_prices = False
    shows_data = True

    def spell(self, call: Call) -> str:
        return shell_line(call)

    def call_data(self, call: Call) -> object:
        return shell_line(call)

    def cost(self, result: Result[object], spec: EncodingSpec) -> int:
        from scratch.tokens import count_text
        return count_text(envelope_text(result), spec)

    def shown(self, result: Result[object]) -> str:
        return envelope_text(result)

    def error_cost(self, command: str, error: ScratchError, spec: EncodingSpec) -> int:
        from scratch.tokens import count_text
        return count_text(_dumps(envelope_error(command, error)).decode() + "\n", spec)


def _is_tty(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def use_rich(stream: IO[str] | None = None) -> bool:
    return _is_tty(stream or sys.stdout) and not os.environ.get("NO_COLOR")


def _write_out(data: bytes | str) -> None:
    if isinstance(data, str):
        data = data.encode("utf-8", errors="surrogateescape")
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def _err(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def _rich_table(table: Table) -> None:
    """A table in a terminal: boxed by rich when every column can be as wide as its longest
    word, so no cell breaks a word (entry names, hashes, paths stay whole to copy); else the
    plain aligned columns a pipe gets, whose long lines the terminal wraps without cutting
    a name with box characters."""
    from rich.console import Console
    from rich.table import Table as RichTable

    console = Console()
    cells = [[col, *("" if row[i] is None else str(row[i]) for row in table.rows)]
             for i, col in enumerate(table.columns)]
    widths = [max((len(word) for cell in column for word in cell.split()), default=0)
              for column in cells]
    if sum(widths) + 3 * len(widths) + 1 > console.width:  # the box takes 3 a column, and 1
        _write_out(table_text(table))
        return
    rt = RichTable(title=table.title, header_style="bold")
    for col, width in zip(table.columns, widths, strict=True):
        rt.add_column(col, overflow="fold", min_width=width)
    for row in table.rows:
        rt.add_row(*["" if v is None else str(v) for v in row])
    console.print(rt)


def _rich_text(text: str, style: str | None) -> None:
    from rich.console import Console
    from rich.syntax import Syntax

    console = Console()
    if style in ("diff", "json", "yaml"):
        console.print(Syntax(text.rstrip("\n"), style, word_wrap=True))
    else:
        console.print(text, end="" if text.endswith("\n") else "\n", markup=False,
                      highlight=False, soft_wrap=True)


def _plain_data(data: object) -> str:
    if isinstance(data, dict) and all(not isinstance(v, (dict, list)) for v in data.values()):
        return "".join(f"{k}: {'' if v is None else v}\n" for k, v in data.items())
    return _dumps(data, pretty=True).decode() + "\n"


def render(result: Result[object], *, json_mode: bool) -> int:
    if json_mode:
        _write_out(_dumps(envelope_ok(result)) + b"\n")
        return result.exit_code
    rich = use_rich()
    stderr_breaks = False
    text = spelled(result.text, shell_line)
    if text is not None:
        if isinstance(text, bytes) or not rich:
            _write_out(text)
            if isinstance(text, bytes):  # content, byte for byte: stderr breaks the line
                stderr_breaks = bool(text) and not text.endswith(b"\n")
            elif text and not text.endswith("\n"):  # every answer ends a line, so the
                _write_out(b"\n")  # footer on stderr starts its own
        else:
            _rich_text(text, result.style)
    elif result.table is not None:
        table = spelled(result.table, shell_line)
        if rich:
            _rich_table(table)
        else:
            _write_out(table_text(table))
    elif result.data is not None:
        _write_out(_plain_data(result.data))
    after = [f"warning: {warning}" for warning in result.warnings]
    after += [spelled(notice, shell_line) for notice in result.notices]
    if result.next is not None:
        after.append(f"more: {shell_line(result.next)}")
    line = footer(result.meta)
    if line:
        after.append(line)
    if stderr_breaks and after:  # merged stdout+stderr: the content's last line, then these
        _err("")
    for shown in after:
        _err(shown)
    return result.exit_code


def render_error(command: str, error: ScratchError, *, json_mode: bool) -> int:
    if json_mode:
        _write_out(_dumps(envelope_error(command, error)) + b"\n")
    else:
        for line in error_lines(error, command):
            _err(line)
        shown = footer(error.charged) if error.charged else None
        if shown:
            _err(shown)
    return int(error.exit_code)
