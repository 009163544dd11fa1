"""What an agent reads in an upstream's tool result, as the proxy stores it.

:func:`extract` turns a ``tools/call`` result (the wire dict) into :class:`Extracted`: the text a
model is handed, and what is kept beside it. Invariants:

- ``structuredContent``, when present, is the result (pretty JSON, 2 spaces, key order kept):
  clients that read it hand the model that object, and the content blocks are its copy; an
  image or other binary block beside it is still kept as an attachment. Except when it only
  wraps the text blocks (one string field equal to their text, as server-filesystem's
  ``{"content": TEXT}``): then the text is the document, and is read as below.
- Otherwise the ``content`` blocks in order, joined by newlines: text as is; an embedded
  resource as a line naming its URI, then its text (a ``blob`` of a text-like MIME type that is
  UTF-8 is decoded); a resource link as one line ``[resource link: NAME <URI> (MIME)]``; an
  image, audio or other binary as one line ``[image image/png, 4,033 bytes: stored as
  .image-1]``, its bytes kept as an :class:`Attachment` with its MIME type.
- A result of several blocks keeps each text block that is a JSON or markdown document
  (:mod:`scratch.formats.embedded`'s rule) as a companion document too.
- A text that is a JSON document after a short prefix (``Echo: {...}``, ``Found 60 pods:\\n[``)
  is split: ``prefix`` and ``json_at``, so the JSON is stored as JSON and the prefix is said.
- What the text costs the model is counted by the caller; :attr:`Extracted.binary_bytes` is
  the base64 a client that cannot show the attachments would hand the model instead.
- A result that is not an object with a list of typed blocks raises :class:`MalformedResult`.

No SDK and no store: plain data in, plain data out.
"""

from __future__ import annotations

import base64
import binascii
from typing import NamedTuple

import orjson

from scratch.mcp.wire import JSON, JSONObject

PREFIX_MAX = 1024  # characters of text allowed before an embedded JSON document
TEXT_MIME_SUFFIXES = ("+json", "+xml", "/json", "/xml", "/yaml", "/x-yaml", "/javascript",
                      "/csv", "/x-ndjson", "/toml", "/sql")


class MalformedResult(ValueError):
    """The upstream's result does not have the shape of a tool result."""


class Attachment(NamedTuple):
    slug: str  # companion slug: image-1, audio-1, blob-1
    data: bytes
    mime_type: str


class Extracted(NamedTuple):
    text: str  # what the model reads
    json_value: bool  # text is a JSON document (structuredContent, or one JSON text)
    prefix: str  # text before an embedded JSON document ("" when none)
    json_at: int  # where that document starts in text (0 when none)
    documents: list[tuple[str, str]]  # (slug, text) of JSON/markdown text blocks
    attachments: list[Attachment]
    links: list[JSONObject]  # resource links as received
    binary_bytes: int  # base64 characters of the attachments as received


def is_text_mime(mime: str | None) -> bool:
    mime = (mime or "").split(";")[0].strip().lower()
    return mime.startswith("text/") or mime.endswith(TEXT_MIME_SUFFIXES)


def _decode(data: JSON) -> bytes:
    if not isinstance(data, str):
        raise MalformedResult("a binary block's data is not a base64 string")
    try:
        return base64.b64decode(data, validate=False)
    except (binascii.Error, ValueError) as exc:
        raise MalformedResult(f"a binary block's data is not base64: {exc}") from None


class _Builder:
    def __init__(self) -> None:
        self.parts: list[str] = []
        self.attachments: list[Attachment] = []
        self.counts: dict[str, int] = {}
        self.binary_bytes = 0

    def add(self, text: str) -> None:
        if self.parts and not self.parts[-1].endswith("\n"):
            self.parts.append("\n")
        self.parts.append(text)

    def attach(self, kind: str, data: JSON, mime: str, label: str = "") -> None:
        raw = _decode(data)
        self.binary_bytes += len(data)
        n = self.counts[kind] = self.counts.get(kind, 0) + 1
        slug = f"{kind}-{n}"
        self.attachments.append(Attachment(slug, raw, mime))
        self.add(f"[{kind} {mime}{label}, {len(raw):,} bytes: stored as .{slug}]")


def _resource(b: _Builder, resource: JSON) -> None:
    if not isinstance(resource, dict) or not isinstance(resource.get("uri"), str):
        raise MalformedResult("an embedded resource has no uri")
    uri, mime = resource["uri"], resource.get("mimeType")
    label = f" {uri}" + (f" ({mime})" if mime else "")
    if isinstance(resource.get("text"), str):
        b.add(f"[resource{label}]")
        b.add(resource["text"])
        return
    if "blob" not in resource:
        raise MalformedResult(f"the embedded resource {uri} has neither text nor blob")
    if is_text_mime(mime):
        raw = _decode(resource["blob"])
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            pass
        else:
            b.add(f"[resource{label}]")
            b.add(text)
            return
    b.attach("blob", resource["blob"], mime or "application/octet-stream", f" {uri}")


def _json_start(text: str) -> int | None:
    """Where a JSON document that runs to the end of ``text`` starts after a short prefix
    (None: there is none; 0 is not reported, ingest finds a whole-text document itself)."""
    tried = 0
    limit = min(len(text), PREFIX_MAX)
    i = 0
    while tried < 4:
        cands = [p for p in (text.find("{", i, limit), text.find("[", i, limit)) if p >= 0]
        if not cands:
            return None
        p = min(cands)
        i = p + 1
        if p == 0 or text[p - 1] not in " \t\r\n:>=":
            continue
        tried += 1
        try:
            value = orjson.loads(text[p:].encode("utf-8", errors="surrogatepass"))
        except (orjson.JSONDecodeError, UnicodeEncodeError):
            continue
        if isinstance(value, (dict, list)):
            return p
    return None


def _wraps_text(structured: JSON, content: list[JSON]) -> bool:
    """Whether ``structured`` is one string field holding exactly the text of the content's
    text blocks (server-filesystem's ``{"content": TEXT}``)."""
    if not isinstance(structured, dict) or len(structured) != 1:
        return False
    value = next(iter(structured.values()))
    texts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
    return isinstance(value, str) and bool(texts) and value == "\n".join(
        t for t in texts if isinstance(t, str))


def extract(result: JSON) -> Extracted:
    """The text a model reads in ``result`` and what is stored beside it (see the module)."""
    if not isinstance(result, dict):
        raise MalformedResult("the result is not an object")
    content = result.get("content", [])
    if not isinstance(content, list):
        raise MalformedResult("the result's content is not a list")
    b = _Builder()
    links: list[JSONObject] = []
    texts: list[str] = []
    structured = result.get("structuredContent")
    if _wraps_text(structured, content):
        structured = None  # {"content": TEXT} beside TEXT: the text is the document
    for block in content:
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise MalformedResult("a content block is not an object with a type")
        kind = block["type"]
        if kind == "text":
            if not isinstance(block.get("text"), str):
                raise MalformedResult("a text block has no text")
            texts.append(block["text"])
            if structured is None:
                b.add(block["text"])
        elif kind in ("image", "audio"):
            b.attach(kind, block.get("data"), str(block.get("mimeType") or
                                                   "application/octet-stream"))
        elif kind == "resource":
            if structured is None:
                _resource(b, block.get("resource"))
        elif kind == "resource_link":
            links.append(block)
            if structured is None:
                mime = f" ({block['mimeType']})" if block.get("mimeType") else ""
                b.add(f"[resource link: {block.get('name', '')} <{block.get('uri', '')}>{mime}]")
        elif structured is None:  # a block type this proxy does not know: keep it as JSON
            b.add(orjson.dumps(block).decode())
    if structured is not None:
        if not isinstance(structured, dict):
            raise MalformedResult("the result's structuredContent is not an object")
        pretty = orjson.dumps(structured, option=orjson.OPT_INDENT_2).decode() + "\n"
        notes = "".join(b.parts)  # the attachments' lines only
        text = pretty + notes + ("\n" if notes and not notes.endswith("\n") else "")
        return Extracted(text if notes else pretty, not notes, "", 0, [], b.attachments,
                         links, b.binary_bytes)
    text = "".join(b.parts)
    documents: list[tuple[str, str]] = []
    if len(content) > 1:
        from scratch.formats.embedded import _classify
        for i, t in enumerate(texts, 1):
            found = _classify(t) if len(t) >= 40 else None
            if found is not None:
                documents.append((f"text-{i}", t))
    at = _json_start(text) if text[:1] not in "{[" else None
    return Extracted(text, False, text[:at] if at else "", at or 0, documents, b.attachments,
                     links, b.binary_bytes)
