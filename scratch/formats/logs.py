"""Timestamp and level recognition for log lines (shared by the sniffer and the log index).

A line "has a timestamp" when one of :data:`TIMESTAMP_FORMATS` matches within its first
:data:`TS_WINDOW` characters; a file's timestamp format is the one that matches the most of its
first lines. A line's level is the first level marker found near its start (see
:func:`line_level`); levels are reported under canonical names (:data:`LEVELS`, most severe
last).

Everything here is pure ``re`` on ``str``; nothing is imported lazily because the sniffer needs
it on every ingest and it is cheap.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence

TS_WINDOW = 80  # a timestamp must start within this many characters of the line start
LEVEL_WINDOW = 120  # a level word must start within this many characters

_MON = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_DAY = r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)"

# (name, pattern). Order matters on ties: specific formats before loose ones.
TIMESTAMP_FORMATS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("iso8601", re.compile(
        r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2}\b)?")),
    ("klog", re.compile(r"^[IWEF]\d{4} \d{2}:\d{2}:\d{2}\.\d+")),
    ("apache_access", re.compile(r"\[\d{2}/[A-Z][a-z]{2}/\d{4}:\d{2}:\d{2}:\d{2} [+-]\d{4}\]")),
    ("ctime", re.compile(_DAY + r" " + _MON + r" [ \d]\d \d{2}:\d{2}:\d{2}(?:\.\d+)?"
                         r"(?: [A-Z]{3,4})? \d{4}")),
    ("syslog", re.compile(_MON + r" [ \d]\d \d{2}:\d{2}:\d{2}(?:\.\d+)?")),
    ("ymd_slash", re.compile(r"\b\d{2,4}/\d{2}/\d{2}[ T]\d{2}:\d{2}:\d{2}")),
    ("yymmdd_hhmmss", re.compile(r"^\d{6} \d{6}\b")),
    ("md_time", re.compile(r"^\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}")),
    ("ymd_compact", re.compile(r"^\d{8}-\d{1,2}:\d{1,2}:\d{1,2}(?::\d{1,3})?")),
    ("bracket_md_time", re.compile(r"^\[\d{2}\.\d{2} \d{2}:\d{2}:\d{2}\]")),
    ("epoch", re.compile(r"(?<![\d.])1[0-9]{9}(?:\.\d+)?(?![\d.])")),
    ("time", re.compile(r"^\[?\d{2}:\d{2}:\d{2}(?:[.,]\d+)?\b")),
)
_TS_BY_NAME = dict(TIMESTAMP_FORMATS)

LEVELS: tuple[str, ...] = ("TRACE", "DEBUG", "INFO", "NOTICE", "WARN", "ERROR", "FATAL")
_CANON = {
    "TRACE": "TRACE", "TRC": "TRACE",
    "DEBUG": "DEBUG", "DBG": "DEBUG",
    "INFO": "INFO", "INF": "INFO", "INFORMATION": "INFO",
    "NOTICE": "NOTICE",
    "WARN": "WARN", "WARNING": "WARN", "WRN": "WARN",
    "ERROR": "ERROR", "ERR": "ERROR", "SEVERE": "ERROR", "FAILURE": "ERROR",
    "FATAL": "FATAL", "CRITICAL": "FATAL", "CRIT": "FATAL", "PANIC": "FATAL",
    "EMERG": "FATAL", "EMERGENCY": "FATAL", "ALERT": "FATAL",
}
_KLOG = {"I": "INFO", "W": "WARN", "E": "ERROR", "F": "FATAL"}
_LOGCAT = {"V": "TRACE", "D": "DEBUG", "I": "INFO", "W": "WARN", "E": "ERROR", "F": "FATAL"}

_WORDS = "|".join(sorted(_CANON, key=len, reverse=True))
# Level markers, scanned over whole blocks of lines, one pattern at a time: each starts with
# a literal, so the regex engine skips between candidates quickly (one alternation of all of
# them would be 3x slower). Boundaries before a match are checked in Python. (kind, pattern,
# substrings one of which must occur for the pattern to be tried at all.)
_MARKERS: tuple[tuple[str, re.Pattern[str], tuple[str, ...]], ...] = (
    ("up", re.compile(r"(?:" + _WORDS + r")(?![\w-])"), ()),
    ("br", re.compile(r"\[((?i:" + _WORDS + r"))\]"), ("[",)),
    ("kv", re.compile(r"(?:level|lvl|severity|loglevel)\"?[ \t]*[=:][ \t]*\"?([A-Za-z]+)"),
     ("level", "lvl", "severity")),
    ("klog", re.compile(r"\n([IWEF])\d{4} \d{2}:\d{2}:\d{2}"), ()),
    ("lc", re.compile(r"\n\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}\s+\d+\s+\d+ ([VDIWEF]) "), ()),
    ("title", re.compile(r", ((?i:" + _WORDS + r"))\b"), (", ",)),
)
_WORDISH = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


def _markers(t: str) -> list[tuple[int, str]]:
    """(position, canonical level) of every acceptable marker in ``t`` (which starts with
    ``"\\n"``), by position."""
    found: list[tuple[int, str]] = []
    for kind, pattern, needles in _MARKERS:
        if needles and not any(x in t for x in needles):
            continue
        for m in pattern.finditer(t):
            if kind == "up":
                gpos = m.start()
                if t[gpos - 1] in _WORDISH:
                    continue
                canon: str | None = _CANON[m.group()]
            else:
                gpos = m.start(1)
                word = m.group(1)
                if kind == "kv":
                    if t[m.start() - 1].isalnum():
                        continue
                    canon = _CANON.get(word.upper())
                elif kind == "klog":
                    canon = _KLOG[word]
                elif kind == "lc":
                    canon = _LOGCAT[word]
                elif kind == "title":
                    if not t[m.start() - 1].isdigit():
                        continue
                    canon = _CANON.get(word.upper())
                else:
                    canon = _CANON.get(word.upper())
            if canon is not None:
                found.append((gpos, canon))
    found.sort()
    return found


def iter_levels(text: str) -> Iterator[tuple[int, str]]:
    """(0-based line index, canonical level) for each line of ``text`` that carries a level
    marker starting within :data:`LEVEL_WINDOW` characters; the first marker of a line wins.
    ``text`` must start at the start of a line."""
    t = "\n" + text
    cur_pos = 0
    cur_line = -1
    last_line = -1
    for gpos, canon in _markers(t):
        cur_line += t.count("\n", cur_pos, gpos)
        cur_pos = gpos
        if cur_line == last_line:
            continue
        if gpos - (t.rfind("\n", 0, gpos) + 1) > LEVEL_WINDOW:
            continue
        last_line = cur_line
        yield cur_line, canon


def find_timestamp(line: str, pattern: re.Pattern[str]) -> str | None:
    """The timestamp text of ``line`` in one format, or None."""
    m = pattern.search(line, 0, TS_WINDOW + 40)
    if m is None or m.start() > TS_WINDOW:
        return None
    return m.group(0)


def timestamp_pattern(name: str) -> re.Pattern[str]:
    return _TS_BY_NAME[name]


def detect_timestamp_format(lines: Sequence[str]) -> tuple[str | None, int]:
    """(format name, number of lines it matched) over ``lines``; (None, 0) when none match."""
    best: tuple[str | None, int] = (None, 0)
    for name, pat in TIMESTAMP_FORMATS:
        n = 0
        for line in lines:
            m = pat.search(line, 0, TS_WINDOW + 40)
            if m is not None and m.start() <= TS_WINDOW:
                n += 1
        if n > best[1]:
            best = (name, n)
    return best


def line_level(line: str) -> str | None:
    """Canonical level of one log line (see :func:`iter_levels`), or None."""
    for _, level in iter_levels(line[: LEVEL_WINDOW + 32]):
        return level
    return None


def log_score(lines: Iterable[str]) -> tuple[float, float, str | None]:
    """(share of record lines with a timestamp, share with a level, timestamp format).

    Record lines are the non-blank lines that do not start with whitespace: continuation lines
    (stack traces, wrapped messages, GC details) are indented and carry no timestamp.
    """
    sample = [ln for ln in lines if ln.strip() and not ln[0].isspace()]
    if not sample:
        return 0.0, 0.0, None
    fmt, n_ts = detect_timestamp_format(sample)
    n_lv = sum(1 for ln in sample if line_level(ln) is not None)
    return n_ts / len(sample), n_lv / len(sample), fmt
