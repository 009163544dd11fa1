"""Format detection from a bounded prefix of the content.

:func:`sniff` looks at most at :data:`SNIFF_BYTES` bytes and returns one of :data:`FORMATS`
(:func:`canonical_format` turns a declared name or one of its :data:`ALIASES` into one).
It never raises. The decision is a guess that :func:`scratch.index.normalizer.normalize`
confirms by parsing the whole content (a guess that does not hold becomes ``text`` with a
warning), so the rules lean towards the structured formats only when the prefix clearly has
their shape:

1. ``binary``: a NUL byte, or more than 10% control bytes other than tab/newline/CR/FF/ESC.
2. ``json``: starts with ``{`` or ``[`` and the prefix is a JSON document, a valid start of
   one (cut anywhere, or truncated), or JSON with keys parsed before a syntax error (such
   content is then stored as text with a warning); a single complete value per line over 2+
   lines is ``ndjson``.
3. ``ndjson``: 2+ non-blank lines, each a complete JSON object or array (the last line of a
   cut prefix may be partial; up to 10% of the others may be broken, not the first).
4. ``log`` (strong): at least half of the first lines carry a timestamp near their start, or
   the first lines are in a log format that declares its own layout, which few timestamps
   mark near the line start: a Zeek TSV or W3C extended header, CEF, auditd records, S3
   server access logs (:func:`scratch.formats.logformats.detect` confirms a cheap hint).
5. ``yaml``: the first significant line is ``---``, ``key:`` or ``- key:``, there is at least
   one ``key: value`` line, and every document of the prefix (cut after the last complete
   top-level line) parses to a mapping or sequence.
6. ``csv`` / ``tsv``: 2+ records, the same field count (>= 2) in every record, and a header
   row of non-empty, non-numeric names.
7. ``markdown``: headings, fences, lists, links or tables, with at least one heading or fence.
8. ``log`` (weak): at least 30% of lines carry a timestamp or a level marker.
9. ``text``: anything else, including empty input and invalid UTF-8 (unless at least half
   of its first lines carry a timestamp near their start: a log with a stray bad byte is a
   log, read with U+FFFD for the bad bytes, and stored byte for byte like any log).
"""

from __future__ import annotations

import csv
import re

from scratch.errors import UsageError
from scratch.formats.logs import log_score

SNIFF_BYTES = 64 * 1024
FORMATS = ("json", "ndjson", "yaml", "csv", "tsv", "markdown", "log", "text", "binary")
ALIASES = {"jsonl": "ndjson", "json-lines": "ndjson", "jsonlines": "ndjson", "yml": "yaml",
           "txt": "text", "md": "markdown", "logs": "log", "plain": "text"}
_SAMPLE_LINES = 200

_CONTROL = bytes(b for b in range(32) if b not in (9, 10, 12, 13, 27)) + b"\x7f"
_YAML_KEY = re.compile(r"""^(?:- )*(?:[^\s#'"{}\[\],&*!|>%@`-][^:#]*|"[^"]*"|'[^']*'):(?:\s|$)""")
_YAML_FIRST = re.compile(r"""^(?:---(?:\s|$)|%YAML|(?:- )*[A-Za-z_"'][^:]*:(?:\s|$))""")
_MD_HEADING = re.compile(r"^#{1,6}\s+\S")
_MD_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_MD_LIST = re.compile(r"^\s{0,6}(?:[-*+]|\d{1,3}[.)])\s+\S")
_MD_LINK = re.compile(r"\[[^\]\n]+\]\([^)\s]+\)")
_MD_TABLE = re.compile(r"^\s*\|.*\|\s*$")
_MD_SETEXT = re.compile(r"^(?:=+|-+)\s*$")
# a hint that the lines may be in a self-describing log format (the detection decides)
_LAYOUT_HINT = re.compile(r"^#(?:separator |fields\t|Fields:)|CEF:\d+\||^(?:node=\S+ )?type=\w+ "
                          r"msg=audit\(|^\S+ \S+ \[\d{2}/\w{3}/\d{4}:", re.M)
_LAYOUT_FORMATS = frozenset({"zeek", "w3c", "cef", "auditd", "s3", "alb", "elb"})
_NUMERIC = re.compile(r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$")


def canonical_format(name: str) -> str:
    """A format name or alias -> its canonical name; ``invalid_argument`` if unknown."""
    fmt = ALIASES.get(name.lower(), name.lower())
    if fmt not in FORMATS:
        raise UsageError(f"unknown format {name!r}; use one of {', '.join(FORMATS)}",
                         format=name, allowed=list(FORMATS))
    return fmt


def sniff(prefix: bytes, *, complete: bool | None = None) -> str:
    """Guess the format of content that starts with ``prefix``.

    ``complete`` says whether ``prefix`` is the whole content; by default it is assumed to be
    when it is shorter than :data:`SNIFF_BYTES`.
    """
    data = prefix[:SNIFF_BYTES]
    if complete is None:
        complete = len(prefix) < SNIFF_BYTES
    elif len(prefix) > SNIFF_BYTES:
        complete = False
    if not data:
        return "text"
    if is_binary(data):
        return "binary"
    text = _decode(data, complete)
    if text is None:  # invalid UTF-8: stored byte-exact, as a log when its lines are one
        lines = data.decode("utf-8", "replace").splitlines()[:_SAMPLE_LINES]
        return "log" if log_score(lines)[0] >= 0.5 else "text"
    if text.startswith("\ufeff"):
        text = text[1:]
    stripped = text.lstrip()
    if not stripped:
        return "text"
    lines = text.splitlines()
    if not complete and len(lines) > 1 and not text.endswith(("\n", "\r")):
        lines = lines[:-1]  # the last line may be cut
    if stripped[0] in "{[":
        if _is_ndjson(text, complete):
            return "ndjson"
        if _json_prefix_ok(stripped, complete):
            return "json"
    sample = lines[:_SAMPLE_LINES]
    ts_share, level_share, _ = log_score(sample)
    if ts_share >= 0.5 or _is_declared_log(sample):
        return "log"
    if _is_yaml(text, lines, complete):
        return "yaml"
    sep = _csv_delimiter(text, lines, complete)
    if sep is not None:
        return "tsv" if sep == "\t" else "csv"
    if _is_markdown(sample):
        return "markdown"
    if ts_share >= 0.3 or level_share >= 0.3 or (ts_share + level_share) >= 0.5:
        return "log"
    return "text"


def _is_declared_log(lines: list[str]) -> bool:
    """True when the lines are in one of :data:`_LAYOUT_FORMATS` (at least half of them, as
    the log records' detection counts)."""
    if _LAYOUT_HINT.search("\n".join(lines[:50])) is None:
        return False
    from scratch.formats.logformats import detect

    fmt, _, _ = detect(lines)
    return fmt is not None and fmt.name in _LAYOUT_FORMATS


# What the first bytes of common binary files say they are (their magic numbers)
_MAGIC: tuple[tuple[int, bytes, str], ...] = (
    (0, b"\x7fELF", "ELF executable or library"), (0, b"\x89PNG\r\n\x1a\n", "PNG image"),
    (0, b"GIF8", "GIF image"), (0, b"\xff\xd8\xff", "JPEG image"),
    (0, b"RIFF", "RIFF container (WAV, AVI, WebP)"), (0, b"%PDF-", "PDF document"),
    (0, b"\x1f\x8b", "gzip data"), (0, b"PK\x03\x04", "zip archive"),
    (0, b"BZh", "bzip2 data"), (0, b"\xfd7zXZ\x00", "xz data"),
    (0, b"(\xb5/\xfd", "zstd data"), (0, b"7z\xbc\xaf\x27\x1c", "7-zip archive"),
    (257, b"ustar", "tar archive"), (0, b"SQLite format 3\x00", "SQLite database"),
    (0, b"\x00asm", "WebAssembly module"), (0, b"\xca\xfe\xba\xbe", "Java class or Mach-O"),
    (0, b"\xcf\xfa\xed\xfe", "Mach-O executable"), (0, b"MZ", "Windows executable (PE)"),
    (0, b"OggS", "Ogg media"), (0, b"\x1aE\xdf\xa3", "Matroska/WebM media"),
    (4, b"ftyp", "MP4/QuickTime media"), (0, b"PAR1", "Parquet file"),
)


def binary_kind(head: bytes) -> str | None:
    """What a binary content is by its first bytes (at least 262 of them for a tar archive),
    or None when no known magic number starts it."""
    return next((what for at, magic, what in _MAGIC if head[at:at + len(magic)] == magic),
                None)


def is_binary(data: bytes) -> bool:
    if b"\x00" in data:
        return True
    sample = data[:8192]
    controls = len(sample) - len(sample.translate(None, _CONTROL))
    return controls > len(sample) // 10


def _decode(data: bytes, complete: bool) -> str | None:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A prefix may end in the middle of a character: only that is forgiven.
        if not complete and exc.start >= len(data) - 3 and exc.reason == "unexpected end of data":
            return data[: exc.start].decode("utf-8")
        return None


def _json_prefix_ok(text: str, complete: bool) -> bool:
    """True if ``text`` is a JSON object/array, or a valid start of one (cut by the prefix, or
    truncated: the normaliser then stores it as text with the parse error's position), or
    clearly JSON up to a syntax error (keys and values parsed before it)."""
    from scratch.errors import JsonError
    from scratch.reindent import reindent

    data = text.encode("utf-8")
    try:
        # strict JSON at any depth, numbers of any length; validation only (limit 0): the
        # layout of 64 KB of "[" would take 4 GB
        reindent(data, limit=0)
    except JsonError as exc:
        pos = exc.offset or 0
        if pos >= len(data.rstrip()) - 8:  # failed only because the text stops
            return True
        if exc.reason.startswith("Unterminated string"):
            return True
        return pos >= 64 and b'":' in data[:pos]
    return data.lstrip()[:1] in (b"{", b"[")


def _is_ndjson(text: str, complete: bool) -> bool:
    rows = [ln for ln in text.split("\n") if ln.strip()]
    if not complete and rows and not text.endswith("\n"):
        rows = rows[:-1]
    if len(rows) < 2:
        return False
    from orjson import loads

    bad = 0
    sample = rows[:_SAMPLE_LINES]
    for i, ln in enumerate(sample):
        s = ln.strip()
        ok = s[:1] in ("{", "[")
        if ok:
            try:
                loads(s)
            except ValueError:
                from scratch.jsonvalues import loads_exact
                try:
                    loads_exact(s)  # what orjson refuses but is JSON (1e400, big integers)
                except ValueError:  # JsonError
                    ok = False
        if not ok:
            if i == 0:
                return False
            bad += 1
    # The same tolerance as the NDJSON analysis: a few broken lines do not make it text.
    return bad * 10 <= len(sample)


def _yaml_candidates(text: str, complete: bool) -> list[str]:
    if complete:
        return [text]
    # Block structures close at the end of input, so cutting after the last complete line
    # usually parses; when it falls inside a flow collection or quoted scalar, cutting before
    # the last line that starts at column 0 is the fallback.
    out = [text[: text.rfind("\n") + 1]]
    m = None
    for m in re.finditer(r"\n(?=[^\s#])", text):  # noqa: B007 - keep the last match
        pass
    if m is not None and m.start() + 1 < len(out[0]):
        out.append(text[: m.start() + 1])
    return out


def _is_yaml(text: str, lines: list[str], complete: bool) -> bool:
    first = next((ln for ln in lines if ln.strip() and not ln.lstrip().startswith("#")), "")
    if not _YAML_FIRST.match(first):
        return False
    if not any(_YAML_KEY.match(ln.lstrip(" ")) for ln in lines[:_SAMPLE_LINES]):
        return False
    import yaml

    from scratch.formats.nesting import too_deep

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    for candidate in _yaml_candidates(text, complete):
        if too_deep(candidate.encode("utf-8")) is not None:
            # libyaml's flow parsing slows with the depth and its composer recurses: the
            # first lines say YAML, and the analysis stores it as text with the reason
            return True
        try:
            docs = list(yaml.load_all(candidate, Loader=loader))
        except (yaml.YAMLError, ValueError, RecursionError):
            # custom tags (!Ref) are still YAML; only syntax errors rule it out
            try:
                for _ in yaml.parse(candidate, Loader=loader):
                    pass
            except (yaml.YAMLError, ValueError, RecursionError):
                continue
            return True
        docs = [d for d in docs if d is not None]
        return bool(docs) and all(isinstance(d, (dict, list)) for d in docs)
    return False


def _csv_delimiter(text: str, lines: list[str], complete: bool) -> str | None:
    for sep in ("\t", ",", ";", "|"):
        if sep not in lines[0]:
            continue
        if _csv_ok(text, sep, complete):
            return sep
    return None


def _csv_ok(text: str, sep: str, complete: bool) -> bool:
    reader = csv.reader(text.splitlines()[:_SAMPLE_LINES + 1], delimiter=sep)
    try:
        rows = [r for r in reader if r]
    except csv.Error:
        return False
    if not complete and len(rows) > 2:
        rows = rows[:-1]
    if len(rows) < 2:
        return False
    width = len(rows[0])
    if width < 2 or any(len(r) != width for r in rows):
        return False
    header = [h.strip() for h in rows[0]]
    if any(not h for h in header) or any(_NUMERIC.match(h) for h in header):
        return False
    if sep != "\t" and any(len(h) > 100 for h in header):
        return False
    ts, _, _ = log_score([sep.join(rows[0])])
    return ts == 0.0


def _is_markdown(lines: list[str]) -> bool:
    headings = fences = lists = links = tables = 0
    hash_lines = comment_like = 0
    prev = ""
    for i, ln in enumerate(lines):
        if ln.startswith("#"):
            hash_lines += 1
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            # Shell/config comments come in runs and include bare "#" lines; headings don't.
            if ln.strip() == "#" or prev.startswith("#") or nxt.startswith("#") or "\t" in ln[:7]:
                comment_like += 1
        if _MD_HEADING.match(ln):
            headings += 1
        elif _MD_FENCE.match(ln):
            fences += 1
        elif _MD_LIST.match(ln):
            lists += 1
        elif _MD_TABLE.match(ln):
            tables += 1
        elif prev.strip() and _MD_SETEXT.match(ln) and len(ln.strip()) >= 3:
            headings += 1
        if _MD_LINK.search(ln):
            links += 1
        prev = ln
    if hash_lines and comment_like * 2 > hash_lines:
        return False
    others = fences + lists + links + tables
    return (headings > 0 and others >= 2) or fences >= 2
