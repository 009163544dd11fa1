"""Redacting content: bytes, a file, a short text, a ledger record.

Invariants:
- A found value is replaced by its marker (:mod:`scratch.redact.markers`) in text; in binary
  content (a NUL in its first 8 KB) by as many ``*`` as it has bytes, so offsets and size stay.
- Everything else is kept byte for byte: lines, line numbers (a marker holds no newline; a
  secret spanning lines, a private key block, leaves its marker on its first line and the
  line count drops by the lines it spanned), JSON validity and CSV columns.
- A big file is read through maps of :data:`BLOCK` bytes at a time (overlapping by
  :data:`OVERLAP`), so memory stays bounded whatever its size; a file with nothing found is
  not copied.
- Finding and replacing are apart for files: :func:`scan_file` (or :class:`FileScan`, the
  same scan in a child process, beside the caller's own work) finds, :func:`write_redacted`
  replaces what was found; :func:`redact_file` is the two in turn. The finds are the same
  whichever runs them.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, overload

from scratch.redact.markers import MARKER_BYTES_RE, marker
from scratch.redact.records import Finding, Redaction
from scratch.redact.rules import Buffer
from scratch.redact.scan import Allowed, Hit, scan, scan_text

BLOCK = 32 << 20
OVERLAP = 128 << 10
SNIFF = 8192


@dataclass(frozen=True)
class Redacted:
    """Content after redaction, and the record of what was done."""

    data: bytes
    redaction: Redaction


def _rule_set_name() -> str:
    from scratch.redact.rules import rule_set
    return rule_set().source


def _is_binary(head: bytes) -> bool:
    return b"\x00" in head[:SNIFF]


def _hits(buf: Buffer, allowed: Allowed | None, kube_ok: bool = True
          ) -> tuple[list[Hit], list[str]]:
    """Every find in ``buf`` (bytes or a map), the Kubernetes pass included when needed."""
    size = len(buf)
    memo: dict[bytes, list[Hit]] = {}
    if size <= BLOCK + OVERLAP:
        found = scan(buf, allowed=allowed, memo=memo)
        hits, kube = found.hits, found.kube_secret
    else:
        hits, kube = [], False
        for lo in range(0, size, BLOCK):
            found = scan(buf, lo, min(size, lo + BLOCK), allowed=allowed, memo=memo)
            hits.extend(found.hits)
            kube = kube or found.kube_secret
            _release(buf, lo, min(size, lo + BLOCK))
    missed: list[str] = []
    if kube and kube_ok:
        from scratch.redact import kube as kube_pass
        from scratch.redact.scan import resolve
        if size <= kube_pass.MAX_DOCUMENT:
            extra, missed = kube_pass.find(bytes(buf))
            hits = resolve([*hits, *extra])
        else:
            missed = [f"a Kubernetes Secret in an output over {kube_pass.MAX_DOCUMENT:,} "
                      "bytes: its values are found only by the other rules"]
    unique = {(h.start, h.end): h for h in (_outside_escapes(buf, h) for h in hits) if h}
    return sorted(unique.values(), key=lambda h: h.start), missed


def _outside_escapes(buf: Buffer, hit: Hit) -> Hit | None:
    """``hit`` without a backslash escape cut in two: a rule whose pattern ends with a class
    that takes ``\\`` (gitleaks' jwt does) took the backslash of ``\\"`` in a JSON string
    holding a quoted token, and the marker left a bare ``"`` that ended the string. A value
    never starts on an escaped character nor ends on the escape that a character after it
    needs."""
    start, end = hit.start, hit.end
    while end > start and buf[end - 1] == 0x5C:  # a trailing backslash
        end -= 1
    before = 0
    while start - before > 0 and buf[start - before - 1] == 0x5C:
        before += 1
    if before % 2:  # the first byte is the escaped one: it goes with its backslash
        start += 1
    if end <= start:
        return None
    if (start, end) == (hit.start, hit.end):
        return hit
    from dataclasses import replace
    return replace(hit, start=start, end=end)


def _release(buf: Buffer, lo: int, hi: int) -> None:
    """Let the pages of a map's block that was read go (they stay in the page cache, out of
    this process's resident set): a 200 MB file scanned is not 200 MB of RSS."""
    if isinstance(buf, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED"):
        buf.madvise(mmap.MADV_DONTNEED, lo, hi - lo)


def _finding(hit: Hit, mark: str, line: int) -> Finding:
    out: Finding = {"rule": hit.rule, "line": line, "marker": mark}
    if hit.path:
        out["path"] = hit.path
    if hit.key:
        out["key"] = hit.key
    return out


class _Sink(Protocol):
    """Where redacted bytes are written: a file opened for writing, or :class:`_Parts`."""

    def write(self, data: bytes, /) -> object: ...


def _apply(buf: Buffer, hits: list[Hit], key: bytes, binary: bool, out: _Sink
           ) -> list[Finding]:
    """Write ``buf`` with each hit replaced to ``out`` (a file or a list of parts); the
    findings with their lines in what was written."""
    findings: list[Finding] = []
    pos = 0
    line = 1
    for hit in hits:
        if hit.start < pos:
            continue
        segment = buf[pos:hit.start]  # bytes (a map has no count of its own)
        line += segment.count(b"\n")
        out.write(segment)
        value = bytes(buf[hit.start:hit.end])
        mark = marker(hit.rule, value, key)
        out.write(b"*" * len(value) if binary else mark.encode("utf-8"))
        findings.append(_finding(hit, mark, line))
        pos = hit.end
    out.write(buf[pos:])
    return findings


class _Parts:
    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def write(self, data: bytes, /) -> None:
        self.parts.append(bytes(data))


def redact_bytes(data: bytes, key: bytes, *, allowed: Allowed | None = None) -> Redacted:
    """``data`` with every value found replaced by its marker, and the findings (lines in the
    result)."""
    if not data:
        return Redacted(data, Redaction(rule_set=_rule_set_name()))
    hits, missed = _hits(data, allowed)
    if not hits:
        return Redacted(data, Redaction(missed=tuple(missed), rule_set=_rule_set_name()))
    parts = _Parts()
    findings = _apply(data, hits, key, _is_binary(data), parts)
    return Redacted(b"".join(parts.parts), Redaction(tuple(findings), missed=tuple(missed),
                                                    rule_set=_rule_set_name()))


def redact_file(source: Path, target: Path, key: bytes, *,
                allowed: Allowed | None = None) -> Redaction | None:
    """Redact the file ``source`` into ``target``; None (and ``target`` untouched) when
    nothing was found, so the caller keeps ``source``. Memory stays bounded (see module)."""
    if source.stat().st_size == 0:
        return None
    with open(source, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        hits, missed = _hits(buf, allowed)
    return write_redacted(source, target, key, hits, missed)


def write_redacted(source: Path, target: Path, key: bytes, hits: list[Hit],
                   missed: list[str]) -> Redaction | None:
    """``source`` with ``hits`` (its finds, :func:`scan_file` or :class:`FileScan`) replaced
    by their markers, into ``target``; None (and ``target`` untouched) when there are neither
    hits nor missed values (see :func:`redact_file`)."""
    if not hits:
        return None if not missed else Redaction(missed=tuple(missed),
                                                 rule_set=_rule_set_name())
    with open(source, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        binary = _is_binary(buf[:SNIFF])
        with open(target, "wb") as out:
            findings = _apply(buf, hits, key, binary, out)
            out.flush()
            os.fsync(out.fileno())
    return Redaction(tuple(findings), missed=tuple(missed), rule_set=_rule_set_name())


def scan_file(source: Path, allow: tuple[str, ...] = ()) -> tuple[list[Hit], list[str]]:
    """The finds in the file ``source`` (what :func:`redact_file` replaces) and the Secret
    values the document pass saw but could not place; ``allow``: the user's allowlist
    (:attr:`scratch.redact.policy.Policy.allow`)."""
    if source.stat().st_size == 0:
        return [], []
    from scratch.redact.policy import Policy
    allowed = Policy(True, "", allow).allowed()
    with open(source, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        return _hits(buf, allowed)


class FileScan:
    """:func:`scan_file` of a file on the other core: a child process (a thread would hold
    the GIL for its Python part, between each of the prefilter's hits, against the caller's
    own work) started at once; :meth:`result` waits for its answer. Ingest normalises the
    input meanwhile and stores nothing before the answer (:mod:`scratch.answers.capture.ingest`).

    The answer is only ever the child's complete one or, when the child fails (it cannot
    start, is killed, says something unreadable), the same scan run here: never none.
    :meth:`result` may be called from several threads; :meth:`close` ends the child."""

    def __init__(self, source: Path, allow: tuple[str, ...] = ()) -> None:
        import subprocess
        import threading

        from scratch.children import start_child

        self.source = source
        self.allow = allow
        self._lock = threading.Lock()
        self._answer: tuple[list[Hit], list[str]] | None = None
        self.answered_by: str | None = None  # "child" or "here", once answered
        self._closed = False
        self._child: subprocess.Popen[bytes] | None = None
        try:
            self._child = start_child("scratch.redact.core", [str(source)],
                                      stdin=subprocess.PIPE)
            assert self._child.stdin is not None
            with self._child.stdin as feed:
                feed.write(_json_dumps(list(allow)))
        except OSError:  # no child (or it died at once): the scan runs here when asked
            self._end_child()

    def result(self) -> tuple[list[Hit], list[str]]:
        """The finds and the values missed (as :func:`scan_file`), once the scan is done."""
        answer = self._settled(here=True)
        assert answer is not None
        return answer

    def found_nothing(self) -> bool:
        """For a gate: True once the scan is done and found nothing to replace; False when it
        found something, or was given up (:meth:`close`) before its answer."""
        answer = self._settled(here=False)
        return answer is not None and not answer[0]

    def _settled(self, here: bool) -> tuple[list[Hit], list[str]] | None:
        """The answer: the child's, else (``here``, or not given up) the scan run here."""
        with self._lock:
            if self._answer is None:
                self._answer = self._child_answer()
                if self._answer is not None:
                    self.answered_by = "child"
                elif here or not self._closed:
                    self._answer, self.answered_by = scan_file(self.source, self.allow), "here"
            return self._answer

    def _child_answer(self) -> tuple[list[Hit], list[str]] | None:
        child, self._child = self._child, None
        if child is None:
            return None
        from scratch.children import child_output

        out = child_output(child)
        return None if out is None else _read_answer(out)

    def close(self) -> None:
        """End the child if it still runs (the caller gave up, e.g. on an error): a gate
        waiting for the answer then stays shut (:meth:`found_nothing`)."""
        self._closed = True
        self._end_child()

    def _end_child(self) -> None:
        child, self._child = self._child, None
        if child is not None:
            from scratch.children import end_child

            end_child(child)


def _json_dumps(value: object) -> bytes:
    import json
    return json.dumps(value, separators=(",", ":")).encode("utf-8")


def _read_answer(out: bytes) -> tuple[list[Hit], list[str]] | None:
    """The child's answer (:func:`_child_main`), or None when it is not one."""
    import json
    try:
        got = json.loads(out)
        hits = [Hit(int(h[0]), int(h[1]), str(h[2]), int(h[3]),
                    None if h[4] is None else str(h[4]), None if h[5] is None else str(h[5]))
                for h in got["hits"]]
        missed = [str(m) for m in got["missed"]]
    except (ValueError, KeyError, TypeError, IndexError):
        return None
    return hits, missed


def _child_main(argv: list[str]) -> int:
    """``python -m scratch.redact.core FILE`` (the allowlist as a JSON list on stdin): the
    finds in FILE as one JSON object on stdout (see :class:`FileScan`)."""
    import json
    import sys
    allow = tuple(str(p) for p in json.loads(sys.stdin.buffer.read() or b"[]"))
    hits, missed = scan_file(Path(argv[0]), allow)
    sys.stdout.buffer.write(_json_dumps({
        "hits": [[h.start, h.end, h.rule, h.priority, h.key, h.path] for h in hits],
        "missed": missed}))
    sys.stdout.buffer.flush()
    return 0


def relocate(redaction: Redaction, content: Path | Buffer) -> Redaction:
    """The findings with the lines their markers are on in ``content`` (the stored form, which
    may be laid out anew, e.g. pretty-printed JSON): the markers are found in order."""
    if not redaction.findings:
        return redaction
    if isinstance(content, Path):
        if content.stat().st_size == 0:
            return redaction
        with open(content, "rb") as fh, mmap.mmap(fh.fileno(), 0,
                                                  access=mmap.ACCESS_READ) as view:
            return relocate(redaction, view)
    pending = list(redaction.findings)
    out: list[Finding] = []
    line, pos = 1, 0
    for m in MARKER_BYTES_RE.finditer(content):
        if not pending:
            break
        text = m.group(0).decode("utf-8")
        if text != pending[0]["marker"]:
            continue  # a marker that was in the input already
        line += content[pos:m.start()].count(b"\n")
        pos = m.start()
        out.append({**pending.pop(0), "line": line})
    out.extend(pending)  # binary content: no markers, the lines stay
    return Redaction(tuple(out), redaction.unredacted, redaction.carried, redaction.missed,
                     redaction.rule_set)


def redact_text(text: str, key: bytes, *, allowed: Allowed | None = None
                ) -> tuple[str, list[Finding]]:
    """``text`` with every value found replaced by its marker, and the findings. For short
    texts (a ledger record's fields, a hook's payload): no prefilter, only the rules whose
    keywords occur in it are compiled and run."""
    if not text or len(text) < 6:
        return text, []
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw) > 1 << 20:  # long: the full scan
        done = redact_bytes(raw, key, allowed=allowed)
        return done.data.decode("utf-8", "surrogatepass"), list(done.redaction.findings)
    hits = scan_text(raw, allowed)
    if not hits:
        return text, []
    parts = _Parts()
    findings = _apply(raw, hits, key, False, parts)
    return b"".join(parts.parts).decode("utf-8", "surrogatepass"), findings


@overload
def redact_value(value: Mapping[str, object], key: bytes, *, allowed: Allowed | None = None
                 ) -> dict[str, object]: ...


@overload
def redact_value(value: object, key: bytes, *, allowed: Allowed | None = None) -> object: ...


def redact_value(value: object, key: bytes, *, allowed: Allowed | None = None) -> object:
    """Every string value in a JSON-like value redacted (mapping keys are field and argument
    names, kept); the value's shape kept."""
    if isinstance(value, str):
        return redact_text(value, key, allowed=allowed)[0]
    if isinstance(value, Mapping):
        return {k: redact_value(v, key, allowed=allowed) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_value(v, key, allowed=allowed) for v in value]
    return value


__all__ = ["FileScan", "Redacted", "redact_bytes", "redact_file", "redact_text", "redact_value",
           "relocate", "scan_file", "write_redacted"]


if __name__ == "__main__":  # the child of FileScan
    import sys
    sys.exit(_child_main(sys.argv[1:]))
