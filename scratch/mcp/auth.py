"""HTTP bearer tokens, one or more per agent, kept hashed in ``state/mcp/tokens.json``.

Invariants:
- A token is 256 random bits (``scr_`` + URL-safe base64); only its SHA-256 is stored. A
  fast unsalted hash is enough because a token cannot be guessed: there is no dictionary to
  run it against. The token itself is printed once, by ``scratch mcp token add``.
- The file is 0600 under the store's ``state/`` (0700), written atomically under a lock; a
  server re-reads it when it changes, so a token added or removed applies to the next request.
- The agent of an HTTP request is the agent its token was issued to, and nothing else; so is
  its run (a token made with ``--run``: the worker, or with ``--coordinator`` the coordinator,
  of that run; with ``--iteration`` of that iteration, else of the run's latest when a session
  starts).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path
from typing import NamedTuple

import orjson

from scratch.errors import NotFound, StoreError
from scratch.mcp.wire import JSONObject
from scratch.store.locking import atomic_write, exclusive
from scratch.store.names import validate_agent

PREFIX = "scr_"


class TokenInfo(NamedTuple):
    id: str
    agent: str
    created: str
    run: str | None = None
    iteration: int | None = None
    coordinator: bool = False


def _info(row: JSONObject) -> TokenInfo:
    run, iteration = row.get("run"), row.get("iteration")
    return TokenInfo(str(row["id"]), str(row["agent"]), str(row.get("created", "")),
                     run if isinstance(run, str) else None,
                     iteration if isinstance(iteration, int) else None,
                     row.get("coordinator") is True)


def tokens_file(root: Path) -> Path:
    return root / "state" / "mcp" / "tokens.json"


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", errors="surrogateescape")).hexdigest()


def _load(path: Path) -> list[JSONObject]:
    try:
        data = orjson.loads(path.read_bytes())
    except FileNotFoundError:
        return []
    except (OSError, orjson.JSONDecodeError) as exc:
        raise StoreError(f"cannot read the MCP token file {path.name}: {exc}",
                         code="token_file_corrupt") from None
    rows = data.get("tokens") if isinstance(data, dict) else None
    if not isinstance(rows, list):
        raise StoreError(f"the MCP token file {path.name} is not a token list",
                         code="token_file_corrupt")
    return [r for r in rows if isinstance(r, dict) and {"id", "agent", "sha256"} <= set(r)]


def _save(path: Path, rows: list[JSONObject]) -> None:
    atomic_write(path, orjson.dumps({"scratch_tokens": 1, "tokens": rows},
                                    option=orjson.OPT_INDENT_2) + b"\n")
    os.chmod(path, 0o600)


def add_token(root: Path, agent: str, *, run: str | None = None, iteration: int | None = None,
              coordinator: bool = False) -> tuple[str, TokenInfo]:
    """A new token for ``agent`` (in ``run``, as its coordinator when ``coordinator``): (the
    token, to show once; its record)."""
    validate_agent(agent)
    if run is not None:
        from scratch.store.names import validate_run
        validate_run(run)
    from scratch.store import utc_now
    token = PREFIX + secrets.token_urlsafe(32)
    info = TokenInfo(f"t-{secrets.token_hex(4)}", agent, utc_now(), run,
                     iteration if run is not None else None, coordinator and run is not None)
    path = tokens_file(root)
    with exclusive(path.with_name(".tokens.lock")):
        rows = _load(path)
        row: JSONObject = {"id": info.id, "agent": agent, "created": info.created,
                           "sha256": _digest(token)}
        if info.run is not None:
            row["run"] = info.run
            if info.iteration is not None:
                row["iteration"] = info.iteration
            if info.coordinator:
                row["coordinator"] = True
        rows.append(row)
        _save(path, rows)
    return token, info


def list_tokens(root: Path) -> list[TokenInfo]:
    return [_info(r) for r in _load(tokens_file(root))]


def remove_tokens(root: Path, who: str) -> list[TokenInfo]:
    """Revoke every token of agent ``who`` (or the one token whose id is ``who``)."""
    path = tokens_file(root)
    with exclusive(path.with_name(".tokens.lock")):
        rows = _load(path)
        gone = [r for r in rows if who in (r["agent"], r["id"])]
        if not gone:
            raise NotFound(f"no MCP token for agent or id {who!r}", code="token_not_found",
                           agent=who)
        _save(path, [r for r in rows if r not in gone])
    return [_info(r) for r in gone]


class TokenTable:
    """The server's view of the token file, re-read when the file changes."""

    def __init__(self, root: Path) -> None:
        self.path = tokens_file(root)
        self._stamp: tuple[int, int, int] | None = None
        self._rows: list[JSONObject] = []

    def _refresh(self) -> None:
        try:
            st = os.stat(self.path)
            stamp = (st.st_size, st.st_mtime_ns, st.st_ino)
        except OSError:
            stamp = (0, 0, 0)
        if stamp != self._stamp:
            self._rows = _load(self.path) if stamp != (0, 0, 0) else []
            self._stamp = stamp

    def __len__(self) -> int:
        self._refresh()
        return len(self._rows)

    def verify(self, token: str) -> TokenInfo | None:
        """The record of ``token``, or None; every record is compared (no early exit)."""
        self._refresh()
        digest = _digest(token)
        found = None
        for row in self._rows:
            if hmac.compare_digest(digest, str(row["sha256"])):
                found = row
        if found is None:
            return None
        return _info(found)
