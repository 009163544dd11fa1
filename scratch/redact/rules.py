"""The rules that find secrets: gitleaks' rule set, plus rules by place in structured text.

The rule set is gitleaks' default configuration (``gitleaks.toml``, MIT) as the
``secretscreen`` package ships it; it is read as data (the package itself is never imported:
its import compiles every rule with Python's ``re``). Each rule keeps gitleaks' meaning:
``regex``, ``secretGroup`` (else the first non-empty group, else the whole match), ``entropy``
(a minimum Shannon entropy of the secret; ``generic-*`` rules also need a digit),
``keywords`` (the rule runs only on text holding one of them, case-insensitively) and its
allowlists (``regexes`` on the secret, the match or the line; ``stopwords``; ``condition``).
Rules that also need a file path (``path``) are left out: an output has no path.

The rules by place (:data:`PLACE_RULES`) are scratch's own: a value is a secret because of the
key or header it sits under, whatever it looks like (see :mod:`scratch.redact` for the list).
Key names are judged by :func:`secret_key_name`, from ``secretscreen``'s key-name patterns and
safe suffixes plus the suffixes that make a key a reference to a secret (``secretName``,
``secretKeyRef``, ``*_file``...).

Invariants:
- Nothing here compiles a regular expression at import; :func:`rule_set` compiles each rule
  the first time it is asked for and keeps it for the process.
- Every pattern is RE2 syntax (gitleaks' rules are written for Go's RE2-compatible engine),
  matched over bytes read as Latin-1, so invalid UTF-8 never stops a match.
"""

from __future__ import annotations

import importlib.util
import math
import os
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeAlias, TypedDict, cast

if TYPE_CHECKING:
    import mmap

# what is scanned: an output in memory or a map of a stored file (slices of each are bytes)
Buffer: TypeAlias = "bytes | mmap.mmap"

RULES_PACKAGE = "secretscreen"
RULES_FILE = "gitleaks.toml"

# secretscreen's key-name patterns (substrings of a lower-cased key) and safe suffixes, as the
# package's _keys module lists them; read from it when it is importable without side effects
# (it is: a module of constants), else this copy of 0.6.0's lists.
_KEY_PATTERNS_060 = ("api_key", "apikey", "api-key", "secret_key", "secret-key", "private_key",
                     "private-key", "access_key", "access-key", "client_secret", "client-secret",
                     "password", "passwd", "passphrase", "secret", "token", "credential",
                     "authorization", "connection_string", "connectionstring", "conn_str",
                     "signing_key", "signing-key", "encryption_key", "encryption-key",
                     "certificate", "session_key", "session-key", "cookie", "webhook_secret",
                     "webhook-secret")
# a key naming a reference to a secret, a setting about one, or a public half: never a secret
# itself (scratch's own list, beside secretscreen's safe suffixes)
REFERENCE_SUFFIXES = ("name", "names", "ref", "refs", "namespace", "id", "ids", "arn", "arns",
                      "path", "paths", "file", "files", "dir", "url", "uri", "urls", "endpoint",
                      "type", "types", "kind", "version", "mode", "policy", "length", "size",
                      "enabled", "required", "ttl", "expiry", "expires", "expiration",
                      "expirationseconds", "seconds", "count", "status", "key", "keys",
                      "provider", "hash", "format", "prefix", "suffix", "label", "selector",
                      "algorithm", "source", "template", "field", "fields", "location", "class",
                      "factory", "key", "keys", "index", "header", "param", "store")
# "certificate" is public by design and "cookie" is usually a name: not secret-bearing keys here
_DROPPED_PATTERNS = ("certificate",)
PLURALS = ("tokens", "secrets", "passwords", "credentials", "keys", "cookies")
# "X token" that is no credential: pagination, idempotency, cancellation
NOT_SECRET_TOKENS = ("client", "next", "page", "continuation", "pagination", "sync", "resume",
                     "idempotency", "cancel", "cancellation", "start", "marker", "csrf",
                     "public", "window", "app")
# "X key" that is a credential (any other "...Key" is a name, an index, a label...)
KEY_QUALIFIERS = ("api", "secret", "private", "access", "encryption", "signing", "session",
                  "auth", "master", "license", "hmac", "account", "storage", "shared",
                  "client", "app", "webhook", "subscription", "admin", "service", "x-api")
NAME_WORDS = ("pass", "pwd", "token", "secret", "key", "credential", "auth", "apikey")
EXTRA_KEY_WORDS = ("pwd", "privatekey", "secretkey", "accesskey", "apikey", "clientsecret",
                   "authtoken")


def _package_dir() -> Path | None:
    """The folder of the rule package, found without importing it."""
    try:
        spec = importlib.util.find_spec(RULES_PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def rules_version() -> str:
    """``secretscreen X.Y.Z`` (the rule package and its version, from its dist-info folder
    beside it: importlib.metadata costs a quarter of a second to import), or ``none``."""
    folder = _package_dir()
    if folder is None:
        return "none"
    for info in sorted(folder.parent.glob(f"{RULES_PACKAGE}-*.dist-info")):
        return f"{RULES_PACKAGE} {info.name[len(RULES_PACKAGE) + 1:-len('.dist-info')]}"
    return RULES_PACKAGE


@lru_cache(maxsize=1)
def key_patterns() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """secretscreen's key-name patterns and safe suffixes (lower case), read from its
    ``_keys.py`` as data (its two tuple literals; the module is never run), else the copy of
    0.6.0's patterns above."""
    import ast
    patterns: tuple[str, ...] = _KEY_PATTERNS_060
    safe: tuple[str, ...] = ()
    folder = _package_dir()
    try:
        tree = ast.parse((folder / "_keys.py").read_text(encoding="utf-8")) if folder else None
    except (OSError, SyntaxError, ValueError):
        tree = None
    for node in tree.body if tree is not None else ():
        target: ast.expr
        expr: ast.expr | None
        if isinstance(node, ast.AnnAssign):
            target, expr = node.target, node.value
        elif isinstance(node, ast.Assign):
            target, expr = node.targets[0], node.value
        else:
            continue
        if not isinstance(target, ast.Name) or expr is None:
            continue
        try:
            value = ast.literal_eval(expr)
        except ValueError:
            continue
        if target.id == "DEFAULT_KEY_PATTERNS":
            patterns = tuple(str(v).lower() for v in value)
        elif target.id == "DEFAULT_SAFE_SUFFIXES":
            safe = tuple(str(v).lower() for v in value)
    patterns = tuple(p for p in patterns if p not in _DROPPED_PATTERNS)
    return patterns, safe


def _squash(name: str) -> str:
    return name.lower().replace("_", "").replace("-", "").replace(".", "").replace(" ", "")


@lru_cache(maxsize=4096)
def secret_key_name(name: str) -> bool:
    """Whether a key (a JSON/YAML key, an env var's name, an assignment's left side) names a
    secret value: it holds one of secretscreen's key-name patterns (or ends in ``key``), and
    does not end in one of its safe suffixes or in a reference suffix (``secretName``,
    ``tokenUrl``, ``password_file``...)."""
    lowered = name.lower()
    squashed = _squash(name)
    if not squashed or len(name) > 100:
        return False
    patterns, safe = key_patterns()
    if any(lowered.endswith(s) for s in safe):
        return False
    words = [w.lower() for w in _split_words(name) if w]
    last = words[-1] if words else ""
    before = words[-2] if len(words) > 1 else ""
    if last == "key":  # "passwordKey" names a key of a Secret; "apiKey" is one
        return before in KEY_QUALIFIERS or squashed.endswith(("apikey", "secretkey",
                                                              "privatekey", "accesskey"))
    if last in PLURALS or last in REFERENCE_SUFFIXES:
        return False  # "HttpTokens", "secretName", "tokenUrl", "credentialFactoryClass"
    if last == "token" and before in NOT_SECRET_TOKENS:
        return False  # a pagination or idempotency token, not a credential
    return (any(p in lowered or _squash(p) in squashed for p in patterns)
            or any(w in squashed for w in EXTRA_KEY_WORDS))


def pagination_name(name: str) -> bool:
    """A name like ``NextToken`` or ``pageToken``: a cursor, not a credential."""
    words = [w.lower() for w in _split_words(name) if w]
    return len(words) > 1 and words[-1] == "token" and words[-2] in NOT_SECRET_TOKENS


def reference_value(name: str, value: bytes) -> bool:
    """A value under a key ending in "secret" or "key" that names a Kubernetes object
    (``"secret": "osp-secret"``): lower-case DNS labels with a hyphen or a dot."""
    words = [w.lower() for w in _split_words(name) if w]
    if not words or words[-1] not in ("secret", "key"):
        return False
    text = value.decode("latin-1")
    if text.isalpha() and text[0].isupper() and text.lower().endswith(words[-1]):
        return True  # "HeatAuthEncryptionKey": the name of a key inside a Secret
    return (("-" in text or "." in text) and len(text) <= 253 and text == text.lower()
            and all(c.isalnum() or c in "-." for c in text) and text[0].isalnum()
            and text[-1].isalnum() and not any(c.isdigit() for c in text[-6:]))


def _split_words(name: str) -> list[str]:
    out: list[str] = []
    word = ""
    prev = ""
    for ch in name:
        if ch in "_-. /:":
            out.append(word)
            word = ""
        elif ch.isupper() and prev and (prev.islower() or prev.isdigit()):
            out.append(word)
            word = ch
        else:
            word += ch
        prev = ch
    out.append(word)
    return out


def shannon_entropy(value: bytes) -> float:
    if not value:
        return 0.0
    counts: dict[int, int] = {}
    for b in value:
        counts[b] = counts.get(b, 0) + 1
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


@dataclass
class Allow:
    """One allowlist of a rule (or the global one): gitleaks' ``regexes`` (on ``target``:
    secret, match or line), ``stopwords`` and ``condition``; ``paths``/``commits`` never match
    an output."""

    regexes: tuple[str, ...] = ()
    target: str = "secret"
    stopwords: tuple[str, ...] = ()
    condition: str = "OR"
    needs_path: bool = False
    compiled: list[Re2Pattern] = field(default_factory=list, repr=False)
    _stops: Re2Pattern | None = field(default=None, repr=False)

    def allows(self, secret: bytes, match: bytes, line: bytes) -> bool:
        checks: list[bool] = []
        if self.regexes:
            if not self.compiled:
                self.compiled = [_compile(r) for r in self.regexes]
            text = {"secret": secret, "match": match, "line": line}.get(self.target, secret)
            checks.append(any(c.search(text) is not None for c in self.compiled))
        if self.stopwords:
            if self._stops is None:  # one RE2 alternation: gitleaks' generic rule has ~1,500
                import re2
                self._stops = compile_bytes(b"(?i)" + b"|".join(
                    re2.escape(w.encode("latin-1", "replace")) for w in self.stopwords))
            checks.append(self._stops.search(secret) is not None)
        if self.needs_path:
            checks.append(False)
        if not checks:
            return False
        return all(checks) if self.condition.upper() == "AND" else any(checks)


class Re2Match(Protocol):
    """What scratch asks of an RE2 match."""

    def span(self, group: int = 0, /) -> tuple[int, int]: ...

    def start(self, group: int = 0, /) -> int: ...

    def end(self, group: int = 0, /) -> int: ...

    def group(self, group: int = 0, /) -> bytes: ...

    def groups(self) -> tuple[bytes | None, ...]: ...


class Re2Pattern(Protocol):
    """What scratch asks of a compiled RE2 pattern (google-re2 ships no types)."""

    def search(self, text: Buffer, pos: int = 0, endpos: int = ..., /) -> Re2Match | None: ...

    def fullmatch(self, text: Buffer, pos: int = 0, endpos: int = ..., /
                  ) -> Re2Match | None: ...

    def finditer(self, text: Buffer, pos: int = 0, endpos: int = ..., /
                 ) -> Iterator[Re2Match]: ...


class _Re2Set(Protocol):
    """An RE2 Set: the indexes of the patterns found in ``text`` (None: none)."""

    def Add(self, pattern: bytes, /) -> int: ...  # noqa: N802  # re2's names

    def Compile(self) -> bool: ...  # noqa: N802

    def Match(self, text: bytes, /) -> list[int] | None: ...  # noqa: N802


class _Re2Options(Protocol):
    encoding: object
    max_mem: int
    log_errors: bool
    never_capture: bool


class _GitleaksAllow(TypedDict, total=False):
    """An allowlist table of gitleaks.toml (the fields read here)."""

    regexes: list[str]
    regexTarget: str
    stopwords: list[str]
    condition: str
    paths: list[str]
    commits: list[str]


class _GitleaksRule(TypedDict, total=False):
    """A ``[[rules]]`` table of gitleaks.toml (the fields read here)."""

    id: str
    regex: str
    path: str
    keywords: list[str]
    secretGroup: int
    entropy: float
    allowlists: list[_GitleaksAllow]
    allowlist: _GitleaksAllow  # the older single-table spelling


class _Gitleaks(TypedDict, total=False):
    """gitleaks.toml as read here."""

    allowlist: _GitleaksAllow
    rules: list[_GitleaksRule]


@dataclass
class Rule:
    """One rule: a gitleaks rule or one of scratch's rules by place."""

    id: str
    regex: str
    keywords: tuple[str, ...] = ()
    secret_group: int = 0
    entropy: float | None = None
    allows: tuple[Allow, ...] = ()
    generic: bool = False  # gitleaks' generic-* rules: the secret also needs a digit
    place: bool = False  # a rule by place (scratch's own)
    multiline: bool = False  # may span lines (a private key block)
    priority: int = 1  # overlapping finds: the higher wins (specific 2, place 1, generic 0)
    _compiled: Re2Pattern | None = field(default=None, repr=False)

    @property
    def compiled(self) -> Re2Pattern:
        if self._compiled is None:
            self._compiled = _compile(self.regex)
        return self._compiled


def _options() -> _Re2Options:
    import re2
    opts: _Re2Options = re2.Options()
    opts.encoding = re2.Options.Encoding.LATIN1
    opts.max_mem = 64 << 20
    opts.log_errors = False
    return opts


def _compile(pattern: str) -> Re2Pattern:
    """``pattern`` compiled by RE2 for bytes read as Latin-1 (ASCII patterns; a non-ASCII one
    is matched as UTF-8)."""
    import re2
    if pattern.isascii():
        ascii_pattern: Re2Pattern = re2.compile(pattern.encode("ascii"), _options())
        return ascii_pattern
    opts: _Re2Options = re2.Options()
    opts.max_mem = 64 << 20
    opts.log_errors = False
    compiled: Re2Pattern = re2.compile(pattern.encode("utf-8"), opts)
    return compiled


def compile_bytes(pattern: bytes) -> Re2Pattern:
    """A bytes pattern compiled by RE2 for bytes read as Latin-1."""
    import re2
    compiled: Re2Pattern = re2.compile(pattern, _options())
    return compiled


def _rules_from_toml(data: _Gitleaks) -> tuple[list[Rule], Allow]:
    def allow_of(entry: _GitleaksAllow) -> Allow:
        return Allow(tuple(entry.get("regexes", ())), str(entry.get("regexTarget", "secret")),
                     tuple(entry.get("stopwords", ())), str(entry.get("condition", "OR")),
                     bool(entry.get("paths") or entry.get("commits")))

    glob: _GitleaksAllow = data.get("allowlist") or {}
    global_allow = Allow(tuple(glob.get("regexes", ())), str(glob.get("regexTarget", "secret")),
                         tuple(glob.get("stopwords", ())))
    rules: list[Rule] = []
    for entry in data.get("rules", ()):
        regex = entry.get("regex")
        if not regex or entry.get("path"):
            continue  # path-only rules, and rules that need a file's path, do not apply
        allows = [allow_of(a) for a in entry.get("allowlists", ())]
        if "allowlist" in entry:  # the older single-table spelling
            allows.append(allow_of(entry["allowlist"]))
        rid = str(entry["id"])
        rules.append(Rule(rid, str(regex), tuple(k.lower() for k in entry.get("keywords", ())),
                          int(entry.get("secretGroup", 0)), entry.get("entropy"), tuple(allows),
                          generic=rid.startswith("generic"),
                          multiline="[\\s\\S" in regex or "(?s" in regex,
                          priority=0 if rid.startswith("generic") else 2))
    return rules, global_allow


# -- scratch's rules by place ----------------------------------------------------------------

# a JSON string's body (escapes kept); \\?" lets a key sit in JSON that is itself
# inside a JSON string (kubectl's last-applied-configuration annotation)
_STR = r'(?:[^"\\\n]|\\[^"\n])+'
_QUOTE = r'\\{0,3}"'
# between one key's value and the next key of the same object: a comma, and blanks that may
# hold one line break (then any indentation)
_NEXT_KEY = r'\s{0,8},[ \t]{0,8}(?:\r?\n[ \t]*)?'
_KEY = (r'[A-Za-z0-9_.\-]{0,60}(?i:pass|pwd|secret|token|key|credential|auth|cookie)'
        r'[A-Za-z0-9_.\-]{0,60}')

# (no counted repetition of more than a few: RE2 copies its body once per count, and a
# thousand copies take long to compile; the windows the rules run on bound every length)
PLACE_RULES: tuple[Rule, ...] = (
    # "password": "value" in JSON (and in JSON kept inside a string)
    Rule("secret-field", _QUOTE + r'(' + _KEY + r')' + _QUOTE + r'\s{0,8}:\s{0,8}' + _QUOTE
         + r'((?:[^"\\\n]|\\[^"\\\n]|\\\\[^"\\\n])+?)' + _QUOTE,
         ("pass", "pwd", "secret", "token", "key", "credential", "auth", "cookie"),
         secret_group=2, place=True),
    # {"name": "DB_PASSWORD", "value": "..."} (either order), JSON or JSON inside a string;
    # the second key may start the next line at any indentation (kubectl's pod JSON puts an
    # env entry's keys 16 spaces and more deep)
    Rule("env-secret", _QUOTE + r'name' + _QUOTE + r'\s{0,8}:\s{0,8}' + _QUOTE + r'(' + _KEY
         + r')' + _QUOTE + _NEXT_KEY + _QUOTE + r'value' + _QUOTE + r'\s{0,8}:\s{0,8}'
         + _QUOTE + r'(' + _STR + r'?)' + _QUOTE,
         ("pass", "pwd", "secret", "token", "key", "credential", "auth"), secret_group=2,
         place=True),
    Rule("env-secret", _QUOTE + r'value' + _QUOTE + r'\s{0,8}:\s{0,8}' + _QUOTE + r'(' + _STR
         + r'?)' + _QUOTE + _NEXT_KEY + _QUOTE + r'name' + _QUOTE + r'\s{0,8}:\s{0,8}'
         + _QUOTE + r'(' + _KEY + r')' + _QUOTE,
         ("pass", "pwd", "secret", "token", "key", "credential", "auth"), secret_group=1,
         place=True),
    # - name: DB_PASSWORD / value: ... (YAML)
    Rule("env-secret", r'(?m)^[ \t]*-?[ \t]*name:[ \t]*["\']?(' + _KEY + r')["\']?[ \t]*\r?\n'
         r'[ \t]*value:[ \t]*(?:"((?:[^"\\\n]|\\.)+)"|\'([^\'\n]+)\'|'
         r'([^\s"\'|>&*#{\[][^\n]*?))[ \t]*\r?$',
         ("pass", "pwd", "secret", "token", "key", "credential", "auth"), place=True,
         multiline=True),
    # password: value (YAML and "Key: value" text lines)
    Rule("secret-field", r'(?m)^[ \t]*-?[ \t]*["\']?(' + _KEY + r')["\']?[ \t]*:[ \t]+'
         r'(?:"((?:[^"\\\n]|\\.)+)"|\'([^\'\n]+)\'|'
         r'([^\s"\'|>&*#{\[!%@`][^\n]*?))[ \t]*\r?$',
         ("pass", "pwd", "secret", "token", "key", "credential", "auth", "cookie"),
         place=True),
    # DB_PASSWORD=value, AWS_SECRET_ACCESS_KEY=..., ?token=... (env, logfmt, query strings,
    # connection strings)
    Rule("secret-assignment", r'(?:^|[\s;&?,"\'(\[{:/])(?:export[ \t]+)?(' + _KEY
         + r')[ \t]{0,3}=[ \t]{0,3}(?:"([^"\n]+)"|\'([^\'\n]+)\'|'
         r'([^\s"\'&;,(){}\[\]<>]+))',
         ("pass", "pwd", "secret", "token", "key", "credential", "auth"), place=True),
    # scheme://user:password@host
    Rule("url-password", r'[A-Za-z][A-Za-z0-9+.\-]{0,30}://[^/\s:@"\'<>]*:'
         r'([^/\s@"\'<>]+)@', ("://",), place=True),
    # Authorization: Bearer xyz / Basic xyz / a raw token
    Rule("authorization-header", r'(?i)\b(?:proxy-)?authorization\\{0,3}["\']?[ \t]{0,8}[:=]'
         r'[ \t]{0,8}\\{0,3}["\']?(?:(?:bearer|basic|token|digest|negotiate|apikey|sso-key)'
         r'[ \t]+)?([A-Za-z0-9._~+/=:\-]{6,})', ("authorization",), place=True,
         priority=2),
    Rule("authorization-header", r'(?i)\bbearer[ \t]+([A-Za-z0-9._~+/\-]{16,}=*)',
         ("bearer",), place=True, priority=2),
)


@dataclass
class RuleSet:
    """Every rule, the global allowlist, and the index from keyword to rules."""

    rules: list[Rule]
    global_allow: Allow
    by_keyword: dict[str, list[int]]
    unkeyed: list[int]  # rules without keywords: run on every candidate window
    source: str
    _keyword_set: _Re2Set | None = field(default=None, repr=False)
    _keywords: list[str] = field(default_factory=list, repr=False)
    _prefilter: Re2Pattern | None = field(default=None, repr=False)
    _gitleaks_words: tuple[str, ...] | None = field(default=None, repr=False)

    def keyword_matcher(self) -> tuple[_Re2Set, list[str]]:
        """An RE2 Set over every keyword (case-insensitive), and the keyword of each index."""
        if self._keyword_set is None:
            import re2
            kws = sorted(self.by_keyword)
            s: _Re2Set = re2.Set.SearchSet(_options())
            for kw in kws:
                s.Add(b"(?i)" + re2.escape(kw.encode("latin-1", "replace")))
            s.Compile()
            self._keywords, self._keyword_set = kws, s
        return self._keyword_set, self._keywords

    def prefilter(self) -> Re2Pattern:
        """One RE2 pattern every find of every rule implies (:func:`prefilter_pattern`),
        compiled without its capture groups: only where it matches is wanted, which RE2's DFA
        alone answers (extracting hundreds of groups per match cost most of the scan)."""
        if self._prefilter is None:
            import re2
            opts = _options()
            opts.never_capture = True
            self._prefilter = cast(Re2Pattern, re2.compile(
                prefilter_pattern(self.rules).encode("ascii"), opts))
        return self._prefilter

    def rules_for(self, window: bytes) -> list[int]:
        """The rules whose keywords occur in ``window`` (gitleaks' keyword prefilter), in
        rule order; rules without keywords always."""
        matcher, kws = self.keyword_matcher()
        hits = matcher.Match(window) or ()
        found: set[int] = set(self.unkeyed)
        for i in hits:
            found.update(self.by_keyword[kws[i]])
        return sorted(found)

    def gitleaks_keyword_in(self, lowered: str) -> bool:
        """Whether a keyword of a gitleaks rule (not one of scratch's rules by place) occurs
        in ``lowered``."""
        words = self._gitleaks_words
        if words is None:
            words = self._gitleaks_words = tuple(
                kw for kw, ids in self.by_keyword.items()
                if any(not self.rules[i].place for i in ids))
        return any(kw in lowered for kw in words)

    def rules_for_text(self, lowered: str) -> list[int]:
        """As :meth:`rules_for`, by plain substring search (no RE2 compile: short texts)."""
        found: set[int] = set(self.unkeyed)
        for kw, ids in self.by_keyword.items():
            if kw in lowered:
                found.update(ids)
        return sorted(found)


# Keywords too common in real outputs to be worth a look on their own (hits per MB over the
# shared corpus and the benchmark's PodList and log, measured once: "s." 1065, "api" 637,
# "ey" 362, "auth" 304, "key" 289, "sk" 236, "_pub" 154, "secret" 143, "token" 83, "password"
# 48, "ico-" 37, "access" 24, "api-" 23, "etsy" 14, "passwd" 14, "dropbox" 10, "asia" 6; the
# next, "credential", 4). A rule with one of them is looked for by its own pattern instead.
NOISY_KEYWORDS = frozenset({"s.", "api", "ey", "auth", "key", "sk", "_pub", "secret", "token",
                            "password", "ico-", "access", "api-", "etsy", "passwd", "dropbox",
                            "asia", "credential", "creds"})
# A leading part of a pattern that only widens a match to the left: dropped from the
# prefilter (any match of the whole implies one of the rest).
_LEADING = ("(?i)[\\w.-]{0,50}?", "[\\w.-]{0,50}?", "\\b")
# the rules by place: what each of their finds begins with or holds
PLACE_PREFILTER = (
    # a secret-looking key (a bare "key" names no secret: "apiKey", "x_key" may), then = or
    # : and the start of a value (not an object, a list or the end of the line)
    "(?:(?i:pass|pwd|secret|token|credential|auth|cookie)|[A-Za-z0-9][_.\\-]?(?i:key))"
    "[A-Za-z0-9_.\\-]{0,60}(?:\\\\{0,3}[\"'])?[ \\t]{0,8}[:=][ \\t]{0,8}"
    "(?:\\\\{0,3}[\"'])?[^\\s{\\[,:]",
    # an env entry's name that says secret, then its value's key (on the same line or the
    # next); or its value, then that name (the rules env-secret)
    "(?i)name\\\\{0,3}[\"']?\\s*:\\s*\\\\{0,3}[\"']?[A-Za-z0-9_.\\-]{0,60}"
    "(?:pass|pwd|secret|token|key|credential|auth|cookie)[A-Za-z0-9_.\\-]{0,60}"
    "\\\\{0,3}[\"']?\\s*,?\\s*\\\\{0,3}[\"']?value\\\\{0,3}[\"']?\\s*:",
    "value\\\\{0,3}\"\\s*:\\s*\\\\{0,3}\"[^\\n]*\\s*,\\s*\\\\{0,3}\"name\\\\{0,3}\"\\s*:\\s*"
    "\\\\{0,3}\"[A-Za-z0-9_.\\-]{0,60}(?i:pass|pwd|secret|token|key|credential|auth|cookie)",
    "://[^/\\s:@\"'<>]*:[^/\\s@\"'<>]+@",
    "(?i)authorization",
    "(?i)bearer[ \\t]+[A-Za-z0-9._~+/\\-]{16}",
    # a Kubernetes Secret (the document pass, scratch.redact.kube)
    "kind\\\\{0,3}[\"']?[ \\t]{0,8}:[ \\t]{0,8}\\\\{0,3}[\"']?Secret\\b",
)


def _strip_leading(pattern: str) -> str:
    changed = True
    while changed:
        changed = False
        for lead in _LEADING:
            if pattern.startswith(lead):
                pattern = ("(?i)" if lead.startswith("(?i)") else "") + pattern[len(lead):]
                changed = True
    return pattern


def prefilter_pattern(rules: Sequence[Rule]) -> str:
    """The alternation the scan looks for: each gitleaks rule's keywords (case-insensitive),
    or, for a rule with a keyword in :data:`NOISY_KEYWORDS`, its own pattern (less what only
    widens it to the left); and what each rule by place begins with. A window around each hit
    is then checked with the rules whose keywords it holds, so the prefilter must be implied by
    every find: keywords are (gitleaks runs a rule only where one occurs) and so are the
    patterns used."""
    words: set[str] = set()
    parts: list[str] = []
    for rule in rules:
        if rule.place:
            continue
        if not rule.keywords or NOISY_KEYWORDS.intersection(rule.keywords):
            parts.append(_strip_leading(rule.regex))
        else:
            words.update(rule.keywords)
    import re2
    literal = "|".join(re2.escape(w) for w in sorted(words))
    alternatives = ([f"(?i:{literal})"] if literal else []) + [f"(?:{p})" for p in parts] + [
        f"(?:{p})" for p in PLACE_PREFILTER]
    return "|".join(alternatives)


_LOCK = threading.Lock()
_CACHE: dict[str, RuleSet] = {}


def rule_set(*, place: bool = True) -> RuleSet:
    """The rule set, read once per process (compiled rule by rule as they are needed);
    ``place=False``: gitleaks' rules alone (to measure them on their own)."""
    name = "rules" if place else "gitleaks"
    found = _CACHE.get(name)
    if found is not None:
        return found
    with _LOCK:
        found = _CACHE.get(name)
        if found is None:
            found = _CACHE[name] = _load(place)
    return found


def _toml_data(path: Path) -> _Gitleaks:
    """gitleaks.toml's data, through a JSON copy in the user's cache (``$XDG_CACHE_HOME/
    scratch``) keyed by the file's size and time: TOML takes ~30 ms to read, every process
    that writes a ledger record reads the rules, and JSON takes ~1 ms."""
    import orjson
    st = path.stat()
    cache_home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"),
                                                                  ".cache")
    cached = Path(cache_home) / "scratch" / f"gitleaks-{st.st_size}-{st.st_mtime_ns}.json"
    try:
        cached_data: _Gitleaks = orjson.loads(cached.read_bytes())  # what was written below
        return cached_data
    except (OSError, ValueError):
        pass
    import tomllib
    data = cast(_Gitleaks, tomllib.loads(path.read_text(encoding="utf-8")))  # gitleaks' schema
    try:
        cached.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = cached.with_name(f".{cached.name}.{os.getpid()}")
        tmp.write_bytes(orjson.dumps(data))
        os.replace(tmp, cached)
    except OSError:
        pass  # a read-only home: read the TOML each time
    return data


def _load(place: bool = True) -> RuleSet:
    folder = _package_dir()
    rules: list[Rule] = []
    global_allow = Allow()
    source = "none"
    if folder is not None and (folder / RULES_FILE).is_file():
        rules, global_allow = _rules_from_toml(_toml_data(folder / RULES_FILE))
        source = rules_version()
    rules = [*rules, *PLACE_RULES] if place else rules
    by_keyword: dict[str, list[int]] = {}
    unkeyed: list[int] = []
    for i, rule in enumerate(rules):
        if not rule.keywords:
            unkeyed.append(i)
        for kw in rule.keywords:
            by_keyword.setdefault(kw, []).append(i)
    return RuleSet(rules, global_allow, by_keyword, unkeyed, source)


def rule_ids() -> Sequence[str]:
    return [r.id for r in rule_set().rules]


__all__ = ["Allow", "PLACE_RULES", "Rule", "RuleSet", "rule_ids", "rule_set", "rules_version",
           "secret_key_name", "shannon_entropy"]
