"""Run the real CLI in-process and decode its JSON envelope."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import orjson
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


def cli(*args: str, input: bytes | str | None = None, env: dict[str, str] | None = None) -> Run:
    runner = CliRunner()
    result = runner.invoke(app, list(args), input=input, env=env, catch_exceptions=False)
    return Run(result.exit_code, result.stdout_bytes, result.stderr)


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


# a JSON token: a string (escapes and all), a number, a literal or a structural character;
# written apart from scratch's own scanners so a test of them can compare against it
_JSON_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|-?[0-9][0-9.eE+-]*|true|false|null|[][{}:,]')


def json_tokens(data: bytes) -> list[bytes]:
    """The tokens of JSON text ``data``, whitespace between them dropped (asserts none else)."""
    tokens = _JSON_TOKEN.findall(data)
    assert _JSON_TOKEN.sub(b"", data).translate(None, b" \t\r\n") == b"", "not JSON tokens only"
    return tokens
