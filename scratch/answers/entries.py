"""Operations on versioned files, the store and its settings. Each returns a Result."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scratch import stats
from scratch.answers.kernel.context import Context
from scratch.answers.kernel.result import Result, Table
from scratch.gitstore import GitStore
from scratch.names import STORE_DIR_NAME
from scratch.store import Store


def init(directory: Path) -> Result:
    root = (directory / STORE_DIR_NAME).absolute()
    existed = GitStore(root).exists()
    Store.open(root)
    data = {"store": str(root), "created": not existed}
    verb = "Already a scratch store" if existed else "Created a scratch store"
    return Result("init", data=data, text=f"{verb} at {root}\n")


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
