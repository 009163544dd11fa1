"""The upstream servers of ``scratch mcp proxy``, read from the ``mcpServers`` JSON that MCP
clients already keep, and ``scratch mcp wrap``'s rewrite of such a file.

Shapes read (one table of servers by name):

- Claude Desktop, Cursor, Windsurf, Cline, Claude Code's ``.mcp.json`` and ``~/.claude.json``:
  ``{"mcpServers": {NAME: {"command", "args", "env", "cwd"}}}`` for stdio and
  ``{NAME: {"url", "headers"}}`` (``"type": "http"`` or ``"streamable-http"``, or no type) for
  streamable HTTP; VS Code's ``{"servers": {...}}`` with the same entries.
- ``${VAR}`` and ``${VAR:-default}`` in command, args, env, url and headers are expanded from
  the proxy's environment (as Claude Code does); a variable that is not set and has no default
  is an error naming it.
- ``"disabled": true`` entries are skipped; an SSE server (``"type": "sse"``) is refused by
  name: the proxy speaks stdio and streamable HTTP to upstreams.
- ``"timeout"``: seconds a call to that server may take (else ``--timeout``).

Invariants of :func:`wrap_file` / :func:`unwrap_file`: the file is read, backed up and
rewritten as :mod:`scratch.clientfiles` does for every client file; the wrapped servers move,
entry for entry and untouched (secrets stay in the file they were in), under
``"scratchProxy": {"mcpServers": ...}``, and one entry ``scratch`` runs
``scratch mcp proxy --config FILE``, which reads them from there. Unwrapping moves them back
and removes that entry; entries added since are kept. Wrapping twice changes nothing.
scratch's own server (``scratch mcp serve``, as ``mcp install`` writes it) is never wrapped:
it is stashed (so unwrapping restores it) and the proxy, which offers scratch's tools itself,
takes its place; the proxy never starts it as an upstream.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import NamedTuple

from scratch.clientfiles import ServerConfigError, back_up, read_json
from scratch.clientfiles import scratch_command as _scratch_command
from scratch.clientfiles import write_json as _write
from scratch.errors import UsageError
from scratch.mcp.wire import JSON, JSONObject

STASH = "scratchProxy"
PROXY_ENTRY = "scratch"
NAME_BAD = re.compile(r"[^A-Za-z0-9_.-]+")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class UpstreamSpec(NamedTuple):
    """One upstream server: stdio (``command``) or streamable HTTP (``url``)."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = {}
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = {}
    timeout: float | None = None

    @property
    def kind(self) -> str:
        return "http" if self.url else "stdio"


def _expand(value: str, server: str, environ: dict[str, str]) -> str:
    def one(m: re.Match[str]) -> str:
        name, default = m.group(1), m.group(2)
        if name in environ:
            return environ[name]
        if default is not None:
            return default
        raise ServerConfigError(f"server {server!r}: ${{{name}}} is not set (give it in the "
                                "environment, or a default: ${VAR:-value})", server=server,
                                variable=name)
    return _VAR.sub(one, value)


def _strings(value: JSON, what: str, server: str) -> JSON:
    if isinstance(value, dict):
        if not all(isinstance(k, str) and isinstance(v, (str, int, float, bool))
                   for k, v in value.items()):
            raise ServerConfigError(f"server {server!r}: {what} must map names to strings",
                                    server=server)
        return {k: v if isinstance(v, str) else json.dumps(v) for k, v in value.items()}
    if not isinstance(value, list) or not all(isinstance(v, (str, int, float)) for v in value):
        raise ServerConfigError(f"server {server!r}: {what} must be a list of strings",
                                server=server)
    return [str(v) for v in value]


def parse_entry(name: str, entry: JSON, environ: dict[str, str] | None = None
                ) -> UpstreamSpec | None:
    """One ``mcpServers`` entry as an :class:`UpstreamSpec` (None: it is disabled)."""
    env_in = dict(os.environ if environ is None else environ)
    if not isinstance(entry, dict):
        raise ServerConfigError(f"server {name!r} is not an object", server=name)
    if entry.get("disabled") is True:
        return None
    kind = str(entry.get("type") or entry.get("transport") or "").lower()
    timeout = entry.get("timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
                                or timeout <= 0):
        raise ServerConfigError(f"server {name!r}: timeout must be a positive number of seconds",
                                server=name)
    if kind == "sse":
        raise ServerConfigError(f"server {name!r} uses the SSE transport, which the proxy does "
                                "not speak; streamable HTTP (url) and stdio (command) are "
                                "supported", server=name)
    if "url" in entry or kind in ("http", "streamable-http", "streamablehttp"):
        url = entry.get("url")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ServerConfigError(f"server {name!r}: url must be an http(s) URL",
                                    server=name)
        headers = _strings(entry.get("headers") or {}, "headers", name)
        return UpstreamSpec(name, url=_expand(url, name, env_in),
                            headers={k: _expand(v, name, env_in) for k, v in headers.items()},
                            timeout=float(timeout) if timeout else None)
    command = entry.get("command")
    if not isinstance(command, str) or not command:
        raise ServerConfigError(f"server {name!r} has neither a command nor a url",
                                server=name)
    args = _strings(entry.get("args") or [], "args", name)
    env = _strings(entry.get("env") or {}, "env", name)
    cwd = entry.get("cwd")
    return UpstreamSpec(name, command=_expand(command, name, env_in),
                        args=tuple(_expand(a, name, env_in) for a in args),
                        env={k: _expand(v, name, env_in) for k, v in env.items()},
                        cwd=_expand(cwd, name, env_in) if isinstance(cwd, str) else None,
                        timeout=float(timeout) if timeout else None)


def _table(data: JSON, path: str) -> JSONObject:
    if not isinstance(data, dict):
        raise ServerConfigError(f"{path} is not a JSON object", path=path)
    stash = data.get(STASH)
    if isinstance(stash, dict) and isinstance(stash.get("mcpServers"), dict):
        return stash["mcpServers"]  # type: ignore[no-any-return]  # a wrapped file
    for key in ("mcpServers", "servers"):
        if isinstance(data.get(key), dict):
            return data[key]  # type: ignore[no-any-return]
    raise ServerConfigError(f"{path} has no mcpServers table", path=path)


def load_servers(path: str | Path, environ: dict[str, str] | None = None
                 ) -> list[UpstreamSpec]:
    """The enabled servers of an ``mcpServers`` file (of a wrapped file: the wrapped ones)."""
    p = Path(path)
    table = _table(read_json(p), str(p))
    out = []
    for name, entry in table.items():
        if _is_own(entry):
            continue  # the proxy does not proxy itself, nor scratch's own server
        spec = parse_entry(str(name), entry, environ)
        if spec is not None:
            out.append(spec)
    if not out:
        raise ServerConfigError(f"{p} names no enabled server", path=str(p))
    return out


LAUNCHERS = {"npx", "node", "python", "python3", "uvx", "uv", "bunx", "bun", "deno",
             "docker", "pipx", "sh", "bash", "env"}


def command_name(argv: list[str]) -> str:
    """A server name for ``scratch mcp proxy -- CMD ARGS``: the program, or for a launcher
    (npx, node, python, uvx, docker...) the first argument that names a package or file."""
    if not argv:
        raise UsageError("nothing to run: give the server's command after --",
                         code="invalid_argument")
    words = [argv[0], *argv[1:]]
    pick = os.path.basename(words[0])
    if pick in LAUNCHERS:
        for w in words[1:]:
            if w.startswith("-") or w in ("run", "exec", "x", "tool", "-m"):
                continue
            pick = w.rstrip("/").rsplit("/", 1)[-1].split("@")[0] or w
            for ext in (".js", ".mjs", ".py", ".ts"):
                pick = pick.removesuffix(ext)
            if pick in ("index", "main", "server", "dist"):
                pick = w.rstrip("/").split("/")[-3] if w.count("/") >= 2 else pick
            break
    pick = pick.replace("mcp-server-", "").replace("server-", "") or pick
    return NAME_BAD.sub("-", pick).strip("-.") or "upstream"


def _is_scratch(entry: JSON, verb: str) -> bool:
    args = entry.get("args") if isinstance(entry, dict) else None
    return isinstance(args, list) and verb in args[:4] and "mcp" in args[:3] and any(
        "scratch" in str(w) for w in [entry.get("command", ""), *args[:2]])


def _is_proxy(entry: JSON) -> bool:
    return _is_scratch(entry, "proxy")


def _is_own(entry: JSON) -> bool:
    """scratch's own server (``scratch mcp serve``, as ``mcp install`` writes it, or the
    proxy): never an upstream of the proxy, whose own tools already include scratch's."""
    return _is_proxy(entry) or _is_scratch(entry, "serve")


def wrap_file(path: str | Path, extra_args: list[str] | None = None) -> JSONObject:
    """Put every server of the client config at ``path`` behind the proxy (see the module)."""
    p = Path(path).resolve()
    data = read_json(p)
    key = "mcpServers" if isinstance(data, dict) and "mcpServers" in data else "servers"
    table = _table(data, str(p))
    if STASH in data and table is data[STASH].get("mcpServers"):
        live = data.get(key) or {}
        moved = [n for n, e in live.items() if not _is_proxy(e)]
    else:
        live, moved = table, [n for n, e in table.items() if not _is_proxy(e)]
    stash = data.setdefault(STASH, {}).setdefault("mcpServers", {})
    for name in moved:
        entry = live[name]
        if isinstance(entry, dict) and entry.get("disabled") is True:
            continue  # left where it is: the client does not start it either
        stash[name] = entry
    # scratch's own server (mcp install's entry) is stashed too, so --undo puts it back, but
    # not wrapped: the proxy offers scratch's tools itself, under the same entry name
    wrapped = [n for n in moved if n in stash and stash[n] is live.get(n)
               and not _is_own(stash[n])]
    replaced = [n for n in moved if n in stash and stash[n] is live.get(n) and n not in wrapped]
    if not wrapped and PROXY_ENTRY in live:
        return {"file": str(p), "wrapped": [], "backup": None, "unchanged": True}
    backup = back_up(p)
    rest = {n: e for n, e in live.items() if n not in wrapped and n not in replaced}
    entry_name = PROXY_ENTRY if PROXY_ENTRY not in rest or _is_proxy(rest[PROXY_ENTRY]) \
        else "scratch-proxy"
    cmd = _scratch_command()
    proxy_entry: JSONObject = {"command": cmd[0], "args": [
        *cmd[1:], "mcp", "proxy", "--config", str(p), *(extra_args or [])]}
    if key == "servers":
        proxy_entry = {"type": "stdio", **proxy_entry}
    data[key] = {**rest, entry_name: proxy_entry}
    _write(p, data)
    return {"file": str(p), "wrapped": sorted(n for n in stash if not _is_own(stash[n])),
            "entry": entry_name, "backup": str(backup), "unchanged": False}


def unwrap_file(path: str | Path) -> JSONObject:
    """Undo :func:`wrap_file`: the stashed servers back in place, the proxy entry gone."""
    p = Path(path).resolve()
    data = read_json(p)
    if not isinstance(data, dict) or not isinstance(data.get(STASH), dict):
        raise ServerConfigError(f"{p} is not wrapped by scratch (no {STASH} table)",
                                path=str(p))
    key = "servers" if "servers" in data and "mcpServers" not in data else "mcpServers"
    stash = data.pop(STASH).get("mcpServers") or {}
    live = {n: e for n, e in (data.get(key) or {}).items() if not _is_proxy(e)}
    data[key] = {**stash, **{n: e for n, e in live.items() if n not in stash}}
    _write(p, data)
    return {"file": str(p), "restored": sorted(stash), "unchanged": False}
