"""MCP clients' JSON config files, read and rewritten without losing anything: the one place
``scratch mcp wrap`` and ``scratch mcp install`` touch a file a client owns.

Invariants:
- A file is parsed whole before anything is written; one that is not a JSON object is refused
  (``server_config_error``, naming the file) and left as it was.
- Before scratch first rewrites a file, its original bytes are copied to
  ``FILE.scratch-backup`` (once: an existing backup is kept, so it always holds the file as it
  was before scratch first changed it).
- A rewrite is atomic (a reader sees the old file or the new one) and keeps the file's
  permissions; a file scratch creates is private to its owner (0600: these files hold secrets).
- Only the standard library and scratch's own errors and file helpers (and, for Codex's
  ``config.toml``, tomlkit, which rewrites a TOML file keeping its comments and layout): the CLI
  imports this without the MCP SDK.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from scratch.errors import ScratchError, UsageError

if TYPE_CHECKING:
    from scratch.jsonvalues import Incoming

BACKUP_SUFFIX = ".scratch-backup"


class ServerConfigError(UsageError):
    """A client config file scratch cannot use as it is (not JSON, no servers table, ...)."""

    code = "server_config_error"


def read_json(path: Path) -> Incoming:
    """The parsed content of ``path``; a missing, unreadable or invalid file is an error."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ScratchError(f"no such file: {path}", code="file_not_found",
                           path=str(path)) from None
    except OSError as exc:
        raise ScratchError(f"cannot read {path}: {exc.strerror}", code="permission_denied",
                           path=str(path)) from None
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ServerConfigError(f"{path} is not valid JSON: {exc}", path=str(path)) from None


def read_object(path: Path) -> dict[str, Incoming] | None:
    """The JSON object in ``path``, or None when there is no file yet (an empty file counts as
    none: clients create them so)."""
    if not path.exists() or (path.is_file() and path.stat().st_size == 0):
        return None
    data = read_json(path)
    if not isinstance(data, dict):
        raise ServerConfigError(f"{path} is not a JSON object", path=str(path))
    return data


def backup_path(path: Path) -> Path:
    return path.with_name(path.name + BACKUP_SUFFIX)


def back_up(path: Path) -> Path | None:
    """Copy ``path`` to its backup unless one exists; the backup (None: no file to keep)."""
    if not path.exists():
        return None
    backup = backup_path(path)
    if not backup.exists():
        shutil.copy2(path, backup)
    return backup


def write_json(path: Path, data: object) -> None:
    """Replace (or create) ``path`` with ``data`` as indented JSON, atomically, keeping the
    existing file's permissions (a new file: 0600, its directories made)."""
    from scratch.store.locking import atomic_write
    if path.exists():
        mode = path.stat().st_mode & 0o777
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        mode = 0o600
    atomic_write(path, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode())
    os.chmod(path, mode)


def scratch_command() -> list[str]:
    """How a client should start this scratch: the ``scratch`` script of this install (next to
    its interpreter, as pipx, uv tool and venvs lay it out), else the one on PATH, else this
    interpreter with ``-m scratch``. An absolute path: clients start servers with a PATH of
    their own."""
    beside = Path(sys.executable).parent / "scratch"
    if beside.is_file() and os.access(beside, os.X_OK):
        return [str(beside)]
    found = shutil.which("scratch")
    return [found] if found else [sys.executable, "-m", "scratch"]


# ---- `scratch mcp install CLIENT`: one entry that starts `scratch mcp serve` ---------------

ENTRY = "scratch"


class Client:
    """Where one MCP client keeps its servers, and the shape of one stdio entry there."""

    def __init__(self, name: str, label: str, table: str, typed: bool,
                 toml: bool = False) -> None:
        self.name = name
        self.label = label  # as its users know it
        self.table = table  # the top-level key of the servers table
        self.typed = typed  # entries carry "type": "stdio"
        self.toml = toml  # the file is TOML (Codex), else JSON

    def default_file(self, environ: dict[str, str] | None = None) -> Path:
        environ = dict(os.environ if environ is None else environ)
        home = Path.home()
        if self.name == "claude-code":
            return home / ".claude.json"  # user scope; a project's is .mcp.json (--config)
        if self.name == "cursor":
            return home / ".cursor" / "mcp.json"
        if self.name == "vscode":
            return Path.cwd() / ".vscode" / "mcp.json"  # the workspace in the current directory
        if self.name == "codex":
            return Path(environ.get("CODEX_HOME") or home / ".codex") / "config.toml"
        if self.name == "gemini-cli":
            return home / ".gemini" / "settings.json"
        if self.name == "windsurf":
            return home / ".codeium" / "windsurf" / "mcp_config.json"
        if sys.platform == "darwin":
            base = home / "Library" / "Application Support"
        elif sys.platform == "win32":
            base = Path(environ.get("APPDATA") or home / "AppData" / "Roaming")
        else:
            base = Path(environ.get("XDG_CONFIG_HOME") or home / ".config")
        return base / "Claude" / "claude_desktop_config.json"

    def entry(self, command: list[str], store: Path, agent: str,
              tools: str | None = None) -> dict[str, object]:
        """The entry that runs ``scratch mcp serve`` on ``store`` as ``agent``, both given
        explicitly: the client starts it with an environment of its own (``tools``: its
        ``--tools`` set, when one is given)."""
        args = [*command[1:], "mcp", "serve", "--store", str(store)]
        if agent != "default":
            args += ["--agent", agent]
        if tools is not None:
            args += ["--tools", tools]
        entry: dict[str, object] = {"command": command[0], "args": args}
        return {"type": "stdio", **entry} if self.typed else entry


CLIENTS = {c.name: c for c in (
    Client("claude-code", "Claude Code", "mcpServers", typed=True),
    Client("claude-desktop", "Claude Desktop", "mcpServers", typed=False),
    Client("cursor", "Cursor", "mcpServers", typed=False),
    Client("vscode", "VS Code", "servers", typed=True),
    Client("codex", "Codex", "mcp_servers", typed=False, toml=True),
    Client("gemini-cli", "Gemini CLI", "mcpServers", typed=False),
    Client("windsurf", "Windsurf", "mcpServers", typed=False),
)}


class EntryExists(UsageError):
    """The file already has a different ``scratch`` entry (``--force`` replaces it)."""

    code = "entry_exists"


def client_named(name: str) -> Client:
    found = CLIENTS.get(name)
    if found is None:
        raise UsageError(f"unknown MCP client {name!r}: use one of {', '.join(CLIENTS)}",
                         code="invalid_argument", client=name)
    return found


def snippet(client: Client, entry: dict[str, object]) -> str:
    """What to merge into the client's file, as ``--print`` shows it (JSON, or TOML)."""
    if client.toml:
        import tomlkit
        return tomlkit.dumps({client.table: {ENTRY: entry}})
    return json.dumps({client.table: {ENTRY: entry}}, indent=2) + "\n"


def _shown(old: object) -> str:
    return " ".join([str(old.get("command", "?")), *map(str, old.get("args", []))]) \
        if isinstance(old, dict) else json.dumps(old)


def install_entry(client: Client, path: Path, entry: dict[str, object], *,
                  force: bool = False) -> dict[str, object]:
    """Add (or with ``force`` replace) the ``scratch`` entry in ``path`` (see the module's
    invariants); what was done. An identical entry already there changes nothing."""
    if client.toml:
        return _install_toml(client, path, entry, force=force)
    data = read_object(path)
    created = data is None
    data = {} if data is None else data
    table = data.get(client.table)
    if table is None:
        table = {}
    elif not isinstance(table, dict):
        raise ServerConfigError(f"{path}: {client.table!r} is not a JSON object",
                                path=str(path))
    old = table.get(ENTRY)
    done = {"client": client.name, "file": str(path), "entry": ENTRY, "server": entry,
            "created": created, "replaced": old is not None and old != entry,
            "unchanged": old == entry, "backup": None}
    if old == entry:
        return done
    if old is not None and not force:
        raise EntryExists(f"{path} already has an MCP server named {ENTRY!r} ({_shown(old)}); "
                          "--force replaces it (the file is backed up first)", path=str(path),
                          entry=ENTRY)
    backup = back_up(path)
    data[client.table] = {**table, ENTRY: entry}
    write_json(path, data)
    done["backup"] = str(backup) if backup else None
    return done


def _install_toml(client: Client, path: Path, entry: dict[str, object], *,
                  force: bool = False) -> dict[str, object]:
    """:func:`install_entry` for a TOML file (Codex's ``[mcp_servers.scratch]``): the rest of
    the file, comments and layout included, is kept byte for byte."""
    import tomlkit
    from tomlkit.exceptions import TOMLKitError
    created = not path.exists() or path.stat().st_size == 0
    try:
        doc = tomlkit.parse(b"" if created else path.read_bytes())
    except (TOMLKitError, UnicodeDecodeError) as exc:
        raise ServerConfigError(f"{path} is not valid TOML: {exc}", path=str(path)) from None
    except OSError as exc:
        raise ScratchError(f"cannot read {path}: {exc.strerror}", code="permission_denied",
                           path=str(path)) from None
    servers = doc.get(client.table)
    if servers is not None and not isinstance(servers, dict):
        raise ServerConfigError(f"{path}: {client.table!r} is not a table", path=str(path))
    old: Incoming = servers.get(ENTRY) if servers is not None else None
    old_value = old.unwrap() if hasattr(old, "unwrap") else old
    done = {"client": client.name, "file": str(path), "entry": ENTRY, "server": entry,
            "created": created, "replaced": old is not None and old_value != entry,
            "unchanged": old_value == entry, "backup": None}
    if old_value == entry:
        return done
    if old is not None and not force:
        raise EntryExists(f"{path} already has an MCP server named {ENTRY!r} "
                          f"({_shown(old_value)}); --force replaces it (the file is backed up "
                          "first)", path=str(path), entry=ENTRY)
    table = tomlkit.table()
    for key, value in entry.items():
        table[key] = value
    table.add(tomlkit.nl())
    if servers is None:
        outer = tomlkit.table(is_super_table=True)
        outer.add(ENTRY, table)
        doc.add(client.table, outer)
    else:
        servers[ENTRY] = table
    backup = back_up(path)
    from scratch.store.locking import atomic_write
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, tomlkit.dumps(doc).encode())
    os.chmod(path, mode)
    done["backup"] = str(backup) if backup else None
    return done
