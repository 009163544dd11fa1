"""Escaping template helpers: every value put into a page is escaped unless it is :class:`Html`.

Invariants:
- :class:`Html` is text already safe to put in a page; nothing else is. :func:`render` and
  :func:`tag` escape every value that is not :class:`Html` (``& < > " '``), so user-controlled
  text (entry names, content lines, arguments, error messages) can only appear escaped.
- Attribute values are always quoted by :func:`tag` and escaped the same way.
- URLs built with :func:`href` have each path segment and query value percent-encoded.
"""

from __future__ import annotations

import html as _html
import string
from collections.abc import Iterable, Mapping
from urllib.parse import quote, urlencode


class Html(str):
    """Markup that is safe as it is (built by the helpers here, or a template constant)."""

    __slots__ = ()

    def __add__(self, other: str) -> Html:
        return Html(str.__add__(self, escape(other)))


def escape(value: object) -> Html:
    """``value`` as page text: Html as it is, anything else stringified and escaped."""
    if isinstance(value, Html):
        return value
    if value is None:
        return Html("")
    return Html(_html.escape(str(value), quote=True))


class _Escaping(string.Formatter):
    def format_field(self, value: object, format_spec: str) -> str:
        if isinstance(value, Html):
            return value
        return escape(format(value, format_spec) if format_spec else value)


_FORMATTER = _Escaping()


def render(template: str, /, **values: object) -> Html:
    """``template`` (``str.format`` syntax) with each value escaped unless it is Html."""
    return Html(_FORMATTER.vformat(template, (), values))


def join(parts: Iterable[object], sep: str = "") -> Html:
    """The parts, each escaped unless Html, joined by ``sep`` (a constant: trusted)."""
    return Html(sep.join(escape(p) for p in parts))


VOID = frozenset({"input", "br", "meta", "link", "img", "hr"})  # elements without content


def tag(name: str, content: object = "", /, **attrs: object) -> Html:
    """``<name attrs>content</name>``; an attribute whose value is None or False is left out,
    True gives it bare; ``class_`` is ``class`` (a trailing underscore is dropped; ``_`` in
    names becomes ``-``, e.g. ``data_seq``). A void element (``input``) has no content and no
    end tag."""
    out = [f"<{name}"]
    for key, value in attrs.items():
        if value is None or value is False:
            continue
        attr = key.rstrip("_").replace("_", "-")
        out.append(f" {attr}" if value is True else f' {attr}="{escape(value)}"')
    out.append(">" if name in VOID else f">{escape(content)}</{name}>")
    return Html("".join(out))


def href(base: str, *segments: str, **query: object) -> str:
    """A URL: ``base`` (trusted) then each segment percent-encoded (``/`` kept, as entry names
    have folders), then the query values that are not None."""
    path = base.rstrip("/") + "".join("/" + quote(s, safe="/@") for s in segments)
    given = {k: v for k, v in query.items() if v is not None and v != ""}
    return path + ("?" + urlencode(given) if given else "")


def table(head: Iterable[object], rows: Iterable[Iterable[object]], **attrs: object) -> Html:
    """A table: a header row, then each row's cells (escaped unless Html)."""
    thead = tag("thead", tag("tr", join(tag("th", h) for h in head)))
    body = join(tag("tr", join(tag("td", c) for c in row)) for row in rows)
    return tag("table", thead + tag("tbody", body), **attrs)


def number(n: object) -> str:
    """An integer with thousands separators (other values as they are)."""
    return f"{n:,}" if isinstance(n, int) and not isinstance(n, bool) else "" if n is None \
        else str(n)


def attrs_of(values: Mapping[str, object]) -> str:
    """Attributes as ``tag`` writes them (for a start tag written by hand)."""
    return "".join(f' {k}="{escape(v)}"' for k, v in values.items() if v is not None)
