"""Markers: what a redacted value becomes, and the per-store key that makes them.

A marker is ``«redacted:RULE:HHHHHH»``: the rule that found the value and the first 6 hex
digits of HMAC-SHA256(store key, value). Equal values get equal suffixes in one store, so "do
these two pods use the same token?" keeps its answer, while the suffix says nothing of the
value to anyone without the key.

Invariants:
- The key is 32 random bytes in ``state/redact.key`` (0600), made on first use. ``state/`` is
  never committed and never synced, so the key never leaves the machine. Two stores that sync
  have two keys: an entry keeps the markers of the store that captured it, so equal values
  captured by two stores show different suffixes (copy the key file to make them agree).
- A marker holds no quote, backslash, comma, tab or newline: it keeps JSON valid, CSV columns
  and log lines as they were. It is never itself redacted again.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
from pathlib import Path

KEY_FILE = "redact.key"
KEY_BYTES = 32
SUFFIX_HEX = 6
MARKER_RE = re.compile("«redacted:([a-z0-9][a-z0-9-]*):([0-9a-f]{6})»")
MARKER_BYTES_RE = re.compile(MARKER_RE.pattern.encode("utf-8"))
_KEYS: dict[str, bytes] = {}


def marker(rule: str, value: bytes, key: bytes) -> str:
    digest = hmac.new(key, value, hashlib.sha256).hexdigest()[:SUFFIX_HEX]
    return f"«redacted:{rule}:{digest}»"


def key_path(root: Path) -> Path:
    return root / "state" / KEY_FILE


def store_key(root: Path) -> bytes:
    """The store's marker key, made (0600, never following a link) on first use."""
    cached = _KEYS.get(os.fspath(root))
    if cached is not None:
        return cached
    from scratch.safefs import O_CLOEXEC, O_NOFOLLOW, ensure_dir
    path = key_path(root)
    ensure_dir(root, path.parent)
    try:
        fd = os.open(path, os.O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        try:
            key = os.read(fd, 4096)
        finally:
            os.close(fd)
    except FileNotFoundError:
        key = b""
    if len(key) < 16:
        fresh = os.urandom(KEY_BYTES)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                         0o600)
            try:
                os.write(fd, fresh)
                os.fsync(fd)
            finally:
                os.close(fd)
            key = fresh
        except FileExistsError:  # made by another process just now (or an empty one)
            with open(path, "rb") as fh:
                key = fh.read(4096)
            if len(key) < 16:
                path.unlink(missing_ok=True)
                return store_key(root)
    if len(_KEYS) > 64:
        _KEYS.clear()
    _KEYS[os.fspath(root)] = key
    return key


__all__ = ["KEY_FILE", "MARKER_BYTES_RE", "MARKER_RE", "key_path", "marker", "store_key"]
