"""What ``scratch mcp proxy`` does to the tools and results of its upstream servers.

No SDK here: tool listings and results are the wire's dicts. Invariants:

- Names: an upstream tool keeps its name unless another upstream offers the same name; then
  every upstream tool of that name is offered as ``SERVER__TOOL``. A scratch tool an upstream
  also has was renamed ``scratch_NAME`` before (``specs.offer``), so ``own`` holds the names
  scratch offers and only an upstream tool named like one of those (``scratch_read_file``)
  is prefixed too. :func:`route_tools` says which.
- A tool that declares an ``outputSchema`` is listed without it (the schema moves to the
  tool's ``_meta["scratch/outputSchema"]``): a pointer cannot conform to the schema, and the
  spec requires a result of a tool with one to carry conforming ``structuredContent``. A
  result below the threshold still carries the upstream's ``structuredContent`` unchanged.
- A result below its tool's threshold (:func:`scratch.thresholds.resolve_server_threshold`,
  priced as :mod:`scratch.mcp.proxy.extract` reads it, in the session's tokenizer) is returned as
  the very dict the upstream sent. At or above it, the extracted text is stored once
  (identical results find the same entry) with its attachments and JSON/markdown blocks as
  companions, and the client gets the pointer as text blocks (calls in it are tool calls), a
  ``resource_link`` to the entry, and ``_meta.scratch`` = ``{"stored", "version", "tokens",
  "pointer_tokens"}``. Storing is counted like ``ingest`` (tokens intercepted, budget).
- A result bigger than ``limits.max_ingest_bytes`` is stored up to the limit (cut at a line
  end), flagged partial, and the pointer says so. A result that cannot be stored is an error
  saying why; the raw payload is never handed on instead.
- An upstream's error (``isError``) is never stored: each text over 8 KiB is cut to its first
  6 KiB and last 2 KiB around a marked cut; everything else passes unchanged.
- Every upstream call lands in the agent's call ledger: a stored result as ``ingest`` (through
  the answers pipeline), one handed on as ``upstream`` (:func:`record_relayed`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from scratch.errors import ScratchError
from scratch.mcp.wire import JSONObject

if TYPE_CHECKING:
    from scratch.answers.kernel.context import Context
    from scratch.mcp.proxy.extract import Extracted
    from scratch.mcp.serve.session import Session
    from scratch.store.config import Config

SEP = "__"
ERROR_MAX = 8 * 1024
ERROR_HEAD = ERROR_MAX * 3 // 4


class Route(NamedTuple):
    server: str
    tool: str  # the upstream's own name


def route_tools(listed: list[tuple[str, list[JSONObject]]], own: set[str]
                ) -> tuple[list[JSONObject], dict[str, Route], list[tuple[str, str, str]]]:
    """The upstream tools as the proxy lists them, how each exposed name routes, and the
    renamed ones as ``(server, tool, exposed)`` (see the module for the rule)."""
    seen: dict[str, int] = {}
    for _, tools in listed:
        for t in tools:
            seen[t["name"]] = seen.get(t["name"], 0) + 1
    out: list[JSONObject] = []
    routes: dict[str, Route] = {}
    renamed: list[tuple[str, str, str]] = []
    for server, tools in listed:
        for t in tools:
            name = t["name"]
            exposed = name
            if seen[name] > 1 or name in own:
                exposed = f"{server}{SEP}{name}"
                renamed.append((server, name, exposed))
            if exposed in routes or exposed in own:
                continue  # the same tool listed twice by one server: the first counts
            routes[exposed] = Route(server, name)
            out.append(list_entry(t, exposed))
    return out, routes, renamed


def list_entry(tool: JSONObject, exposed: str) -> JSONObject:
    """An upstream tool as the proxy lists it: renamed, without an ``outputSchema``."""
    entry = {**tool, "name": exposed}
    schema = entry.pop("outputSchema", None)
    if schema is not None:
        meta = dict(entry.get("_meta") or {})
        meta["scratch/outputSchema"] = schema
        entry["_meta"] = meta
    return entry


def cut_text(text: str, limit: int = ERROR_MAX) -> str:
    """``text`` if it is at most ``limit`` bytes of UTF-8; else its head and tail around a
    marker saying how much was cut."""
    raw = text.encode("utf-8", errors="surrogatepass")
    if len(raw) <= limit:
        return text
    head_n = limit * 3 // 4
    head = raw[:head_n].decode("utf-8", errors="ignore")
    tail = raw[len(raw) - (limit - head_n):].decode("utf-8", errors="ignore")
    cut = len(raw) - len(head.encode()) - len(tail.encode())
    return f"{head}\n[... scratch cut {cut:,} bytes of this error here ...]\n{tail}"


def cut_error(result: JSONObject) -> JSONObject:
    """An upstream's error result with each long text cut (the rest as it came)."""
    content = result.get("content")
    if not isinstance(content, list) or not any(
            isinstance(b, dict) and isinstance(b.get("text"), str)
            and len(b["text"]) > ERROR_MAX // 4 for b in content):
        return result
    blocks = [{**b, "text": cut_text(b["text"])} if isinstance(b, dict) and b.get("type") ==
              "text" and isinstance(b.get("text"), str) else b for b in content]
    return {**result, "content": blocks}


def _cut_at_limit(data: bytes, limit: int) -> bytes:
    """The first ``limit`` bytes at most, ending at a line end when there is one in the last
    MiB, else at a UTF-8 character boundary."""
    head = data[:limit]
    nl = head.rfind(b"\n", max(0, limit - (1 << 20)))
    if nl >= 0:
        return head[: nl + 1]
    return head.decode("utf-8", errors="ignore").encode("utf-8")


class Intercepted(NamedTuple):
    result: JSONObject  # what the client gets
    stored: str | None  # the entry, when the result was stored
    tokens: int | None  # what the result would have cost the model (when counted)


def below_threshold(config: Config, server: str, tool: str, raw: JSONObject) -> bool:
    """Whether ``raw`` surely passes through, decided without counting tokens (its text has
    fewer bytes than the threshold has tokens, and a token is at least one byte) or any store:
    the path of almost every call, taken on the event loop."""
    from scratch.thresholds import resolve_server_threshold
    return fits_below(raw, resolve_server_threshold(server, tool, config["mcp.servers"],
                                                    config["thresholds"]).min_tokens)


def fits_below(raw: JSONObject, threshold: int) -> bool:
    """:func:`below_threshold` for a known threshold (in tokens)."""
    if raw.get("isError") is True or raw.get("structuredContent") is not None:
        return False
    content = raw.get("content")
    if not isinstance(content, list):
        return False
    size = 0
    for block in content:
        if not isinstance(block, dict) or block.get("type") != "text" \
                or not isinstance(block.get("text"), str):
            return False  # anything else goes the whole way (and is checked there)
        size += len(block["text"]) * 4  # UTF-8 bytes, at most
    return size < threshold


def handle_result(session: Session, server: str, tool: str, raw: JSONObject
                  ) -> Intercepted:
    """What the client gets for the upstream's result ``raw`` of ``server``'s ``tool``.
    Raises :class:`scratch.mcp.proxy.extract.MalformedResult` for a result without a tool
    result's shape, and ScratchError when storing fails."""
    if raw.get("isError") is True:
        return Intercepted(cut_error(raw), None, None)
    from scratch.mcp.proxy.extract import extract
    ex = extract(raw)
    ctx = session.context()
    from scratch.thresholds import resolve_server_threshold
    threshold = resolve_server_threshold(server, tool, ctx.config["mcp.servers"],
                                         ctx.config["thresholds"]).min_tokens
    data = ex.text.encode("utf-8", errors="surrogatepass")
    binary = ex.binary_bytes // 4  # base64 handed to a model as text: ~4 characters a token
    if len(data) + binary < threshold:  # a token is at least one byte
        return Intercepted(raw, None, None)
    from scratch.tokens import count_text
    spec = ctx.encoding()
    probe = max(64 * 1024, 16 * threshold)
    counted = count_text(data[:probe].decode("utf-8", errors="ignore"), spec) + binary
    if counted < threshold and len(data) > probe:
        counted = count_text(ex.text, spec) + binary
    if counted < threshold:
        return Intercepted(raw, None, None)
    return _store(session, ctx, server, tool, ex, data)


def _store(session: Session, ctx: Context, server: str, tool: str, ex: Extracted, data: bytes
           ) -> Intercepted:
    from scratch.answers.capture.ingest import Companion
    from scratch.answers.kernel.execution import execute
    from scratch.calls import Call
    notices: list[str] = []
    info: JSONObject = {"mcp": {"server": server, "tool": tool}}
    if ex.prefix:  # "Echo: {...}": the JSON is the entry, the words before it are said
        data = ex.text[ex.json_at:].encode("utf-8", errors="surrogatepass")
        info["mcp"]["prefix"] = ex.prefix
        said = ex.prefix.strip()
        said = said if len(said) <= 80 else said[:77] + "..."
        notices.append(f"scratch: the result's text began with {said!r} before the JSON "
                       "stored here")
    if ex.links:
        info["mcp"]["resource_links"] = [
            {k: v for k, v in link.items() if k in ("uri", "name", "mimeType")}
            for link in ex.links]
    limit = ctx.config["limits.max_ingest_bytes"]
    partial = len(data) > limit
    if partial:
        size = len(data)
        data = _cut_at_limit(data, limit)
        info["partial_reason"] = (f"the result is {size:,} bytes, over limits.max_ingest_bytes "
                                  f"({limit:,}); the first {len(data):,} bytes are stored")
    companions = tuple(Companion(slug, text.encode("utf-8", errors="surrogatepass"))
                       for slug, text in ex.documents)
    companions += tuple(Companion(a.slug, a.data, "binary", a.mime_type)
                        for a in ex.attachments)
    call = Call("ingest", {"content": data, "tool": f"{server}.{tool}", "store_always": True,
                           "partial": partial, "companions": companions, "info": info,
                           "notices": tuple(notices)})
    rendering = session.rendering()
    result = execute(ctx, rendering, call)
    shown = rendering.show(result)
    pointer = result.data if isinstance(result.data, dict) else {}
    name = pointer.get("name")
    tokens = result.meta.get("tokens") or {}
    content: list[JSONObject] = [{"type": "text", "text": t} for t in shown.texts]
    content += [link.wire() for link in shown.links]
    meta = {**shown.meta, "scratch": {
        "stored": name, "version": pointer.get("version"), "tokens": pointer.get("tokens"),
        "pointer_tokens": tokens.get("count"), "partial": partial}}
    return Intercepted({"content": content, "_meta": meta}, name, pointer.get("tokens"))


def record_relayed(session: Session, server: str, tool: str, *, code: str | None = None,
                   message: str | None = None, started: float | None = None) -> None:
    """Put an upstream call whose result was handed on as it came (not stored), or that failed
    with ``code``, in the agent's call ledger as command ``upstream`` (a stored result is
    ``ingest``'s record, made by the answers pipeline)."""
    import time

    from scratch.store import ledger
    root = session.server.root
    if not (root / ".git").is_dir():
        return
    ms = 0.0 if started is None else (time.perf_counter() - started) * 1000
    rec = ledger.make(interface=session.interface, agent=session.agent,
                      session=session.session, command="upstream",
                      args={"server": ledger.preview(server), "tool": ledger.preview(tool)},
                      outcome="ok" if code is None else "error", code=code, message=message,
                      ms=ms)
    ledger.append(root, rec, max_bytes=session.server.configs.get()["ledger.max_bytes"])


def error_result(exc: ScratchError) -> JSONObject:
    """A fault (of an upstream, or of storing) as a tool result the model can read."""
    from scratch.answers.kernel.result import compact_json
    from scratch.mcp.rendering import error_object
    info = error_object(exc)
    return {"content": [{"type": "text", "text": compact_json(info)}],
            "structuredContent": info, "isError": True}


__all__ = ["ERROR_MAX", "Intercepted", "Route", "SEP", "cut_error", "cut_text", "error_result",
           "fits_below", "handle_result", "list_entry", "record_relayed", "route_tools"]
