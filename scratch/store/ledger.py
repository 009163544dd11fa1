"""The call ledger: one JSON line per call answered, kept per agent in
``state/agents/<agent>/calls.jsonl`` (not versioned, never synced unless configured).

Each record (:class:`Record`) says when a call came, through which interface, from which agent
and session, what it asked (argument values cut to a bounded preview; the bodies of writes
never copied), how it ended (``ok``, ``refused`` or ``error`` with its code), the tokens it put
into the context and those it stored instead, the entry and version it touched and how long it
took, and the text the agent got back (``answer``: what the interface handed it, cut to a bound
set by the per-call cap, :func:`answer_preview`; absent when the call had no answer); a call
made as a worker of a run (:mod:`scratch.runs`) also names the run and its iteration (and
``coordinator`` for a coordinator's). A usage event (a worker finished: ``event``
``scratchpad_usage``) is a record too, its figures under ``args``, charging nothing.

Invariants:
- Standard library and orjson only (plus scratch's own small helpers): importable without the
  CLI, MCP or HTTP stacks.
- :func:`append` never raises: a full disk, a read-only store or a symlink placed in the store
  costs the record, never the answer. It writes one line with one ``write()`` on an
  ``O_APPEND`` descriptor, under the ledger's lock (so ``seq`` is unique and increasing).
- The file is 0600, opened without following links (a link placed there is refused).
- Redacted in one place: :func:`_append` passes the whole record, every string value in it
  (whatever fields a record grows; field and argument names are kept), through
  :func:`scratch.redact.redact_value` with the store's marker key before it is written: a
  call's own arguments that carried a token (``run -- curl -H "Authorization: Bearer ..."``)
  reach the file as markers.
- Bounded: when the file passes ``max_bytes`` its oldest lines are dropped (cut at a line
  boundary, keeping about three quarters of ``max_bytes`` so the rewrite is rare), the file
  replaced atomically, and the number of records dropped so far added up in ``calls.dropped``
  beside it (:func:`dropped`).
- ``seq`` counts an agent's calls from 1, dropped ones included: the next is one past the last
  line's (or past the dropped count when the file is empty).
- A line that does not parse, or whose record lacks a field or holds one of the wrong type (a
  torn write, an edit), is skipped by readers and counted (:func:`scan`), never fatal.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Literal, NotRequired, TypedDict, TypeGuard

import orjson

VERSION = 1
FILE_NAME = "calls.jsonl"
DROPPED_NAME = "calls.dropped"
LOCK_NAME = ".calls.lock"
DEFAULT_MAX_BYTES = 8 * 1024 * 1024
KEEP_SHARE = 0.75  # of max_bytes, kept when the file is cut
PREVIEW_CHARS = 200
MESSAGE_CHARS = 300
PREVIEW_ITEMS = 10  # items of a list argument kept in its preview
TAIL_BYTES = 4096  # read from the end to find the last seq (more when the last line is longer)
TAIL_MAX = 1 << 22  # read back at most this far before reading the whole file
ANSWER_CHARS_PER_TOKEN = 6  # an answer is kept up to this many characters a token of the cap
ANSWER_CAP_DEFAULT = 10_000  # the cap the bound assumes when the per-call cap is off (0)

Interface = Literal["cli", "mcp-stdio", "mcp-http", "proxy", "hook"]
Outcome = Literal["ok", "refused", "error"]
INTERFACES: tuple[str, ...] = ("cli", "mcp-stdio", "mcp-http", "proxy", "hook")
OUTCOMES: tuple[str, ...] = ("ok", "refused", "error")
# an argument as the ledger keeps it: a JSON value, strings cut to a preview
ArgPreview = str | int | float | bool | None | list["ArgPreview"] | dict[str, "ArgPreview"]


class Suggestion(TypedDict):
    command: str
    args: dict[str, ArgPreview]


class Tally(TypedDict):
    """Calls counted under one key (a command, a session): how many, how they ended, the
    tokens they charged and intercepted, their milliseconds in all."""

    calls: int
    refused: int
    errors: int
    tokens: int
    intercepted: int
    ms: float


class Record(TypedDict):
    v: int
    seq: int
    time: str
    interface: str
    agent: str
    session: str
    command: str
    args: dict[str, ArgPreview]
    outcome: str
    code: str | None
    message: str | None
    suggestions: list[Suggestion]
    tokens: int
    intercepted: int
    entry: str | None
    version: int | None
    ms: float
    answer: NotRequired[str]  # what the agent got back (answer_preview), when it got an answer
    unredacted: NotRequired[str]  # a capture stored without redaction: why (flag, setting)
    # only when set: a call of a worker of a run, and a usage event (scratch.runs)
    run: NotRequired[str]
    iteration: NotRequired[int]
    coordinator: NotRequired[bool]
    event: NotRequired[str]


__all__ = ["DEFAULT_MAX_BYTES", "INTERFACES", "OUTCOMES", "Record", "Suggestion", "Tally",
           "agents", "answer_preview", "append", "count", "dropped", "file_bytes",
           "ledger_file", "make",
           "message_preview", "now", "parse_since", "preview", "preview_args", "read", "scan",
           "parsed_lines", "scrub", "sessions", "tally"]


# -- building a record ----------------------------------------------------------------------

def now() -> str:
    """The current UTC time as the ledger writes it: ``2026-12-02T00:41:07.123Z``."""
    t = time.time()
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t))
    return f"{stamp}.{int(t * 1000) % 1000:03d}Z"


def preview(value: object, limit: int = PREVIEW_CHARS) -> ArgPreview:
    """``value`` cut to a bounded preview: strings to ``limit`` characters (ending in "…"),
    lists to their first items, mappings to previews of their values; other values as text."""
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        return value if len(value) <= limit else value[:limit - 1] + "…"
    if isinstance(value, (bytes, bytearray)):
        return f"<{len(value)} bytes>"
    if isinstance(value, Mapping):
        out: dict[str, ArgPreview] = {}
        for i, (k, v) in enumerate(value.items()):
            if i >= PREVIEW_ITEMS:
                out["…"] = f"{len(value) - PREVIEW_ITEMS} more"
                break
            out[str(k)[:limit]] = preview(v, limit)
        return out
    if isinstance(value, (list, tuple)):
        items: list[ArgPreview] = [preview(v, limit) for v in value[:PREVIEW_ITEMS]]
        if len(value) > PREVIEW_ITEMS:
            items.append(f"… {len(value) - PREVIEW_ITEMS} more")
        return items
    return preview(str(value), limit)


def preview_args(args: Mapping[str, object], *, bodies: Iterable[str] = ()
                 ) -> dict[str, ArgPreview]:
    """Each argument cut to a preview; those named in ``bodies`` (the content of a write) are
    never copied, only their size in characters (or bytes) noted; None values left out."""
    skip = frozenset(bodies)
    out: dict[str, ArgPreview] = {}
    for key, value in args.items():
        if value is None:
            continue
        if key in skip:
            size = len(value) if isinstance(value, (str, bytes, bytearray)) else None
            out[key] = f"<{size} chars>" if isinstance(value, str) else (
                f"<{size} bytes>" if size is not None else "<body>")
            continue
        out[key] = preview(value)
    return out


def message_preview(message: str | None) -> str | None:
    """The first line of ``message``, at most :data:`MESSAGE_CHARS` characters."""
    if not message:
        return None
    first = message.strip().split("\n", 1)[0]
    return first if len(first) <= MESSAGE_CHARS else first[:MESSAGE_CHARS - 1] + "…"


def answer_preview(text: str, cap: int) -> str:
    """An answer's text as the ledger keeps it: whole up to :data:`ANSWER_CHARS_PER_TOKEN`
    characters a token of the per-call cap ``cap`` (0 or less: of
    :data:`ANSWER_CAP_DEFAULT`), else cut there with a line saying how much is not kept. An
    answer the cap let through (text runs 2-5 characters a token) is nearly always whole."""
    limit = ANSWER_CHARS_PER_TOKEN * (cap if cap > 0 else ANSWER_CAP_DEFAULT)
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… ({len(text) - limit:,} more characters not kept)"


def make(*, interface: str, agent: str, session: str, command: str,
         args: dict[str, ArgPreview] | None = None, outcome: str = "ok", code: str | None = None,
         message: str | None = None, suggestions: list[Suggestion] | None = None,
         tokens: int = 0, intercepted: int = 0, entry: str | None = None,
         version: int | None = None, ms: float = 0.0, at: str | None = None,
         answer: str | None = None, run: str | None = None, iteration: int | None = None,
         coordinator: bool = False, event: str | None = None) -> Record:
    """A record (``seq`` 0 until :func:`append` numbers it); ``answer`` is kept as given (cut
    it with :func:`answer_preview`); ``answer``, ``run``, ``iteration``, ``coordinator`` and
    ``event`` are written only when set."""
    rec = Record(v=VERSION, seq=0, time=at or now(), interface=interface, agent=agent,
                 session=session, command=command, args=args or {}, outcome=outcome,
                 code=code, message=message_preview(message), suggestions=suggestions or [],
                 tokens=int(tokens), intercepted=int(intercepted), entry=entry,
                 version=version, ms=round(float(ms), 2))
    if answer is not None:
        rec["answer"] = answer
    if run is not None:
        rec["run"] = run
        if iteration is not None:
            rec["iteration"] = int(iteration)
        if coordinator:
            rec["coordinator"] = True
    if event is not None:
        rec["event"] = event
    return rec


# -- where it lives -------------------------------------------------------------------------

def agent_dir(root: Path, agent: str) -> Path:
    return root / "state" / "agents" / agent


def ledger_file(root: Path, agent: str) -> Path:
    return agent_dir(root, agent) / FILE_NAME


_READY: dict[tuple[str, str], tuple[Path, Path, Path]] = {}  # made and checked once


def _ensure(root: Path, agent: str) -> tuple[Path, Path, Path]:
    """The agent's directory (made as needed, never through a link), its ledger and lock."""
    from scratch.safefs import check_dirs, ensure_dir
    key = (os.fspath(root), agent)
    found = _READY.get(key)
    if found is not None:
        check_dirs(root, found[1])  # one lstat when unchanged (see safefs)
        return found
    directory = ensure_dir(root, agent_dir(root, agent))
    if len(_READY) > 1024:
        _READY.clear()
    found = _READY[key] = (directory, directory / FILE_NAME, directory / LOCK_NAME)
    return found


# -- the one line reader ---------------------------------------------------------------------

class _Torn:
    """What :func:`parsed_lines` yields for a line that is not JSON."""

    def __repr__(self) -> str:
        return "TORN"


TORN = _Torn()


def parsed_lines(data: bytes) -> Iterator[object]:
    """Each line of ledger text ``data`` parsed, in order: its JSON value, or :data:`TORN`
    for a line that does not parse (a torn write, an edit); blank lines are passed over. Every
    reader of the file (:func:`scan`, :func:`scrub`, the last ``seq``) goes through here, so
    they agree on what a line is; each decides what a torn line or a value that is no record
    costs it."""
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        try:
            yield orjson.loads(raw)
        except orjson.JSONDecodeError:
            yield TORN


# -- writing --------------------------------------------------------------------------------

def append(root: Path, record: Record, *, max_bytes: int = DEFAULT_MAX_BYTES) -> int:
    """Append ``record`` to its agent's ledger, numbering it; returns its ``seq`` (0 when it
    could not be written). Never raises (see the module docstring)."""
    try:
        try:
            return _append(root, record, max_bytes)
        except FileNotFoundError:  # its directory went away since this process made it
            _READY.pop((os.fspath(root), record["agent"]), None)
            return _append(root, record, max_bytes)
    except Exception:  # noqa: BLE001 - the record is lost, never the answer
        return 0


def _append(root: Path, record: Record, max_bytes: int) -> int:
    from scratch.safefs import O_CLOEXEC, O_NOFOLLOW, check_fd
    from scratch.store.locking import exclusive
    directory, path, lock = _ensure(root, record["agent"])
    with exclusive(lock):
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        try:
            size = check_fd(fd, root, path).st_size
            last, torn = _last_seq(fd, size)
            if last is None:
                last = _read_dropped(directory)
            record["seq"] = last + 1
            line = orjson.dumps(_redacted(root, record)) + b"\n"
            if torn:  # a line a killed writer left unfinished: end it, so ours stands alone
                line = b"\n" + line
            written = os.write(fd, line)
            if written != len(line):
                return 0
            size += written
        finally:
            os.close(fd)
        if max_bytes > 0 and size > max_bytes:
            _cut(root, directory, path, max_bytes)
    return record["seq"]


def _redacted(root: Path, record: Record) -> object:
    """``record`` with every string in it redacted (see the module docstring): the one place
    the ledger's write path redacts, so fields added to records later are covered too."""
    from scratch.redact.core import redact_value
    from scratch.redact.markers import store_key
    return redact_value(record, store_key(root))


def _last_seq(fd: int, size: int) -> tuple[int | None, bool]:
    """The last record's seq in the open ledger (None if there is none), and whether the file
    ends mid-line. Reads back from the end only as far as the last whole record (a record
    keeping a long answer is longer than the first read)."""
    if size == 0:
        return None, False
    torn = os.pread(fd, 1, size - 1) != b"\n"
    want = TAIL_BYTES
    while True:
        start = max(0, size - want)
        lines = os.pread(fd, size - start, start).split(b"\n")
        if start > 0:
            lines = lines[1:]  # the first may be the end of a longer line
        for raw in reversed(lines):
            seq = _seq_of(raw)
            if seq is not None:
                return seq, torn
        if start == 0:
            return None, torn
        if want >= TAIL_MAX:  # no whole record in the last TAIL_MAX bytes: read them all
            return _last_seq_slow(fd), torn
        want *= 8


def _seq_of(raw: bytes) -> int | None:
    for value in parsed_lines(raw):
        return _seq_in(value)
    return None


def _seq_in(value: object) -> int | None:
    seq = value.get("seq") if isinstance(value, dict) else None
    return seq if isinstance(seq, int) and not isinstance(seq, bool) else None


def _last_seq_slow(fd: int) -> int | None:
    from scratch.safefs import read_fd
    found = None
    for value in parsed_lines(read_fd(os.dup(fd))):
        seq = _seq_in(value)
        if seq is not None:
            found = seq
    return found


def _read_dropped(directory: Path) -> int:
    try:
        raw = (directory / DROPPED_NAME).read_bytes()
        value = orjson.loads(raw)
    except (OSError, orjson.JSONDecodeError):
        return 0
    number = value.get("dropped") if isinstance(value, dict) else value
    return number if isinstance(number, int) and not isinstance(number, bool) and number > 0 else 0


def _cut(root: Path, directory: Path, path: Path, max_bytes: int) -> None:
    """Drop the oldest lines so about :data:`KEEP_SHARE` of ``max_bytes`` stays; count them.
    The caller holds the ledger's lock."""
    from scratch.safefs import read_file
    from scratch.store.locking import atomic_write
    data = read_file(root, path)
    keep = int(max_bytes * KEEP_SHARE)
    if len(data) <= keep:
        return
    cut = data.find(b"\n", len(data) - keep - 1)
    kept = b"" if cut < 0 else data[cut + 1:]
    gone = data[:len(data) - len(kept)]
    lost = sum(1 for raw in gone.split(b"\n") if raw.strip())
    total = _read_dropped(directory) + lost
    atomic_write(directory / DROPPED_NAME, orjson.dumps({"dropped": total}), fsync=False)
    atomic_write(path, kept, fsync=False)
    os.chmod(path, 0o600)


# the fields a scrubbed record keeps (scrub): none of them can hold what a call read or wrote
SCRUB_KEEPS = ("v", "seq", "time", "interface", "agent", "session", "command", "outcome", "code",
               "tokens", "intercepted", "entry", "version", "ms")
# what readers see of the fields scrub took (scan): a scrubbed record is still a call, counted
SCRUBBED: dict[str, object] = {"args": {}, "message": None, "suggestions": []}


def scrub(root: Path, agent: str, picks: Callable[[Record], bool], mark: str) -> int:
    """Empty the records of ``agent``'s ledger that ``picks`` chooses (``scratch purge``):
    each keeps only :data:`SCRUB_KEEPS` (its seq, time, outcome and counts, so ``seq`` and the
    tallies stay true) plus ``"purged": mark``; its arguments, message, suggestions and any
    other field go. Under the ledger's lock, the file replaced atomically; how many records
    were scrubbed. Lines that do not parse are dropped too (they could hold anything). A reader
    (:func:`scan`) sees a scrubbed record with empty arguments, message and suggestions."""
    from scratch.safefs import read_file
    from scratch.store.locking import atomic_write, exclusive
    directory = agent_dir(root, agent)
    path = directory / FILE_NAME
    if not path.is_file():
        return 0
    with exclusive(directory / LOCK_NAME):
        data = read_file(root, path)
        out: list[bytes] = []
        changed = 0
        for value in parsed_lines(data):
            if value is TORN:
                changed += 1
                continue
            if isinstance(value, dict) and picks(value):  # type: ignore[arg-type]
                value = {k: value.get(k) for k in SCRUB_KEEPS} | {"purged": mark}
                changed += 1
            out.append(orjson.dumps(value))
        if changed:
            atomic_write(path, b"".join(line + b"\n" for line in out), fsync=True)
            os.chmod(path, 0o600)
    return changed


# -- reading --------------------------------------------------------------------------------

def agents(root: Path) -> list[str]:
    """The agents that have a ledger, sorted."""
    base = root / "state" / "agents"
    try:
        names = os.listdir(base)
    except OSError:
        return []
    return sorted(n for n in names if os.path.isfile(base / n / FILE_NAME)
                  and not os.path.islink(base / n))


_TEXT = (str,)
_TEXT_OR_NONE = (str, type(None))
# each field of a record and the types it may hold (bool is no int here: checked apart)
_FIELDS: tuple[tuple[str, tuple[type, ...]], ...] = (
    ("v", (int,)), ("seq", (int,)), ("time", _TEXT), ("interface", _TEXT), ("agent", _TEXT),
    ("session", _TEXT), ("command", _TEXT), ("args", (dict,)), ("outcome", _TEXT),
    ("code", _TEXT_OR_NONE), ("message", _TEXT_OR_NONE), ("suggestions", (list,)),
    ("tokens", (int,)), ("intercepted", (int,)), ("entry", _TEXT_OR_NONE),
    ("version", (int, type(None))), ("ms", (int, float)))


def well_formed(value: object) -> TypeGuard[Record]:
    """Whether ``value`` is a record as :func:`append` writes them: every field there with a
    value of its type (more fields, from a later release, are allowed)."""
    if not isinstance(value, dict):
        return False
    for key, kinds in _FIELDS:
        field = value.get(key, ...)
        if not isinstance(field, kinds) or isinstance(field, bool):
            return False
    if not all(isinstance(s, dict) and isinstance(s.get("command"), str)
               and isinstance(s.get("args"), dict) for s in value["suggestions"]):
        return False
    return isinstance(value.get("answer", ""), str)


def scan(root: Path, agent: str) -> tuple[list[Record], int]:
    """``agent``'s well-formed records, oldest first, and how many lines were skipped: not
    JSON, or not a record (:func:`well_formed`) -- a torn write, an edit."""
    from scratch.errors import ScratchError
    from scratch.safefs import read_file
    try:
        data = read_file(root, ledger_file(root, agent))
    except (OSError, ScratchError):
        return [], 0
    found: list[Record] = []
    skipped = 0
    for value in parsed_lines(data):
        if isinstance(value, dict) and isinstance(value.get("purged"), str):
            value = {**SCRUBBED, **value}  # scrub took what it asked: a record still
        if well_formed(value):  # TORN is no record
            found.append(value)
        else:
            skipped += 1
    return found, skipped


def _lines(root: Path, agent: str) -> Iterator[Record]:
    yield from scan(root, agent)[0]


def parse_since(since: str | datetime | timedelta, *, at: datetime | None = None) -> str:
    """``since`` as the ledger's time text: a datetime, a duration before now (``timedelta``
    or text ``90s``, ``10m``, ``2h``, ``3d``), or an ISO time (``2026-12-02T00:41``, a date,
    ``...Z`` or with an offset; no offset means UTC). Raises ValueError on anything else."""
    base = at or datetime.now(UTC)
    if isinstance(since, timedelta):
        moment = base - since
    elif isinstance(since, datetime):
        moment = since
    else:
        text = since.strip()
        units = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
        if len(text) > 1 and text[-1] in units and text[:-1].replace(".", "", 1).isdigit():
            moment = base - timedelta(seconds=float(text[:-1]) * units[text[-1]])
        else:
            moment = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _matching(root: Path, agent: str | None, session: str | None,
              since: str | datetime | timedelta | None) -> list[Record]:
    floor = None if since is None else parse_since(since)
    names = agents(root) if agent is None else [agent]
    found: list[Record] = []
    for name in names:
        for rec in _lines(root, name):
            if session is not None and rec.get("session") != session:
                continue
            if floor is not None and rec["time"] < floor:
                continue
            found.append(rec)
    if agent is None and len(names) > 1:
        found.sort(key=lambda r: (r["time"], r.get("agent", ""), r["seq"]))
    return found


def read(root: Path, *, agent: str | None = None, session: str | None = None,
         since: str | datetime | timedelta | None = None, offset: int = 0,
         limit: int | None = None) -> list[Record]:
    """The records matching (one agent's, or every agent's merged by time), newest last.
    ``offset`` skips that many of the newest, ``limit`` keeps at most that many of the rest
    (the newest of them): ``limit=20`` is the last 20 calls, ``offset=20, limit=20`` the 20
    before them."""
    found = _matching(root, agent, session, since)
    end = len(found) - max(0, offset)
    if end <= 0:
        return []
    start = 0 if limit is None else max(0, end - max(0, limit))
    return found[start:end]


def count(root: Path, *, agent: str | None = None, session: str | None = None,
          since: str | datetime | timedelta | None = None) -> int:
    """How many records match (before any offset or limit)."""
    return len(_matching(root, agent, session, since))


def file_bytes(root: Path, agent: str) -> int:
    """The bytes of ``agent``'s ledger on disk (its records, kept answers included; 0 when it
    has none): what the ledger adds to the store's size, bounded by ``ledger.max_bytes``."""
    try:
        return os.lstat(ledger_file(root, agent)).st_size
    except OSError:
        return 0


def dropped(root: Path, agent: str | None = None) -> int:
    """How many of ``agent``'s records (every agent's when None) were dropped to keep the
    ledger within its bound."""
    names = agents(root) if agent is None else [agent]
    return sum(_read_dropped(agent_dir(root, name)) for name in names)


def tally(records: Iterable[Record], by: Literal["command", "session", "interface"]
          ) -> dict[str, Tally]:
    """``records`` counted by their command, session or interface (keys sorted)."""
    out: dict[str, Tally] = {}
    for rec in records:
        key = str(rec.get(by))
        t = out.get(key)
        if t is None:
            t = out[key] = Tally(calls=0, refused=0, errors=0, tokens=0, intercepted=0, ms=0.0)
        t["calls"] += 1
        outcome = rec.get("outcome")
        t["refused"] += outcome == "refused"
        t["errors"] += outcome == "error"
        t["tokens"] += int(rec.get("tokens") or 0)
        t["intercepted"] += int(rec.get("intercepted") or 0)
        t["ms"] = round(t["ms"] + float(rec.get("ms") or 0), 2)
    return dict(sorted(out.items()))


def sessions(root: Path, agent: str) -> list[str]:
    """The sessions in ``agent``'s ledger, in the order they first appear."""
    seen: dict[str, None] = {}
    for rec in _lines(root, agent):
        seen.setdefault(str(rec.get("session")), None)
    return list(seen)
