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
import re
import string
from collections.abc import Iterable, Mapping
from functools import lru_cache
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
    have folders; a segment that is empty, ``.`` or ``..``, which a browser would fold away,
    written with its dots encoded), then the query values that are not None."""
    path = base.rstrip("/") + "".join("/" + _segment(s) for s in segments)
    given = {k: v for k, v in query.items() if v is not None and v != ""}
    return path + ("?" + urlencode(given) if given else "")


@lru_cache(maxsize=4096)
def _segment(text: str) -> str:
    """A path segment percent-encoded (names repeat across a page's links: kept)."""
    out = quote(text, safe="/@")
    parts = out.split("/")
    return "/".join(p.replace(".", "%2E") if p in (".", "..") else p for p in parts)


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


def scroll(content: Html, **attrs: object) -> Html:
    """``content`` (a wide table) in a box that scrolls sideways itself, so the page never
    does."""
    return tag("div", content, class_="scroll", **attrs)


MARKS = 64  # matches marked in one line at most


def highlight(text: str, pattern: re.Pattern[str] | None) -> Html:
    """``text`` escaped, each match of ``pattern`` in ``<mark>`` (matches that touch in one;
    at most :data:`MARKS` of them, the rest of the line plain)."""
    if pattern is None:
        return escape(text)
    spans: list[list[int]] = []
    for m in pattern.finditer(text):
        if m.end() == m.start():
            continue
        if spans and spans[-1][1] >= m.start():
            spans[-1][1] = max(spans[-1][1], m.end())
        elif len(spans) >= MARKS:
            break
        else:
            spans.append([m.start(), m.end()])
    out, at = [], 0
    for start, end in spans:
        out += [escape(text[at:start]), tag("mark", text[start:end])]
        at = end
    out.append(escape(text[at:]))
    return join(out)


def bar(parts: Iterable[tuple[str, float, float]], marks: Iterable[tuple[str, float]] = (),
        label: str = "") -> Html:
    """A horizontal bar as inline SVG (no style attribute: the page's CSP allows none): each
    part ``(class, from, to)`` a rectangle between two fractions of the width, each mark
    ``(class, at)`` a tick at a fraction. Colours come from the classes (ui.css)."""
    def x(f: float) -> str:
        return f"{max(0.0, min(f, 1.0)) * 1000:.1f}"
    shapes = [f'<rect class="{escape(c)}" x="{x(a)}" y="0" width="{float(x(b)) - float(x(a)):.1f}"'
              f' height="20"></rect>' for c, a, b in parts if b > a]
    shapes += [f'<rect class="{escape(c)}" x="{float(x(at)) - 3:.1f}" y="0" width="6" '
               f'height="20"></rect>' for c, at in marks]
    return Html(f'<svg class="bar" viewBox="0 0 1000 20" preserveAspectRatio="none" '
                f'role="img" aria-label="{escape(label)}"><title>{escape(label)}</title>'
                + "".join(shapes) + "</svg>")
