"""redactions: what redaction did to a stored version (or a log): each value it replaced (rule,
line, JSON/YAML path when known, the key it sat under, its marker; never the value), or why
the version was stored unredacted.

The findings are the version's own record (its info's ``redaction``, written when it was
captured; a log's adds up its appends). A finding's path is the one its rule knew (a
Kubernetes Secret's value); otherwise, for a JSON entry of at most :data:`PATH_BYTES` bytes, it
is found here by reading the stored text up to the marker, and for YAML by the keys of the
lines above it (list items as ``*``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated

from scratch.answers.commands._args import REF
from scratch.answers.kernel.result import Result, Table
from scratch.declare import Arg, Command, Tool

if TYPE_CHECKING:
    from pathlib import Path

    from scratch.answers.kernel.context import Context

PATH_BYTES = 32 << 20
OFFSET = Arg("Skip this many findings.", flags=("--offset",), metavar="N", minimum=0)
LIMIT = Arg("At most this many findings.", flags=("--limit",), metavar="N", minimum=1)
_TOKEN = re.compile(rb'"(?:[^"\\\n]|\\.)*"|[{}\[\],:\n]')
_MARK = "«redacted:".encode()


def redactions(ctx: Context, ref: Annotated[str, REF], limit: Annotated[int, LIMIT] = 50,
               offset: Annotated[int, OFFSET] = 0) -> Result[dict[str, object]]:
    from scratch.answers.kernel.target import open_target
    target = open_target(ctx, ref, logs=True)
    try:
        kept = target.info.get("redaction")
        # the format stored with the version, else the one its index was built for
        fmt = str(target.info.get("format") or ("ndjson" if target.kind == "log"
                                                else target.key.rsplit(".", 1)[-1]))
        path = target.path
    finally:
        target.index.close()
    label = target.name if target.version is None else f"{target.name}@{target.version}"
    data: dict[str, object] = {"name": target.name, "version": target.version}
    if not isinstance(kept, dict):
        data.update(recorded=False, count=0, findings=[])
        return Result("redactions", data=data, text=(
            f"{label}: no redaction record (stored before redaction existed, or a log with "
            "no append since)\n"))
    if kept.get("redacted") is False or (target.kind == "log" and kept.get("unredacted")):
        data.update(recorded=True, count=int(kept.get("count") or 0), findings=[],
                    unredacted=str(kept.get("unredacted")))
    findings: list[dict[str, object]] = [dict(f) for f in kept.get("findings") or []]
    count = int(kept.get("count") or len(findings))
    rules = dict(kept.get("rules") or {})
    if findings and target.kind != "log":
        _add_paths(findings, path, fmt)
    shown = findings[offset:offset + limit]
    data.update(recorded=True, count=count, rules=rules, findings=shown,
                rule_set=kept.get("rule_set"), truncated=bool(kept.get("truncated")))
    if kept.get("missed"):
        data["missed"] = list(kept["missed"])
    if offset + limit < len(findings):
        data["more"] = len(findings) - offset - limit
    lines: list[str] = []
    if "unredacted" in data:
        lines.append(f"{label}: stored unredacted ({data['unredacted']})")
    if count or "unredacted" not in data:
        listed = ", ".join(f"{r} {n}" for r, n in rules.items())
        rule_set = kept.get("rule_set")
        source = (" by scratch's rules only: gitleaks' were missing (the secretscreen package "
                  "is not installed)" if rule_set == "none"
                  else f" by the {rule_set} rules and scratch's" if rule_set else "")
        lines.append(f"{label}: {count} value{'' if count == 1 else 's'} redacted at capture"
                     + (f" ({listed})" if listed else "") + f"{source}")
    for miss in kept.get("missed") or ():
        lines.append(f"not redacted (not found in the text): {miss}")
    if kept.get("truncated"):
        lines.append(f"only the first {len(findings)} findings were kept")
    where = "id" if target.kind == "log" else "line"
    table = None
    if shown:
        table = Table([where, "rule", "path", "key", "marker"],
                      [[f.get(where, ""), f.get("rule", ""), f.get("path", ""),
                        f.get("key", ""), f.get("marker", "")] for f in shown])
    if "more" in data:
        lines.append(f"{data['more']} more: --offset {offset + limit}")
    return Result("redactions", data=data, text="\n".join(lines) + "\n" if not table else None,
                  table=table, notices=tuple(lines) if table else ())


def _add_paths(findings: list[dict[str, object]], path: Path, fmt: str) -> None:
    """The JSON/YAML path of each finding that has none (see the module docstring)."""
    wanted = {_int(f.get("line")) for f in findings if "path" not in f and "line" in f}
    if not wanted:
        return
    try:
        size = path.stat().st_size
    except OSError:
        return
    if size > PATH_BYTES:
        return
    data = path.read_bytes()
    if fmt in ("json", "ndjson"):
        found = _json_paths(data, wanted)
    elif fmt == "yaml":
        found = _yaml_paths(data, wanted)
    else:
        return
    for f in findings:
        line = _int(f.get("line"))
        if "path" not in f and line in found and found[line]:
            f["path"] = found[line].pop(0)


def _int(value: object) -> int:
    return value if isinstance(value, int) else int(str(value or 0))


class _Level:
    """One open object or array while reading JSON text: its key or index so far."""

    __slots__ = ("array", "index", "key", "expect_key")

    def __init__(self, array: bool) -> None:
        self.array = array
        self.index = 0
        self.key = ""
        self.expect_key = not array

    def label(self) -> str:
        return str(self.index) if self.array else self.key


def _json_paths(data: bytes, lines: set[int]) -> dict[int, list[str]]:
    """For each line in ``lines``, the paths of the marked string values on it, in order."""
    out: dict[int, list[str]] = {}
    last = max(lines)
    stack: list[_Level] = []
    line = 1
    record = 0  # NDJSON: the record's index
    for m in _TOKEN.finditer(data):
        tok = m.group(0)
        if tok == b"\n":
            line += 1
            if line > last:
                break
            if not stack:
                record += 1
            continue
        if tok == b"{":
            stack.append(_Level(False))
        elif tok == b"[":
            stack.append(_Level(True))
        elif tok in (b"}", b"]"):
            if stack:
                stack.pop()
        elif tok == b",":
            if stack and stack[-1].array:
                stack[-1].index += 1
            elif stack:
                stack[-1].expect_key = True
        elif tok == b":":
            if stack:
                stack[-1].expect_key = False
        elif stack and not stack[-1].array and stack[-1].expect_key:
            stack[-1].key = tok[1:-1].decode("utf-8", "replace")
        elif line in lines and _MARK in tok:
            parts = [s.label() for s in stack]
            if record and not parts:
                parts = [str(record)]
            out.setdefault(line, []).append(".".join(parts))
    return out


def _yaml_paths(data: bytes, lines: set[int]) -> dict[int, list[str]]:
    text = data.decode("utf-8", "replace").split("\n")
    out: dict[int, list[str]] = {}
    for line in sorted(lines):
        if line > len(text):
            continue
        parts: list[str] = []
        indent = None
        for i in range(line - 1, -1, -1):
            raw = text[i]
            stripped = raw.lstrip(" ")
            if not stripped or stripped.startswith("#"):
                continue
            level = len(raw) - len(stripped)
            if indent is not None and level >= indent:
                continue
            item = stripped.startswith("- ")
            body = stripped[2:] if item else stripped
            key = body.split(":", 1)[0].strip().strip("\"'") if ":" in body else ""
            if key:
                parts.append(key)
            if item:
                parts.append("*")
            indent = level + (2 if item and i != line - 1 else 0) if i == line - 1 else level
            if level == 0 and not item:
                break
        out[line] = [".".join(reversed(parts))]
    return out


COMMAND = Command(
    "redactions", "List what redaction replaced in REF when it was captured: rule, line, "
    "JSON/YAML path, key and marker of each value (never the value), or why it was stored "
    "unredacted.\n\n"
    "Example: scratch redactions kubectl_get_secrets",
    redactions,
    tools=(Tool("redactions", "What redaction replaced in a stored entry at capture: rule, "
                "line, path and marker of each value.", names={"ref": "file"},
                toolset="session"),))
