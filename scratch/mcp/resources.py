"""Stored entries as MCP resources: ``scratch://AGENT/NAME`` (the current version) and
``scratch://AGENT/NAME@VERSION``.

Invariants:
- A session sees only its own agent's entries: a URI naming another agent is "not found",
  exactly like a name that does not exist (no existence is leaked).
- Reading a resource is an answer like any other: it is a page of lines that fits the
  per-call cap and the session's budget (the core's ``slice --fit``), priced and charged the
  same; ``?from_line=N`` (and ``&from_byte=B`` inside a line too long for one page) asks
  for a later page, and the contents' ``_meta`` names the ``next`` URI until the end.
- Listing shows size, format and token count (in the session's tokenizer) of each entry.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlsplit

from scratch.context import Context
from scratch.errors import EntryNotFound, UsageError
from scratch.mcp.session import Session

SCHEME = "scratch"
PAGE = 100  # entries per resources/list page
MIME = {"json": "application/json", "ndjson": "application/x-ndjson", "yaml": "application/yaml",
        "csv": "text/csv", "tsv": "text/tab-separated-values", "markdown": "text/markdown"}
TEMPLATE = "scratch://{agent}/{+name}"


def mime_type(fmt: str | None) -> str:
    return MIME.get(fmt or "", "text/plain")


def entry_uri(agent: str, name: str, version: int | None = None) -> str:
    tail = name if version is None else f"{name}@{version}"
    return f"{SCHEME}://{agent}/{quote(tail, safe='/@')}"


def entry_link(ctx: Context, data: dict[str, Any]) -> dict[str, Any]:
    """The resource link a stored output's pointer carries."""
    return {"uri": entry_uri(ctx.agent, data["name"], data.get("version")),
            "name": data["name"], "mimeType": mime_type(data.get("format")),
            "size": data.get("bytes"),
            "description": f"{data.get('format', 'text')}, {data.get('lines', 0):,} lines, "
                           f"{data.get('tokens', 0):,} tokens ({data.get('encoding', '')})"}


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


def _entry_tokens(ctx: Context, version: dict[str, Any], name: str) -> int | None:
    spec = ctx.encoding()
    base = (version.get("info") or {}).get("base_tokens") or {}
    if spec.base in base:
        return int(spec.scale(int(base[spec.base])))
    try:  # not counted at write time in this encoding: the index counts it (built once)
        from scratch.explore.target import open_target
        target = open_target(ctx, name)
        try:
            total = target.index.line_count
            return int(spec.scale(target.index.range_tokens(1, total, spec.base) or 0))
        finally:
            target.index.close()
    except Exception:
        return None


def list_entries(session: Session, cursor: str | None) -> tuple[list[dict[str, Any]],
                                                                 str | None]:
    """One page of the session's entries as resources, and the cursor of the next page."""
    ctx = session.context()
    if not (ctx.root / ".git").exists():
        return [], None
    store = ctx.store()
    metas = sorted((m for m in store.iter_meta() if not m.get("deleted")),
                   key=lambda m: m["name"])
    start = int(cursor) if cursor and cursor.isdigit() else 0
    out = []
    for meta in metas[start:start + PAGE]:
        name = meta["name"]
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


def read_entry(session: Session, uri: str) -> dict[str, Any]:
    """One page of a resource: ``{"uri", "mimeType", "text", "_meta"}``; raises ScratchError
    (the caller turns it into a protocol error)."""
    from scratch.mcp.dispatch import run_tool
    ref, page = parse_uri(uri, session.agent)
    start = page.get("from_line", 1)
    args: dict[str, Any] = {"file": ref, "start": max(1, start), "end": 2**62,
                            "numbers": False, "fit": True}
    if "from_byte" in page:
        args["from_byte"] = page["from_byte"]
    outcome = run_tool("slice", args, session)
    if not outcome.ok and outcome.code == "offset_out_of_range" and start == 1:
        return {"uri": uri, "mimeType": "text/plain", "text": "", "_meta": {"scratch/tokens": 0}}
    if not outcome.ok:
        from scratch.errors import ScratchError
        info = dict(outcome.structured)
        err = ScratchError(info.pop("message", "cannot read"), code=info.pop("code", "error"))
        err.details = info
        raise err
    data = outcome.structured["data"] or {}
    meta = outcome.structured["meta"]
    base = uri.split("?", 1)[0]
    nxt = meta.get("next")
    extra: dict[str, Any] = {"scratch/tokens": outcome.tokens,
                             "scratch/lines": [data.get("start"), data.get("end")],
                             "scratch/total_lines": data.get("total_lines")}
    if isinstance(nxt, dict):
        a = nxt.get("arguments", {})
        query = f"?from_line={a.get('start', 1)}"
        if "from_byte" in a:
            query += f"&from_byte={a['from_byte']}"
        extra["scratch/next"] = base + query
    fmt = None
    try:
        ctx = session.context()
        from scratch.explore.target import open_target
        target = open_target(ctx, ref)
        fmt = target.format
        target.index.close()
    except Exception:
        pass
    return {"uri": uri, "mimeType": mime_type(fmt), "text": outcome.text, "_meta": extra}
