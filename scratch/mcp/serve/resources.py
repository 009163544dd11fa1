"""Stored entries as MCP resources: ``scratch://AGENT/NAME`` (the current version) and
``scratch://AGENT/NAME@VERSION``.

Invariants:
- A session sees only its own agent's entries: a URI naming another agent is "not found",
  exactly like a name that does not exist (no existence is leaked).
- Reading a resource is an answer like any other: it is a page of lines that fits the
  per-call cap and the session's budget (the core's ``slice --fit``), priced and charged the
  same; ``?from_line=N`` (and ``&from_byte=B`` inside a line too long for one page) asks
  for a later page, and the contents' ``_meta`` names the ``next`` URI until the end.
- Nothing here knows of sessions: an answer is asked of a session's
  :class:`~scratch.answers.kernel.context.Context` (so :mod:`scratch.mcp.serve.session` may
  import this module, and this module not it).
- Listing shows size, format and token count (in the session's tokenizer) of each entry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict, cast
from urllib.parse import parse_qs, quote, unquote, urlsplit

from scratch.answers.kernel.context import Context
from scratch.errors import EntryNotFound, ScratchError, UsageError
from scratch.mcp.wire import JSON

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scratch.answers.kernel.result import Result
    from scratch.mcp.rendering import Link
    from scratch.store import VersionInfo

SCHEME = "scratch"
PAGE = 100  # entries per resources/list page
MIME = {"json": "application/json", "ndjson": "application/x-ndjson", "yaml": "application/yaml",
        "csv": "text/csv", "tsv": "text/tab-separated-values", "markdown": "text/markdown"}
TEMPLATE = "scratch://{agent}/{+name}"

# A listed entry and a page read, with the wire's own key names (the server turns them into
# the SDK's Resource and TextResourceContents; the proxy sends them as they are).
class EntryResource(TypedDict):
    uri: str
    name: str
    mimeType: str
    size: int | None
    description: str
    _meta: dict[str, JSON]
class EntryPage(TypedDict):
    uri: str
    mimeType: str
    text: str
    _meta: dict[str, JSON]


def mime_type(fmt: str | None) -> str:
    return MIME.get(fmt or "", "text/plain")


def entry_uri(agent: str, name: str, version: int | None = None) -> str:
    tail = name if version is None else f"{name}@{version}"
    return f"{SCHEME}://{agent}/{quote(tail, safe='/@')}"


def ingest_link(agent: str, result: Result[object]) -> Link | None:
    """The resource link a stored output's pointer carries (None for any other answer)."""
    data = result.data
    if result.command != "ingest" or not isinstance(data, dict) or not data.get("stored"):
        return None
    from scratch.mcp.rendering import Link
    return Link(entry_uri(agent, data["name"], data.get("version")), data["name"],
                mime_type(data.get("format")), data.get("bytes"),
                f"{data.get('format', 'text')}, {data.get('lines', 0):,} lines, "
                f"{data.get('tokens', 0):,} tokens ({data.get('encoding', '')})")


def parse_uri(uri: str, agent: str) -> tuple[str, dict[str, int]]:
    """``scratch://AGENT/NAME[@V][?from_line=N&from_byte=B]`` -> (ref, page) for ``agent``."""
    parts = urlsplit(uri)
    ref = unquote(parts.path.lstrip("/"))
    if parts.scheme != SCHEME or not ref or parts.netloc != agent:
        # another scheme, or another agent's entry: not found, like a name that is not there
        raise EntryNotFound(f"no resource {uri!r} for agent {agent!r} (scratch://{agent}/NAME "
                            "names this agent's entries)", uri=uri, agent=agent)
    page: dict[str, int] = {}
    for key, values in parse_qs(parts.query, keep_blank_values=True).items():
        if key not in ("from_line", "from_byte") or not values[-1].isdigit():
            raise UsageError(f"unknown or bad query {key!r} in {uri!r}: from_line=N and "
                             "from_byte=B are known", code="invalid_uri", uri=uri)
        page[key] = int(values[-1])
    return ref, page


def _entry_tokens(ctx: Context, version: VersionInfo, name: str) -> int | None:
    spec = ctx.encoding()
    base = (version.get("info") or {}).get("base_tokens") or {}
    if spec.base in base:
        return int(spec.scale(int(base[spec.base])))
    try:  # not counted at write time in this encoding: the index counts it (built once)
        from scratch.answers.kernel.target import open_target
        target = open_target(ctx, name)
        try:
            total = target.index.line_count
            return int(spec.scale(target.index.range_tokens(1, total, spec.base) or 0))
        finally:
            target.index.close()
    except Exception:
        return None


def list_entries(ctx: Context, cursor: str | None) -> tuple[list[EntryResource], str | None]:
    """One page of the entries of ``ctx``'s agent as resources, and the cursor of the next
    page."""
    if not (ctx.root / ".git").exists():
        return [], None
    store = ctx.store()
    metas = sorted((m for m in store.iter_meta() if not m.get("deleted")),
                   key=lambda m: m["name"])
    start = int(cursor) if cursor and cursor.isdigit() else 0
    out: list[EntryResource] = []
    for meta in metas[start:start + PAGE]:
        name = meta["name"]
        size: int | None
        lines: int | None
        if meta["kind"] == "log":
            size = store.content_path(name, "log").stat().st_size
            fmt, lines, tokens, version = "ndjson", meta["log"]["count"], None, None
        else:
            cur = meta["versions"][-1]
            info = cur.get("info") or {}
            size, lines, version = cur.get("bytes"), cur.get("lines"), cur["version"]
            fmt = info.get("format") or "text"
            tokens = _entry_tokens(ctx, cur, name)
        what = f"{meta['kind']}, {fmt}, {lines or 0:,} lines" + (
            f", {tokens:,} tokens ({ctx.encoding().name})" if tokens is not None else "")
        out.append({"uri": entry_uri(ctx.agent, name), "name": name,
                    "mimeType": mime_type(fmt), "size": size, "description": what,
                    "_meta": {"scratch/kind": meta["kind"], "scratch/format": fmt,
                              "scratch/version": version, "scratch/lines": lines,
                              "scratch/tokens": tokens}})
    nxt = str(start + PAGE) if start + PAGE < len(metas) else None
    return out, nxt


def read_entry(ctx: Context, uri: str) -> EntryPage:
    """One page of a resource: ``{"uri", "mimeType", "text", "_meta"}``; raises ScratchError
    (the caller turns it into a protocol error)."""
    from scratch.answers.kernel.execution import execute
    from scratch.calls import call
    from scratch.errors import OutOfRange
    from scratch.mcp.rendering import ResourcePage, answer_text
    ref, page = parse_uri(uri, ctx.agent)
    start = page.get("from_line", 1)
    try:
        result = execute(ctx, ResourcePage(), call(
            "slice", ref=ref, start=max(1, start), end=2**62, numbers=False, fit=True,
            from_byte=page.get("from_byte")))
    except OutOfRange:
        if start != 1:
            raise
        return {"uri": uri, "mimeType": "text/plain", "text": "", "_meta": {"scratch/tokens": 0}}
    data = cast("Mapping[str, JSON]", result.data or {})  # slice's answer
    base = uri.split("?", 1)[0]
    tokens = result.meta.get("tokens") or {}
    extra: dict[str, JSON] = {"scratch/tokens": tokens.get("count"),
                             "scratch/lines": [data.get("start"), data.get("end")],
                             "scratch/total_lines": data.get("total_lines")}
    nxt = result.next
    if nxt is not None:
        query = f"?from_line={nxt.args.get('start', 1)}"
        if nxt.args.get("from_byte") is not None:
            query += f"&from_byte={nxt.args['from_byte']}"
        extra["scratch/next"] = base + query
    fmt = None
    try:
        from scratch.answers.kernel.target import open_target
        target = open_target(ctx, ref)
        fmt = target.format
        target.index.close()
    except ScratchError:
        pass
    return {"uri": uri, "mimeType": mime_type(fmt), "text": answer_text(result), "_meta": extra}
