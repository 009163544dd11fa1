"""Run the real CLI in-process and decode its JSON envelope."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from typing import Any

import orjson
import typer.main
from typer.testing import CliRunner

from scratch.cli import _register, app

_register()


@dataclass
class Run:
    code: int
    out: bytes
    err: str

    @property
    def text(self) -> str:
        return self.out.decode("utf-8", errors="replace")

    @property
    def json(self) -> Any:
        return orjson.loads(self.out)


# the command tree, built once: building it is most of an in-process invocation's cost (~40 ms,
# which CliRunner.invoke pays on every call)
_COMMAND = typer.main.get_command(app)


def cli(*args: str, input: bytes | str | None = None, env: dict[str, str] | None = None) -> Run:
    """Run ``scratch ARGS`` in-process as CliRunner.invoke does (stdin, stdout, stderr and the
    environment isolated), on the command tree built once; exceptions are not caught."""
    runner = CliRunner()
    with runner.isolation(input=input, env=env) as (out, err, _mixed):
        code = 0
        try:
            _COMMAND.main(args=list(args), prog_name="scratch")
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
        stdout, stderr = out.getvalue(), err.getvalue()
    return Run(code, stdout, stderr.decode("utf-8", errors="replace").replace("\r\n", "\n"))


def spec():
    """The default encoding (o200k_base), as an agent without a configured model gets."""
    from scratch.tokens import resolve_encoding

    return resolve_encoding(None, None)


def count(text: str) -> int:
    from scratch.tokens import count_text

    return count_text(text, spec())


def count_bytes(data: bytes) -> int:
    from scratch.tokens import count_stream

    return count_stream([data], spec())


JSON_FLAG = " --json"


def printed_of(call: Any) -> str:
    """A suggestion or ``next`` exactly as printed: ``--json`` gives objects with the
    structured call and its ``shell`` line, which answers in --json (it ends ``--json``)."""
    return call["shell"] if isinstance(call, dict) else call


def shell_of(call: Any) -> str:
    """A suggestion or ``next`` as its shell line in either mode: a --json one's ``shell``
    (checked to end in ``--json``, the mode it was sized for) without that flag, so one
    expectation serves both modes; run it with ``--json`` to run it as printed."""
    if not isinstance(call, dict):
        return call
    line = call["shell"]
    assert line.endswith(JSON_FLAG), line
    return line[:-len(JSON_FLAG)]


def human_error(err: str) -> dict[str, Any]:
    """Human mode's error on stderr (``error [code]: message``, then one suggestion per
    line) as a dict like the ``--json`` error object: code, message, suggestions."""
    lines = err.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("error ["))
    head = lines[first]
    code, message = head[len("error ["):].split("]: ", 1)
    suggestions = []
    for line in lines[first + 1:]:
        if not line.startswith("  "):
            break
        suggestions.append(line[2:])
    return {"code": code, "message": message, "suggestions": suggestions}


def ok_json(*args: str) -> Any:
    """The --json envelope of a CLI call that must succeed."""
    r = cli(*args, "--json")
    assert r.code == 0, r.out
    return r.json


def error_of(r: Run, json_mode: bool, *, printed: bool = False) -> dict[str, Any]:
    """The error a refused run printed, suggestions as shell lines, in either mode (as
    :func:`shell_of` gives them, or ``printed`` exactly as printed)."""
    if json_mode:
        err = dict(r.json["error"])
        line = printed_of if printed else shell_of
        err["suggestions"] = [line(s) for s in err.get("suggestions", [])]
        return err
    return human_error(r.err)


def shells(calls: list[Any]) -> list[str]:
    return [shell_of(c) for c in calls]


# a JSON token: a string (escapes and all), a number, a literal or a structural character;
# written apart from scratch's own scanners so a test of them can compare against it
_JSON_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|-?[0-9][0-9.eE+-]*|true|false|null|[][{}:,]')


def json_tokens(data: bytes) -> list[bytes]:
    """The tokens of JSON text ``data``, whitespace between them dropped (asserts none else)."""
    tokens = _JSON_TOKEN.findall(data)
    assert _JSON_TOKEN.sub(b"", data).translate(None, b" \t\r\n") == b"", "not JSON tokens only"
    return tokens
