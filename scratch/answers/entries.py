"""Operations on versioned files, the store and its settings. Each returns a Result."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scratch import stats
from scratch.answers.kernel.context import Context
from scratch.answers.kernel.result import Result, Table, Words
from scratch.calls import call
from scratch.errors import UsageError
from scratch.gitstore import GitStore
from scratch.names import STORE_DIR_NAME, split_ref, validate_name
from scratch.store import Store


def init(directory: Path) -> Result:
    root = (directory / STORE_DIR_NAME).absolute()
    existed = GitStore(root).exists()
    Store.open(root)
    data = {"store": str(root), "created": not existed}
    verb = "Already a scratch store" if existed else "Created a scratch store"
    return Result("init", data=data, text=f"{verb} at {root}\n")


def write(ctx: Context, name: str, content: bytes | None = None, source: str | None = None,
          allow_empty: bool = False) -> Result:
    """Store ``content`` (or the bytes of the file ``source``) as the next version of NAME.

    Every interface is held to the same limits here: content over ``limits.max_write_bytes``
    and empty content (unless ``allow_empty``) are refused before anything is stored."""
    validate_name(name)
    limit = ctx.config["limits.max_write_bytes"]
    if content is None:
        content = read_file(source, limit=limit, what="content", allow_empty=allow_empty)
    elif len(content) > limit:
        from scratch.errors import LimitExceeded
        raise LimitExceeded(f"the content is {len(content):,} bytes, over "
                            f"limits.max_write_bytes ({limit:,} bytes)", code="write_too_large",
                            limit="limits.max_write_bytes", limit_value=limit,
                            attempted_at_least=len(content))
    elif not content and not allow_empty:
        raise UsageError("the content was empty: nothing to store (allow_empty stores an "
                         "empty file)", code="empty_input")
    data = content
    rec = ctx.store().write(name, data)
    out = {k: rec[k] for k in ("name", "version", "bytes", "lines", "unchanged")}
    if rec["unchanged"]:
        text = f"{name}: unchanged (version {rec['version']})\n"
    else:
        size = (f"{rec['bytes']:,} byte{'' if rec['bytes'] == 1 else 's'}, "
                f"{rec['lines']:,} line{'' if rec['lines'] == 1 else 's'}")
        text = f"{name}: version {rec['version']} ({size})\n"
    return Result("write", data=out, text=text)


def history(ctx: Context, name: str) -> Result:
    rows = ctx.store().history(name)
    table = Table(["version", "time", "bytes", "lines", "commit", "message"],
                  [[r["version"], r["time"], r["bytes"], r["lines"], r["commit"], r["message"]]
                   for r in rows])
    return Result("history", data={"name": name, "versions": rows}, table=table)


def restore(ctx: Context, ref: str) -> Result:
    name, version = split_ref(ref)
    if version is None:
        raise UsageError("restore needs a version: restore NAME@N", code="invalid_ref",
                         suggestions=[call("history", name=name)])
    rec = ctx.store().restore(name, version)
    data = {"name": name, "restored_from": version, "version": rec["version"],
            "unchanged": rec["unchanged"]}
    text = (f"{name}: version {version} is already the current content\n" if rec["unchanged"]
            else f"{name}: restored version {version} as version {rec['version']}\n")
    return Result("restore", data=data, text=text)


def remove(ctx: Context, name: str) -> Result:
    rec = ctx.store().remove(name)
    if rec["kind"] == "log":
        return Result("rm", data=rec, text=f"Deleted log {name}\n")
    back = call("restore", ref=f"{name}@{rec['versions']}")
    return Result("rm", data=rec, text=Words((f"Deleted {rec['kind']} {name}; ", back,
                                              " brings it back\n")))


def ls(ctx: Context, prefix: str = "") -> Result:
    rows = ctx.store().list(prefix)
    table = Table(["name", "kind", "version", "bytes", "lines", "updated"],
                  [[r["name"], r["kind"], r["version"] if r["version"] is not None else "-",
                    r["bytes"], r["lines"], r["updated"]] for r in rows])
    return Result("ls", data={"agent": ctx.agent, "entries": rows}, table=table)


def store_stats(ctx: Context, agent: str | None = None) -> Result:
    """Every agent's entries and counters; or (``agent``) that agent's row alone, and when it
    is the context's own agent, flat (no store path) with its budget session's counters."""
    store = ctx.store()
    agents_dir = store.root / "agents"
    if agent is not None:
        from scratch.names import validate_agent
        validate_agent(agent)
        agents = [agent]
    else:
        agents = sorted(p.name for p in agents_dir.iterdir()) if agents_dir.is_dir() else []
    rows = []
    for who in agents:
        usage = Store(store.root, who, store.config).usage()
        counters = stats.load(store.root, who)
        rows.append({"agent": who, **usage, "operations": counters.get("operations", {}),
                     "tokens_intercepted": counters.get("tokens_intercepted", 0),
                     "tokens_extracted": counters.get("tokens_extracted", 0)})
    table = Table(["agent", "files", "logs", "log entries", "bytes", "operations"],
                  [[r["agent"], r["files"], r["logs"], r["log_entries"], r["bytes"],
                    ", ".join(f"{k} {v}" for k, v in sorted(r["operations"].items()))]
                   for r in rows])
    if agent is None or agent != ctx.agent:
        return Result("stats", data={"store": str(store.root), "agents": rows}, table=table)
    # one agent's own figures: its row (no store path, no other agent) and its session's
    from scratch.answers.kernel.prices import budget_for
    view = budget_for(ctx).status()
    r = rows[0]
    data = {**r, "session": {"session": ctx.session, **{k: view[k] for k in (
        "calls", "extracted", "intercepted", "used", "remaining")}}}
    ops = ", ".join(f"{k} {v}" for k, v in sorted(r["operations"].items())) or "-"
    text = "".join(f"{k}: {v}\n" for k, v in (
        ("agent", agent), ("files", r["files"]), ("logs", r["logs"]),
        ("log entries", r["log_entries"]), ("bytes", r["bytes"]), ("operations", ops),
        ("tokens intercepted", r["tokens_intercepted"]),
        ("tokens extracted", r["tokens_extracted"]),
        ("session", f"{ctx.session}: {view['calls']} calls, {view['extracted']} extracted, "
                    f"{view['intercepted']} intercepted, {view['remaining']} left")))
    return Result("stats", data=data, text=text)


def show_config(ctx: Context) -> Result:
    rows = ctx.config.describe()
    data = {"store": str(ctx.root), "store_source": ctx.root_source,
            "config_file": str(ctx.config.path) if ctx.config.path else None,
            "agent": ctx.agent, "session": ctx.session, "settings": rows}
    table = Table(["key", "value", "source"],
                  [["store", str(ctx.root), ctx.root_source], ["agent", ctx.agent, ""]]
                  + [[r["key"], _show(r["value"]), r["source"]] for r in rows])
    return Result("config", data=data, table=table)


def _show(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items()) or "{}"
    return str(value)


def git_passthrough(ctx: Context, args: list[str]) -> int:
    """Run git on the whole store (every agent's entries): a tool for people, not agents."""
    return ctx.store(create=False).git.run_user(args)


def threshold(ctx: Context, tool: str, server: str | None = None) -> Result:
    """Which [thresholds] pattern decides TOOL's ingest threshold, and why; with ``server``,
    the threshold at which ``scratch mcp proxy`` stores a result of that server's TOOL."""
    from scratch.thresholds import resolve_server_threshold, resolve_threshold
    if server is None:
        t = resolve_threshold(tool, ctx.config["thresholds"])
    else:
        t = resolve_server_threshold(server, tool, ctx.config["mcp.servers"],
                                     ctx.config["thresholds"])
    src = f"pattern {t.pattern!r}" if t.pattern else "the default"
    if server is not None and t.pattern:
        src += f" of [{t.table}]"
    who = tool if server is None else f"{server} {tool}"
    return Result("config threshold", data=t.as_dict(),
                  text=f"{who}: min_tokens {t.min_tokens} from {src} ({t.reason})\n")


def read_file(source: str | None, *, limit: int | None = None, what: str = "input",
              allow_empty: bool = False) -> bytes:
    """The bytes of the file ``source`` (at most ``limit``; an empty one refused unless
    allowed), with a clear error for what cannot be read."""
    if source is None:
        raise UsageError(f"no {what} given", code="no_input")
    try:
        with open(source, "rb") as fh:
            data = fh.read(limit + 1) if limit is not None else fh.read()
    except FileNotFoundError:
        from scratch.errors import ScratchError
        raise ScratchError(f"no such file: {source}", code="file_not_found",
                           path=source) from None
    except IsADirectoryError:
        raise UsageError(f"{source} is a directory, not a file",
                         code="invalid_argument") from None
    except PermissionError:
        from scratch.errors import ScratchError
        raise ScratchError(f"cannot read {source}: permission denied",
                           code="permission_denied", path=source) from None
    if limit is not None and len(data) > limit:
        from scratch.errors import LimitExceeded
        raise LimitExceeded(f"{what} from {source} is over limits.max_write_bytes ({limit:,} "
                            "bytes)", code="write_too_large", limit="limits.max_write_bytes",
                            limit_value=limit, attempted_at_least=len(data))
    if not data and not allow_empty:
        hint = " (use --allow-empty to store an empty file)" if what == "content" else ""
        raise UsageError(f"{source} was empty: nothing to store{hint}", code="empty_input")
    return data
