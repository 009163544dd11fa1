"""Finding secrets in bytes: one prefilter pass, then the rules on a window around each hit.

Invariants:
- The whole input is read once by the prefilter (:meth:`RuleSet.prefilter`, one RE2 pattern
  implied by every find of every rule); text with no hit costs that one linear pass.
- Around a hit the window is the hit's line with the line before and after, never more than
  :data:`MARGIN` bytes on either side of the hit (so a 50 MB line costs windows of a few KB);
  a window that holds the start of a private key block reaches :data:`BLOCK_REACH` further.
  Each window is checked with the rules whose keywords it holds; a window's finds are kept by
  its bytes (:data:`MEMO_MAX`), so the same line repeated (an output of many alike items) is
  checked once.
- A find is the secret's span (the rule's secret group), not the whole match; finds that
  overlap keep the one of the higher priority (a specific rule over a rule by place over
  gitleaks' generic rule), then the earlier, then the longer.
- Matching is over bytes read as Latin-1: invalid UTF-8 and NUL bytes never stop it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from scratch.redact.rules import (
    Buffer,
    Re2Match,
    Re2Pattern,
    Rule,
    RuleSet,
    pagination_name,
    reference_value,
    rule_set,
    secret_key_name,
    shannon_entropy,
)

if TYPE_CHECKING:
    import re

MARGIN = 4096
BLOCK_REACH = 64 * 1024
MEMO_MAX = 20000
MEMO_WINDOW = 2048  # windows up to this size are remembered
MARKER_START = "«redacted:".encode()
# never a secret, whatever gitleaks' generic rule says: UUIDs (Kubernetes UIDs, request ids),
# digests and hex hashes (image digests, git SHAs, checksums)
_NEVER: Re2Pattern | None = None


def _never(value: bytes) -> bool:
    global _NEVER
    if _NEVER is None:
        from scratch.redact.rules import compile_bytes
        _NEVER = compile_bytes(
            rb"^(?:req-)?[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
            rb"[0-9a-fA-F]{12}$|^(?:sha1|sha256|sha384|sha512|md5):[0-9a-fA-F]{32,128}$|"
            rb"^[0-9a-f]{7,40}$|^[0-9a-f]{64}$|^[0-9A-F]{40}$|^[0-9A-F]{64}$")
    return _NEVER.search(value) is not None


_PLAIN_VALUES = frozenset({b"true", b"false", b"yes", b"no", b"on", b"off", b"null", b"none",
                           b"~", b"nil", b"undefined", b"redacted", b"<redacted>", b"[redacted]",
                           b"***", b"xxx"})


@dataclass(frozen=True)
class Hit:
    """A secret found: its span in the input and the rule that found it; ``key`` is the key
    or name it sat under, when the rule knows one; ``path`` when known."""

    start: int
    end: int
    rule: str
    priority: int
    key: str | None = None
    path: str | None = None


Allowed = Callable[[bytes], bool]  # the user's allowlist: True keeps a value


_PLACEHOLDER_WORDS = (b"insert", b"your_", b"your-", b"replace", b"changeme_", b"example",
                      b"placeholder", b"notapassword", b"dummy")


def _is_plain(value: bytes) -> bool:
    """A value under a secret-named key that holds no secret: a boolean or number, a mask
    (``****``, ``XXXX``), a placeholder (``<token>``, ``${TOKEN}``, ``insert_key_here``)."""
    low = value.strip().lower()
    if low in _PLAIN_VALUES or not low:
        return True
    if low.lstrip(b"-").replace(b".", b"", 1).isdigit():
        return True
    if (low.startswith(b"<") and low.endswith(b">")) or low.startswith((b"${", b"$(", b"{{")):
        return True
    masked = sum(low.count(c) for c in (b"x", b"*", b"#", b"."))
    if masked * 10 >= len(low) * 6:
        return True
    return any(w in low for w in _PLACEHOLDER_WORDS)


def _secret_of(rule: Rule, m: Re2Match) -> tuple[int, int]:
    """The span of the secret in gitleaks rule ``rule``'s match ``m``: its secretGroup, else
    the first non-empty group, else the whole match (gitleaks' own choice)."""
    if rule.secret_group:
        return m.start(rule.secret_group), m.end(rule.secret_group)
    for i in range(1, len(m.groups()) + 1):
        if m.start(i) >= 0 and m.end(i) > m.start(i):
            return m.start(i), m.end(i)
    return m.start(), m.end()


def _key_of(rule: Rule, m: Re2Match) -> str | None:
    """The key a rule by place found the value under (its first group naming a key)."""
    if not rule.place or rule.id not in ("secret-field", "env-secret", "secret-assignment"):
        return None
    for i in range(1, len(m.groups()) + 1):
        if m.start(i) < 0:
            continue
        text: str = m.group(i).decode("latin-1")
        if any(c.isalpha() for c in text) and all(c.isalnum() or c in "_.-" for c in text) \
                and not (rule.id == "env-secret" and i == rule.secret_group):
            return text
    return None


def check_window(rs: RuleSet, window: bytes, allowed: Allowed | None = None,
                 ids: Sequence[int] | None = None) -> list[Hit]:
    """Every find in ``window`` (offsets within it), overlaps not yet resolved."""
    found: list[Hit] = []
    for i in (rs.rules_for(window) if ids is None else ids):
        rule = rs.rules[i]
        for m in rule.compiled.finditer(window):
            if rule.place:
                key = _key_of(rule, m)
                if rule.id in ("secret-field", "env-secret", "secret-assignment") and (
                        key is None or not secret_key_name(key)):
                    continue
                start, end = _place_value(rule, m)
                if key is not None and start >= 0 and reference_value(key, window[start:end]):
                    continue
                if rule.id == "secret-assignment" and window[end:end + 1] in (b"{", b"(",
                                                                              b"[", b"<"):
                    continue  # "token=Token{9f4e}": an object's name, not a value
            else:
                key = None
                start, end = _secret_of(rule, m)
            if start < 0 or end <= start:
                continue
            secret = window[start:end]
            if not _keeps(rs, rule, secret, m, window, allowed):
                found.append(Hit(start, end, rule.id, rule.priority, key))
    return found


def _place_value(rule: Rule, m: Re2Match) -> tuple[int, int]:
    """The value's span in a rule by place's match: its secret group, else its last non-empty
    group (the key, when there is one, comes first)."""
    if rule.secret_group:
        return m.start(rule.secret_group), m.end(rule.secret_group)
    for i in range(len(m.groups()), 0, -1):
        if m.start(i) >= 0 and m.end(i) > m.start(i):
            if rule.id in ("secret-field", "env-secret", "secret-assignment") and i == 1:
                return -1, -1  # only the key matched
            return m.start(i), m.end(i)
    return -1, -1


def _keeps(rs: RuleSet, rule: Rule, secret: bytes, m: Re2Match, window: bytes,
           allowed: Allowed | None) -> bool:
    """True when ``secret`` is not to be redacted after all: a marker already, a placeholder
    or a value the allowlists keep, too little entropy."""
    if MARKER_START in secret or secret.startswith(b"\xab") or b"\xc2\xab" in secret[:2]:
        return True
    if rule.place and (_is_plain(secret) or len(secret.strip(b" *.xX-_")) == 0
                       or secret.startswith(b"/")):
        return True  # a boolean, a number, a mask, a path
    if rule.generic:
        if _never(secret):
            return True
        name = m.group(0)[:max(0, m.start(1) - m.start())] if m.groups() else b""
        words = name.decode("latin-1").replace('"', " ").replace("'", " ").split()
        if words and pagination_name(words[0].rstrip(":=,>")):
            return True
    if rule.entropy and shannon_entropy(secret) <= rule.entropy:
        return True
    if rule.generic and not any(48 <= b <= 57 for b in secret):
        return True
    start = window.rfind(b"\n", 0, m.start()) + 1
    end = window.find(b"\n", m.end())
    line = window[start:end if end >= 0 else len(window)]
    match = m.group(0)
    if rs.global_allow.allows(secret, match, line):
        return True
    if any(a.allows(secret, match, line) for a in rule.allows):
        return True
    return allowed is not None and allowed(secret)


def resolve(hits: list[Hit]) -> list[Hit]:
    """Overlapping finds: the higher priority wins, then the earlier, then the longer."""
    chosen: list[Hit] = []
    taken: list[tuple[int, int]] = []
    for hit in sorted(hits, key=lambda h: (-h.priority, h.start, -(h.end - h.start))):
        if any(hit.start < e and s < hit.end for s, e in taken):
            continue
        chosen.append(hit)
        taken.append((hit.start, hit.end))
    return sorted(chosen, key=lambda h: h.start)


@dataclass
class Scan:
    """The finds in one input, and whether it holds a Kubernetes Secret (for the document
    pass)."""

    hits: list[Hit]
    kube_secret: bool


_ANCHORS: list[Re2Pattern] = []
_KINDS: dict[bytes, str | None] = {}


def _anchor_kind(hit: bytes) -> str | None:
    """Which of the prefilter's parts for the rules by place ``hit`` is wholly: ``key`` (a
    key, = or :, a value's start), ``name`` (an env entry's name), else None. Remembered by
    the hit's bytes: an output of alike items hits the same few thousand times."""
    found = _KINDS.get(hit, _MISSING)
    if found is not _MISSING:
        return found  # type: ignore[return-value]
    if not _ANCHORS:
        from scratch.redact.rules import PLACE_PREFILTER, compile_bytes
        _ANCHORS.extend(compile_bytes(p.encode("latin-1")) for p in PLACE_PREFILTER[:2])
    kind = ("key" if _ANCHORS[0].fullmatch(hit) is not None else
            "name" if _ANCHORS[1].fullmatch(hit) is not None else None)
    if len(_KINDS) < 50000:
        _KINDS[hit] = kind
    return kind


_MISSING = object()
_IDENT = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_NOT_IDENT: re.Pattern[bytes] | None = None  # the first byte that is not in _IDENT
_KEY_CACHE: dict[bytes, bool] = {}


def _ident_end(buf: Buffer, at: int, limit: int) -> int:
    """The end of the run of identifier bytes (:data:`_IDENT`) from ``at``, at most ``limit``."""
    global _NOT_IDENT
    if _NOT_IDENT is None:
        import re
        _NOT_IDENT = re.compile(rb"[^A-Za-z0-9_.\-]")
    m = _NOT_IDENT.search(buf, at, limit)
    return limit if m is None else m.start()


def _innocent_key(rs: RuleSet, buf: Buffer, hit: bytes, start: int, end: int) -> bool:
    """A hit of the prefilter's parts for the rules by place (a key, ``=`` or ``:`` and the
    start of a value; or an env entry's ``name``) whose whole key (or name) neither names a
    secret nor holds a gitleaks keyword (``"passed": 3`` in nginx's stats; a volume named
    ``default-token-x2b9``): no rule can find anything from it, so no window is checked.
    ``hit`` is the prefilter's match, ``buf[start:end]``."""
    kind = _anchor_kind(hit)
    if kind is None:
        return False
    if kind == "name":  # the name's whole value
        at = start + 4
        while at < end and buf[at] not in _IDENT:
            at += 1
        key = bytes(buf[at:_ident_end(buf, at, min(len(buf), at + 100))])
    else:
        cut = hit.find(b"=") if b"=" in hit else hit.rfind(b":")
        if cut < 0:
            return False
        floor = max(0, start - 64)
        while start > floor and buf[start - 1] in _IDENT:
            start -= 1
        key = bytes(buf[start:end - len(hit) + cut]).strip(b"\\\"' \t")
    found = _KEY_CACHE.get(key)
    if found is None:
        text = key.decode("latin-1")
        found = not secret_key_name(text) and not rs.gitleaks_keyword_in(text.lower())
        if len(_KEY_CACHE) < 50000:
            _KEY_CACHE[key] = found
    return found


def scan(buf: Buffer, lo: int = 0, hi: int | None = None, *, allowed: Allowed | None = None,
         rules: RuleSet | None = None, memo: dict[bytes, list[Hit]] | None = None) -> Scan:
    """Find secrets in ``buf`` (bytes or a map of a file) whose prefilter hit starts in
    ``[lo, hi)``; spans are offsets in ``buf``.

    The prefilter's hits come from one ``finditer`` (the binding's public API; each match
    found in one C call with the GIL released): an output of alike items hits it tens of
    thousands of times, where a ``search`` call per hit cost a third more. Only a hit on an
    innocent key restarts it, one byte back (see below)."""
    rs = rules or rule_set()
    hi = len(buf) if hi is None else hi
    pattern = rs.prefilter()
    memo = {} if memo is None else memo
    hits: list[Hit] = []
    covered = -1
    kube = False
    size = len(buf)
    at = lo
    while at < hi:
        restart = -1
        for m in pattern.finditer(buf, at, hi):
            pos, m_end = m.span()
            if pos < covered:
                continue
            if _innocent_key(rs, buf, buf[pos:m_end], pos, m_end):
                restart = max(m_end - 1, pos + 1)  # the value's first byte may start a token
                if restart == m_end:
                    restart = -1  # where the iterator goes on anyway
                    continue
                break
            start, end, cut_end = _window(buf, pos, m_end, size)
            window = buf[start:end]  # bytes (of a map too)
            if b"-----" in window and b"begin" in window.lower():
                end = min(size, end + BLOCK_REACH)
                window = buf[start:end]
                cut_end = end < size
            if not kube and b"Secret" in window:
                kube = True
            covered = (end - MARGIN) if cut_end else buf.rfind(b"\n", start, end) + 1
            if covered <= pos:
                covered = pos + 1
            if len(window) <= MEMO_WINDOW:
                found = memo.get(window)
                if found is None:
                    found = check_window(rs, window, allowed)
                    if len(memo) < MEMO_MAX:
                        memo[window] = found
            else:
                found = check_window(rs, window, allowed)
            for h in found:
                hits.append(Hit(h.start + start, h.end + start, h.rule, h.priority, h.key))
        if restart < 0:
            break
        at = restart
    unique = {(h.start, h.end, h.rule): h for h in hits}
    return Scan(resolve(list(unique.values())), kube)


def _window(buf: Buffer, pos: int, m_end: int, size: int) -> tuple[int, int, bool]:
    """The window checked around the prefilter's hit ``buf[pos:m_end]``: its line with the
    line before and after, at most :data:`MARGIN` bytes from the hit on either side; and
    whether that margin cut its end."""
    floor = max(0, pos - MARGIN)
    found = buf.rfind(b"\n", floor, pos)
    if found >= 0:  # the line before too, unless the hit's line starts the input
        start = found + 1
        if start > 0:
            found = buf.rfind(b"\n", floor, start - 1)
            start = floor if found < 0 else found + 1
    else:
        start = floor
    ceiling = min(size, m_end + MARGIN)
    found = buf.find(b"\n", m_end, ceiling)
    if found < 0:
        return start, ceiling, ceiling < size
    end = found
    if end < size:  # the line after too
        found = buf.find(b"\n", end + 1, ceiling)
        if found < 0:
            return start, ceiling, ceiling < size
        end = found
    return start, end, False


_GATE: list[re.Pattern[bytes]] = []


def _could_hold_a_secret(text: bytes) -> bool:
    """Whether a short text has what every find needs: a run of 16 token characters, or an
    ``=``, ``:`` or ``@`` with a run of 4 (a value after a key). Cheap (the standard ``re``),
    so the common ledger string costs no RE2 compile."""
    if not _GATE:
        import re
        _GATE.append(re.compile(rb"[A-Za-z0-9+/=_~\-]{16}|[:=@][^\n]{0,8}?[A-Za-z0-9+/_~\-]{4}"))
    return _GATE[0].search(text) is not None


def scan_text(text: bytes, allowed: Allowed | None = None) -> list[Hit]:
    """Finds in a short text, without the prefilter: the rules whose keywords occur in it are
    compiled (once each) and run. For ledger records and hook payloads."""
    if not _could_hold_a_secret(text):
        return []
    rs = rule_set()
    ids = rs.rules_for_text(text.decode("latin-1").lower())
    if not ids:
        return []
    return resolve(check_window(rs, text, allowed, ids))


__all__ = ["Hit", "Scan", "check_window", "resolve", "scan", "scan_text"]
