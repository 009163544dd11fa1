"""``scratch hooks install/uninstall CLIENT``: scratch's hook in a client's settings file.

Where and in which shape each client keeps hooks, as its documentation gives them:

- Claude Code: ``~/.claude/settings.json`` (user), ``.claude/settings.json`` (project),
  ``.claude/settings.local.json`` (local); ``{"hooks": {"PostToolUse": [{"matcher": REGEX,
  "hooks": [{"type": "command", "command": ..., "timeout": SECONDS}]}]}}``.
- Gemini CLI: ``~/.gemini/settings.json`` (user), ``.gemini/settings.json`` (project); the same
  shape under ``AfterTool``, with a ``name`` and ``timeout`` in milliseconds.
- Cursor: ``~/.cursor/hooks.json`` (user), ``.cursor/hooks.json`` (project); ``{"version": 1,
  "hooks": {"postToolUse": [{"command": ..., "matcher": REGEX, "timeout": SECONDS}]}}``.
- Codex: ``$CODEX_HOME/config.toml`` (``~/.codex``; user), ``.codex/config.toml`` (project),
  or the ``hooks.json`` beside it when that exists (Codex warns when one layer has both);
  ``[[hooks.PreToolUse]]`` groups with ``matcher`` and ``[[hooks.PreToolUse.hooks]]`` handlers
  ``{type = "command", command, timeout}`` (whole seconds), the same shape as JSON. In TOML
  scratch's group is appended as text after the user's (every byte of theirs kept, comments
  included; the result is checked with tomlkit) and removed the same way. Codex runs a new or
  changed hook only once the user has trusted it (``/hooks`` in Codex).

Invariants: the file is parsed whole, backed up (``FILE.scratch-backup``, once) and rewritten
atomically by :mod:`scratch.clientfiles`; only scratch's own hook (a command running ``scratch
hook CLIENT``) is ever added, replaced (only with ``force``) or removed; every other key, hook
and matcher group stays as it was, in order. Uninstalling what install added gives back the
file's content as it was (groups and tables scratch emptied are removed).
"""

from __future__ import annotations

import math
import os
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from scratch.clientfiles import back_up, read_object, scratch_command, write_json
from scratch.errors import UsageError

if TYPE_CHECKING:
    from scratch.jsonvalues import Incoming

JSONObject: TypeAlias = "dict[str, Incoming]"  # a client's settings file: checked where read


class HookExists(UsageError):
    """The settings already run a different scratch hook for this client (``--force``)."""

    code = "hook_exists"


class HookSettings:
    """One client's hook settings: files, event, default tools and entry shape."""

    def __init__(self, name: str, label: str, event: str, tools: tuple[str, ...],
                 files: dict[str, str], grouped: bool, ms: bool) -> None:
        self.name = name
        self.label = label
        self.event = event
        self.tools = tools  # the default matcher's alternatives
        self.files = files  # scope -> path (~ is home; others relative to the project)
        self.grouped = grouped  # {matcher, hooks: [...]} groups (else flat entries)
        self.ms = ms  # the timeout is in milliseconds

    def path(self, settings: str | None) -> Path:
        """The settings file: a scope's (user, project, local) or a file."""
        choice = settings or "user"
        if choice in self.files and self.name == "codex":
            folder = (Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")
                      if choice == "user" else Path.cwd() / ".codex")
            beside = folder / "hooks.json"
            return beside if beside.exists() else folder / "config.toml"
        if choice in self.files:
            where = self.files[choice]
            if where.startswith("~/"):
                return Path.home() / where[2:]
            base = os.environ.get("CLAUDE_PROJECT_DIR") if self.name == "claude-code" else None
            return Path(base or Path.cwd()) / where
        return Path(choice).expanduser().absolute()

    def matcher(self, tools: list[str] | None) -> str:
        return "|".join(tools or self.tools)

    def hook(self, command: str, timeout: float) -> JSONObject:
        """The hook handler as the client's file holds it."""
        limit: float = int(timeout * 1000) if self.ms else (int(timeout) if timeout ==
                                                            int(timeout) else timeout)
        if self.name == "codex":
            limit = max(1, math.ceil(timeout))  # Codex reads whole seconds
        entry: JSONObject = {"type": "command", "command": command, "timeout": limit}
        if self.name == "gemini-cli":
            entry = {"name": "scratch", **entry}
        if self.name == "cursor":
            entry = {"command": command, "timeout": limit}
        return entry

    def group(self, command: str, timeout: float, tools: list[str] | None) -> JSONObject:
        if not self.grouped:
            return {**self.hook(command, timeout), "matcher": self.matcher(tools)}
        return {"matcher": self.matcher(tools), "hooks": [self.hook(command, timeout)]}


SETTINGS = {s.name: s for s in (
    HookSettings("claude-code", "Claude Code", "PostToolUse",
                 ("Bash", "Read", "WebFetch", "Grep", "mcp__.*"),
                 {"user": "~/.claude/settings.json", "project": ".claude/settings.json",
                  "local": ".claude/settings.local.json"}, grouped=True, ms=False),
    HookSettings("gemini-cli", "Gemini CLI", "AfterTool",
                 ("run_shell_command", "read_file", "read_many_files", "web_fetch",
                  "search_file_content", "mcp_.*"),
                 {"user": "~/.gemini/settings.json", "project": ".gemini/settings.json"},
                 grouped=True, ms=True),
    HookSettings("cursor", "Cursor", "postToolUse", ("MCP:.*",),
                 {"user": "~/.cursor/hooks.json", "project": ".cursor/hooks.json"},
                 grouped=False, ms=False),
    HookSettings("codex", "Codex", "PreToolUse", ("Bash",),
                 {"user": "~/.codex/config.toml", "project": ".codex/config.toml"},
                 grouped=True, ms=False),
)}


def is_toml(path: Path) -> bool:
    return path.suffix == ".toml"


def toml_block(spec: HookSettings, group: JSONObject) -> str:
    """``group`` as the TOML scratch appends: ``[[hooks.EVENT]]`` and its handlers."""
    import tomlkit
    table = tomlkit.table()
    for key, value in group.items():
        if key != "hooks":
            table[key] = value
    handlers = tomlkit.aot()
    for hook in group["hooks"]:
        item = tomlkit.table()
        for key, value in hook.items():
            item[key] = value
        handlers.append(item)
    table["hooks"] = handlers
    events = tomlkit.aot()
    events.append(table)
    outer = tomlkit.table(is_super_table=True)
    outer.add(spec.event, events)
    doc = tomlkit.document()
    doc.add("hooks", outer)
    return tomlkit.dumps(doc)


def _read_toml(path: Path) -> tuple[str, JSONObject]:
    """The file's text ("" when there is none) and its content."""
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    from scratch.clientfiles import ServerConfigError
    try:
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        return text, tomlkit.parse(text).unwrap()
    except (TOMLKitError, UnicodeDecodeError) as exc:
        raise ServerConfigError(f"{path} is not valid TOML: {exc}", path=str(path)) from None


def _write_toml(path: Path, spec: HookSettings, text: str) -> None:
    """Write ``text`` after checking that it parses (atomically, the file's mode kept)."""
    from scratch.store.locking import atomic_write
    _check_toml(path, spec, text)
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, text.encode("utf-8"))
    os.chmod(path, mode)


def _check_toml(path: Path, spec: HookSettings, text: str) -> None:
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    from scratch.clientfiles import ServerConfigError
    try:
        data = tomlkit.parse(text).unwrap()
    except TOMLKitError as exc:
        raise ServerConfigError(f"{path}: its hooks are written in a form scratch cannot add "
                                f"a [[hooks.{spec.event}]] group to ({exc}); add it by hand "
                                "(--print shows it)", path=str(path)) from None
    _event_list(data, spec.event, path)


def settings_for(name: str) -> HookSettings:
    found = SETTINGS.get(name)
    if found is None:
        raise UsageError(f"unknown client {name!r} for hooks: use one of "
                         f"{', '.join(SETTINGS)} (for others see 'scratch mcp install')",
                         code="invalid_argument", client=name, choices=list(SETTINGS))
    return found


def hook_command(client: str, store: Path | None, agent: str | None, timeout: float
                 ) -> str:
    """The shell command the client runs: this install's ``scratch hook CLIENT``."""
    words = [*scratch_command(), "hook", client, "--timeout", f"{timeout:g}"]
    if store is not None:
        words += ["--store", str(store)]
    if agent is not None:
        words += ["--agent", agent]
    return shlex.join(words)


def is_scratch_hook(handler: Incoming, client: str) -> bool:
    """Whether a hook handler runs ``scratch hook CLIENT`` (any install of scratch)."""
    command = handler.get("command") if isinstance(handler, dict) else None
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    for i in range(1, len(words) - 1):
        if words[i] == "hook" and words[i + 1] == client:
            before = words[i - 1]
            if os.path.basename(before) in ("scratch", "scratch-mcp") or (
                    before == "scratch" and i >= 2 and words[i - 2] == "-m"):
                return True
    return False


def _event_list(data: JSONObject, event: str, path: Path) -> list[Incoming]:
    hooks = data.get("hooks")
    if hooks is None:
        return []
    if not isinstance(hooks, dict) or not isinstance(hooks.get(event, []), list):
        from scratch.clientfiles import ServerConfigError
        raise ServerConfigError(f"{path}: 'hooks' is not a table of event lists",
                                path=str(path))
    return list(hooks.get(event, []))


def _without_scratch(groups: list[Incoming], spec: HookSettings
                     ) -> tuple[list[Incoming], list[Incoming]]:
    """``groups`` with scratch's hooks taken out (emptied groups dropped), and the ones
    taken out."""
    kept: list[Incoming] = []
    removed: list[Incoming] = []
    for group in groups:
        if not spec.grouped:
            (removed if is_scratch_hook(group, spec.name) else kept).append(group)
            continue
        handlers = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(handlers, list):
            kept.append(group)
            continue
        ours = [h for h in handlers if is_scratch_hook(h, spec.name)]
        if not ours:
            kept.append(group)
            continue
        removed.append(group)
        rest = [h for h in handlers if not is_scratch_hook(h, spec.name)]
        if rest:
            kept.append({**group, "hooks": rest})
    return kept, removed


def install(spec: HookSettings, path: Path, group: JSONObject, *, force: bool = False
            ) -> JSONObject:
    """Add scratch's hook ``group`` to the settings at ``path`` (see the module)."""
    if is_toml(path):
        return _install_toml(spec, path, group, force=force)
    data = read_object(path)
    created = data is None
    data = {"version": 1} if data is None and spec.name == "cursor" else (data or {})
    groups = _event_list(data, spec.event, path)
    kept, removed = _without_scratch(groups, spec)
    done: JSONObject = {"client": spec.name, "file": str(path), "event": spec.event,
                        "hook": group, "created": created, "replaced": bool(removed),
                        "unchanged": False, "backup": None}
    if removed == [group] and kept + [group] == groups:
        done.update(unchanged=True, replaced=False)
        return done
    if removed and not force:
        shown = "; ".join(str(h.get("command") if not spec.grouped else
                              [x.get("command") for x in h.get("hooks", [])]) for h in removed)
        raise HookExists(f"{path} already runs a scratch hook for {spec.label} ({shown}); "
                         "--force replaces it (the file is backed up first)", path=str(path))
    backup = back_up(path)
    found = data.get("hooks")
    hooks: JSONObject = found if isinstance(found, dict) else {}
    data["hooks"] = {**hooks, spec.event: [*kept, group]}
    write_json(path, data)
    done["backup"] = str(backup) if backup else None
    return done


def _install_toml(spec: HookSettings, path: Path, group: JSONObject, *, force: bool
                  ) -> JSONObject:
    text, data = _read_toml(path)
    groups = _event_list(data, spec.event, path)
    kept, removed = _without_scratch(groups, spec)
    done: JSONObject = {"client": spec.name, "file": str(path), "event": spec.event,
                        "hook": group, "created": not text.strip(), "replaced": bool(removed),
                        "unchanged": False, "backup": None}
    if removed == [group] and kept + [group] == groups:
        done.update(unchanged=True, replaced=False)
        return done
    if removed and not force:
        shown = "; ".join(str([x.get("command") for x in h.get("hooks", [])]) for h in removed)
        raise HookExists(f"{path} already runs a scratch hook for {spec.label} ({shown}); "
                         "--force replaces it (the file is backed up first)", path=str(path))
    if removed:
        text = _toml_without(path, spec, text, removed)
    block = toml_block(spec, group)
    joined = text + ("" if not text else "\n" if text.endswith("\n") else "\n\n") + block
    backup = back_up(path)
    _write_toml(path, spec, joined)
    done["backup"] = str(backup) if backup else None
    return done


def _toml_without(path: Path, spec: HookSettings, text: str, removed: list[Incoming]) -> str:
    """``text`` without scratch's groups: each cut out as the text scratch appended when it is
    there as such, else taken out of the parsed document (comments elsewhere kept)."""
    import tomlkit
    for group in removed:
        block = toml_block(spec, group)
        at = text.rfind(block)
        if at >= 0:
            start = at - 1 if text[at - 1:at] == "\n" and at > 0 else at
            text = text[:start] + text[at + len(block):]
            continue
        doc = tomlkit.parse(text)
        events = doc["hooks"][spec.event]
        for i in range(len(events) - 1, -1, -1):
            handlers = events[i].get("hooks")
            if not isinstance(handlers, list):
                continue
            for j in range(len(handlers) - 1, -1, -1):
                if is_scratch_hook(handlers[j].unwrap(), spec.name):
                    del handlers[j]
            if not handlers:
                del events[i]
        if not events:
            del doc["hooks"][spec.event]
        if not doc["hooks"]:
            del doc["hooks"]
        text = tomlkit.dumps(doc)
    return text


def uninstall(spec: HookSettings, path: Path) -> JSONObject:
    """Remove scratch's hooks for ``spec`` from ``path``; every other hook stays."""
    done: JSONObject = {"client": spec.name, "file": str(path), "event": spec.event,
                        "removed": 0, "backup": None}
    if is_toml(path):
        text, parsed = _read_toml(path)
        gone = _without_scratch(_event_list(parsed, spec.event, path), spec)[1]
        if not gone:
            return done
        saved = back_up(path)
        _write_toml(path, spec, _toml_without(path, spec, text, gone))
        done.update(removed=len(gone), backup=str(saved) if saved else None)
        return done
    data = read_object(path)
    if data is None:
        return done
    groups = _event_list(data, spec.event, path)
    kept, removed = _without_scratch(groups, spec)
    if not removed:
        return done
    backup = back_up(path)
    hooks = dict(data["hooks"])
    if kept:
        hooks[spec.event] = kept
    else:
        hooks.pop(spec.event, None)
    if hooks:
        data["hooks"] = hooks
    else:
        data.pop("hooks", None)
    write_json(path, data)
    done.update(removed=len(removed), backup=str(backup) if backup else None)
    return done


__all__ = ["SETTINGS", "HookExists", "HookSettings", "hook_command", "install",
           "is_scratch_hook", "is_toml", "settings_for", "toml_block", "uninstall"]
