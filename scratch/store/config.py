"""Effective settings: defaults < ``scratch.toml`` at the store root < its ``[agents.NAME]``
table for the agent asking < environment < flags.

Invariants:
- Every key has one declared type and default in :data:`SETTINGS`; an unknown key or a wrong type
  in ``scratch.toml`` or the environment is a :class:`~scratch.errors.ConfigError` naming the key.
- :class:`Config` remembers where each value came from, so ``scratch config`` can say it.
- Environment variables: ``SCRATCH_MODEL`` for ``model`` and ``SCRATCH_<SECTION>_<KEY>`` (upper
  case, dots as underscores) for every scalar key, e.g. ``SCRATCH_BUDGET_SAFETY_MARGIN=0.1``.
  Tables (``thresholds``, ``budget.windows``) come only from the file.
- ``[agents.NAME]`` tables hold any setting for one agent (budget, caps, thresholds, model...):
  a scalar replaces the file's value, a table's entries are added to (or replace those of) the
  file's table. Each agent's table is checked like the rest of the file, whoever asks.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeAlias

from scratch.errors import ConfigError

if TYPE_CHECKING:
    from scratch.jsonvalues import Incoming

CONFIG_FILE = "scratch.toml"
MiB = 1024 * 1024


# a setting's value, of its Setting.type (list: of str; dict: str -> int, or the two tables
# _coerce_servers and _coerce_switches make)
Value: TypeAlias = ("int | float | str | bool | list[str] | dict[str, int] | dict[str, bool]"
                    " | dict[str, dict[str, int]] | None")


class Setting(NamedTuple):
    key: str
    type: type
    default: Value
    help: str


def _s(key: str, typ: type, default: Value, help: str) -> Setting:
    return Setting(key, typ, default, help)


SETTINGS: dict[str, Setting] = {
    s.key: s
    for s in [
        _s("model", str, "", "model whose tokenizer prices every answer (gpt-4o, claude-sonnet-4, "
           "gemini-2.5-pro ...); empty means o200k_base"),
        _s("encoding", str, "",
           "force a tokenizer: o200k_base, cl100k_base, gemma3 or claude"),
        _s("tokens.claude_factor", float, 1.1,
           "Claude estimate = ceil(cl100k_base count x factor)"),
        _s("budget.context_window", int, 128000,
           "context window for models not in the table"),
        _s("budget.safety_margin", float, 0.20, "share of the window kept free (0-0.95)"),
        _s("budget.max_extraction_tokens", int, 10000,
           "per-call cap on tokens one answer may print"),
        _s("budget.windows", dict, {},
           "table: model prefix -> context window, overrides built-ins"),
        _s("limits.max_write_bytes", int, 64 * MiB, "largest content one write may store"),
        _s("limits.max_ingest_bytes", int, 4096 * MiB, "largest output ingest or run may store"),
        _s("limits.max_log_entry_bytes", int, 64 * 1024, "largest single log entry"),
        _s("quota.files", int, 1000, "entries (files and outputs) an agent may keep"),
        _s("quota.log_entries", int, 100000, "log entries an agent may keep across its logs"),
        _s("quota.bytes", int, 1024 * MiB, "bytes of current content an agent may keep"),
        _s("thresholds", dict, {}, "table: tool-name glob -> min_tokens at which ingest stores"),
        _s("mcp.servers", dict, {}, "tables [mcp.servers.NAME.scratchpad]: tool-name glob -> "
           "{ min_tokens = N } at which the MCP proxy stores a result of server NAME"),
        _s("mcp.tools", str, "explore", "the tools 'mcp serve' offers: explore (exploring a "
           "stored entry), files (versioned files and logs), run (a run's artifacts and "
           "finish) or all, or several joined by commas (a server of a run adds run to the "
           "default)"),
        _s("mcp.proxy_tools", str, "proxy", "scratch's tools 'mcp proxy' offers beside its "
           "servers': proxy (a few to explore a stored output), explore, files or all"),
        _s("sql.copy", str, "auto", "when sql makes the columnar copy of a table it reads "
           "(kept per version in the cache): auto (small tables before the query, big ones "
           "in the background after it), foreground, background or off"),
        _s("summarize.command", str, "",
           "command that summarizes content on stdin (e.g. an LLM CLI)"),
        _s("summarize.llm_model", str, "", "the llm library's model that writes summarize "
           "--by-model's summary when no MCP client offers its own (empty: llm's default)"),
        _s("summarize.max_model_calls", int, 9, "most model calls one --by-model summary "
           "makes: one per part that fits the model's window, one to combine them"),
        _s("summarize.max_summary_tokens", int, 1000,
           "longest answer --by-model asks of a model per call"),
        _s("summarize.sampling_timeout", float, 120.0, "seconds the MCP server waits for the "
           "client's model to answer one sampling request"),
        _s("sync.auto", bool, False,
           "after each change, sync every remote in the background (the sync command)"),
        _s("sync.max_file_bytes", int, 50 * MiB,
           "outputs bigger than this stay local: left out of every push"),
        _s("progress.after", float, 1.0, "seconds a command runs before it shows its progress "
           "(on stderr at a terminal; to an MCP client that sent a progressToken); 0: at once"),
        _s("ledger.max_bytes", int, 8 * MiB, "largest an agent's call ledger "
           "(state/agents/NAME/calls.jsonl) grows before its oldest calls are dropped"),
        _s("hooks.hint_builtin", bool, True, "Codex's hook (hooks install codex) hints a run "
           "under scratch before the usually big commands it knows (kubectl get -o json, "
           "journalctl, aws, gh api, cat of a big file...); false: only before tools with "
           "[thresholds] patterns"),
        _s("redact.enabled", bool, True, "redact secrets in every capture before it is stored "
           "(ingest, run, write, log append, the proxy, hooks; see man scratch-redactions)"),
        _s("redact.tools", dict, {}, "table: tool-name glob -> true/false, redaction for that "
           "tool's captures (longest pattern wins; on a tie, redaction)"),
        _s("redact.allow", list, [], "RE2 patterns: a value one of them finds is kept as it is"),
        _s("ledger.sync_log", str, "", "a log each sync first appends the synced agents' new "
           "calls to, so the remote gets them (empty: the ledger stays in this store)"),
        _s("retention.max_age", str, "", "gc removes entries unchanged for longer than this, "
           "as rm does (history kept): 30d, 12h, 2w; empty: kept forever"),
        _s("retention.keep_versions", int, 0, "gc keeps only the newest N versions of a file "
           "or output readable (history keeps the rest); 0: every version"),
        _s("cache.max_bytes", int, 0, "gc holds the store's cache/ under this many bytes, "
           "removing the oldest first; 0: no limit"),
    ]
}

ENV_PREFIX = "SCRATCH_"


def env_name(key: str) -> str:
    return ENV_PREFIX + key.replace(".", "_").upper()


class Config:
    """Every setting's value and where it came from (``default``, ``scratch.toml``, ``env``...)."""

    __slots__ = ("values", "sources", "path")

    def __init__(self, values: dict[str, Value] | None = None,
                 sources: dict[str, str] | None = None, path: Path | None = None) -> None:
        self.values: dict[str, Value] = {} if values is None else values
        self.sources: dict[str, str] = {} if sources is None else sources
        self.path = path

    def __repr__(self) -> str:
        return f"Config(values={self.values!r}, sources={self.sources!r}, path={self.path!r})"

    # Any, once: a value's type is its setting's (SETTINGS[key].type), which the key names;
    # typed accessors per key would be the fix, a change of every caller
    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    def get(self, key: str, default: Value = None) -> Any:  # as __getitem__
        return self.values.get(key, default)

    def set_override(self, key: str, value: Incoming, source: str) -> None:
        if value is None:
            return
        self.values[key] = _coerce(key, value, source)
        self.sources[key] = source

    def describe(self) -> list[dict[str, Value]]:
        return [
            {"key": k, "value": self.values[k], "source": self.sources[k], "help": SETTINGS[k].help}
            for k in SETTINGS
        ]


def _coerce_servers(value: Incoming, source: str) -> dict[str, dict[str, int]]:
    """``[mcp.servers.NAME.scratchpad]`` tables (Mezmo Aura's shape: ``"glob" = { min_tokens
    = N }``, a bare ``N`` also taken) -> ``{NAME: {glob: N}}``."""
    if not isinstance(value, Mapping):
        raise ConfigError(f"mcp.servers must be a table of [mcp.servers.NAME] tables ({source})",
                          key="mcp.servers", source=source)
    out: dict[str, dict[str, int]] = {}
    for server, table in value.items():
        where = f"mcp.servers.{server}"
        if not isinstance(table, Mapping) or set(table) - {"scratchpad"}:
            raise ConfigError(f"[{where}] takes only a scratchpad table ({source})",
                              key=where, source=source)
        patterns = table.get("scratchpad", {})
        if not isinstance(patterns, Mapping):
            raise ConfigError(f"{where}.scratchpad must be a table ({source})",
                              key=f"{where}.scratchpad", source=source)
        out[str(server)] = {}
        for pattern, rule in patterns.items():
            number = rule.get("min_tokens") if isinstance(rule, Mapping) else rule
            if (isinstance(rule, Mapping) and set(rule) != {"min_tokens"}) or isinstance(
                    number, bool) or not isinstance(number, int) or number < 0:
                raise ConfigError(f"{where}.scratchpad.{pattern} must be {{ min_tokens = N }} "
                                  f"with N >= 0, got {rule!r} ({source})",
                                  key=f"{where}.scratchpad.{pattern}", source=source)
            out[str(server)][str(pattern)] = number
    return out


def _coerce_switches(key: str, value: Incoming, source: str) -> dict[str, bool]:
    """A table of tool-name glob -> true/false (``[redact.tools]``)."""
    if not isinstance(value, Mapping):
        raise ConfigError(f"{key} must be a table, got {type(value).__name__} ({source})",
                          key=key, source=source)
    out: dict[str, bool] = {}
    for pattern, flag in value.items():
        if not isinstance(flag, bool):
            raise ConfigError(f"{key}.{pattern} must be true or false, got {flag!r} ({source})",
                              key=f"{key}.{pattern}", source=source)
        out[str(pattern)] = flag
    return out


_BOOL_WORDS = {"true": True, "1": True, "yes": True, "on": True,
               "false": False, "0": False, "no": False, "off": False}


def _coerce(key: str, value: Incoming, source: str) -> Value:
    setting = SETTINGS[key]
    typ = setting.type
    if key == "mcp.servers":
        return _coerce_servers(value, source)
    if key == "redact.tools":
        return _coerce_switches(key, value, source)
    if typ is list:
        if isinstance(value, str):  # the environment: patterns one a line
            value = [v for v in value.split("\n") if v]
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{key} must be a list of strings ({source})", key=key,
                              source=source)
        if key == "redact.allow":
            from scratch.redact.policy import check_allow
            check_allow(list(value))
        return list(value)
    if typ is dict:
        if not isinstance(value, Mapping):
            raise ConfigError(f"{key} must be a table, got {type(value).__name__} ({source})",
                              key=key, source=source)
        out: dict[str, int] = {}
        for pattern, number in value.items():
            if isinstance(number, bool) or not isinstance(number, int) or number < 0:
                raise ConfigError(f"{key}.{pattern} must be a non-negative integer, got {number!r} "
                                  f"({source})", key=f"{key}.{pattern}", source=source)
            out[str(pattern)] = number
        return out
    if typ is bool:  # true/false in TOML; 1/0, true/false, yes/no in the environment
        if isinstance(value, str) and value.strip().lower() in _BOOL_WORDS:
            return _BOOL_WORDS[value.strip().lower()]
        if isinstance(value, bool):
            return value
        raise ConfigError(f"{key} must be true or false, got {value!r} ({source})",
                          key=key, source=source)
    if isinstance(value, str) and typ is not str:
        try:
            value = typ(value.replace("_", "")) if typ is int else typ(value)
        except ValueError:
            raise ConfigError(f"{key} must be {typ.__name__}, got {value!r} ({source})",
                              key=key, source=source) from None
    if typ is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if isinstance(value, bool) or not isinstance(value, typ):
        raise ConfigError(f"{key} must be {typ.__name__}, got {type(value).__name__} "
                          f"{value!r} ({source})", key=key, source=source)
    if isinstance(value, (int, float)) and value < 0:
        raise ConfigError(f"{key} must not be negative, got {value!r} ({source})",
                          key=key, source=source)
    if key == "retention.max_age" and isinstance(value, str) and value \
            and parse_duration(value) is None:
        raise ConfigError(f"{key} must be a duration such as 30d, 12h or 2w (s, m, h, d, w), "
                          f"got {value!r} ({source})", key=key, source=source)
    assert isinstance(value, (int, float, str))  # the other types returned above
    return value


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_duration(text: str) -> float | None:
    """Seconds in ``30d``, ``12h``, ``2w``, ``90m``, ``45s`` (a positive whole or decimal
    number and one unit); None when ``text`` is not one."""
    text = text.strip()
    number, unit = text[:-1], text[-1:]
    if unit not in _UNITS or not number.replace(".", "", 1).isdigit():
        return None
    seconds = float(number) * _UNITS[unit]
    return seconds if seconds > 0 else None


def _flatten(data: Mapping[str, Incoming], prefix: str = "") -> dict[str, Incoming]:
    out: dict[str, Incoming] = {}
    for k, v in data.items():
        key = f"{prefix}{k}"
        if key in SETTINGS:
            out[key] = v
        elif isinstance(v, Mapping):
            out.update(_flatten(v, key + "."))
        else:
            out[key] = v
    return out


def _agent_tables(agents: Incoming) -> dict[str, dict[str, Incoming]]:
    """The ``[agents.NAME]`` tables, flattened and checked (unknown keys name the agent)."""
    from scratch.store.names import AGENT_RE
    if not isinstance(agents, Mapping):
        raise ConfigError(f"agents in {CONFIG_FILE} must be a table of [agents.NAME] tables",
                          key="agents")
    out: dict[str, dict[str, Incoming]] = {}
    for name, table in agents.items():
        if not AGENT_RE.fullmatch(str(name)) or not isinstance(table, Mapping):
            raise ConfigError(f"[agents.{name}] in {CONFIG_FILE} must be a table named after "
                              "an agent (A-Z a-z 0-9 _ -)", key=f"agents.{name}")
        values = _flatten(table)
        for key in values:
            if key not in SETTINGS:
                raise ConfigError(f"unknown key {key!r} in [agents.{name}] of {CONFIG_FILE}",
                                  key=f"agents.{name}.{key}", known=sorted(SETTINGS))
        out[str(name)] = values
    return out


def load_config(root: Path | None, environ: Mapping[str, str] | None = None,
                agent: str | None = None) -> Config:
    """Read ``scratch.toml`` (if any), its ``[agents.<agent>]`` table and the environment over
    the defaults."""
    environ = os.environ if environ is None else environ
    cfg = Config(
        values={k: copy.copy(s.default) for k, s in SETTINGS.items()},  # tables: their own
        sources={k: "default" for k in SETTINGS},
    )
    if root is not None:
        path = root / CONFIG_FILE
        cfg.path = path
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            raw = None
        except OSError as exc:
            raise ConfigError(f"cannot read {CONFIG_FILE}: {exc.strerror}") from None
        if raw is not None:
            import tomllib  # only when there is a file to read

            try:
                data = tomllib.loads(raw.decode("utf-8"))
            except (ValueError, UnicodeDecodeError) as exc:  # TOMLDecodeError is one
                raise ConfigError(f"{CONFIG_FILE} is not valid TOML: {exc}") from None
            agents = data.pop("agents", {})
            for key, value in _flatten(data).items():
                if key not in SETTINGS:
                    raise ConfigError(f"unknown key {key!r} in {CONFIG_FILE}", key=key,
                                      known=sorted(SETTINGS))
                cfg.values[key] = _coerce(key, value, CONFIG_FILE)
                cfg.sources[key] = CONFIG_FILE
            for name, values in _agent_tables(agents).items():
                source = f"{CONFIG_FILE} [agents.{name}]"
                for key, value in values.items():
                    value = _coerce(key, value, source)
                    if name != agent:
                        continue
                    had = cfg.values[key]
                    if isinstance(value, dict) and isinstance(had, dict):
                        value = {**had, **value}
                    cfg.values[key] = value
                    cfg.sources[key] = source
    for key, setting in SETTINGS.items():
        if setting.type is dict:
            continue
        name = env_name(key)
        if name in environ and environ[name] != "":
            cfg.values[key] = _coerce(key, environ[name], f"env {name}")
            cfg.sources[key] = f"env {name}"
    return cfg
