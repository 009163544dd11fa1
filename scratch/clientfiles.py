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
- Only the standard library and scratch's own errors and file helpers: the CLI imports this
  without the MCP SDK.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from scratch.errors import ScratchError, UsageError

BACKUP_SUFFIX = ".scratch-backup"


class ServerConfigError(UsageError):
    """A client config file scratch cannot use as it is (not JSON, no servers table, ...)."""

    code = "server_config_error"


def read_json(path: Path) -> Any:
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


def read_object(path: Path) -> dict[str, Any] | None:
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


def write_json(path: Path, data: Any) -> None:
    """Replace (or create) ``path`` with ``data`` as indented JSON, atomically, keeping the
    existing file's permissions (a new file: 0600, its directories made)."""
    from scratch.locking import atomic_write
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

