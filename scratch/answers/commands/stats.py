"""stats: per agent, entries, bytes (of the entries, of the call ledger with the answers it
keeps, and both), operations by kind, and the tokens kept out and put in;
from the call ledger (:mod:`scratch.store.ledger`), the tokens per command and per session; for the
whole store (no agent named), the bytes its rebuildable cache holds."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scratch.answers.kernel.result import Payload, Result, Table
from scratch.declare import Command, Tool

if TYPE_CHECKING:
    from scratch.answers.kernel.context import Context
    from scratch.store.ledger import Tally


def store_stats(ctx: Context, *, agent: str | None = None) -> Result[Payload]:
    """Every agent's entries and counters; or (``agent``) that agent's row alone, and when it
    is the context's own agent, flat (no store path) with its budget session's counters.

    ``agent`` is the interface's to give, never an argument a caller offers: MCP names the
    session's own agent (an agent sees no other agent's figures), the CLI none (every agent)."""
    from scratch.store import Store, ledger, stats

    store = ctx.store()
    agents_dir = store.root / "agents"
    if agent is not None:
        from scratch.store.names import validate_agent
        validate_agent(agent)
        agents = [agent]
    else:
        agents = sorted(p.name for p in agents_dir.iterdir()) if agents_dir.is_dir() else []
    rows = []
    for who in agents:
        usage = Store(store.root, who, store.config).usage()
        counters = stats.load(store.root, who)
        calls = ledger.read(store.root, agent=who)
        # the call ledger is part of what the agent holds: its records and the answers they
        # keep (bounded by ledger.max_bytes; not under quota.bytes, which bounds the entries)
        kept = ledger.file_bytes(store.root, who)
        rows.append({"agent": who, **usage, "ledger_bytes": kept,
                     "answer_bytes": sum(len(r.get("answer", "").encode()) for r in calls),
                     "total_bytes": usage["bytes"] + kept,
                     "operations": counters.get("operations", {}),
                     "tokens_intercepted": counters.get("tokens_intercepted", 0),
                     "tokens_extracted": counters.get("tokens_extracted", 0),
                     "tokens_by_command": ledger.tally(calls, "command"),
                     "tokens_by_session": ledger.tally(calls, "session")})
    table = Table(["agent", "files", "logs", "log entries", "bytes", "ledger bytes",
                   "operations", "tokens by command"],
                  [[r["agent"], r["files"], r["logs"], r["log_entries"], r["bytes"],
                    r["ledger_bytes"],
                    ", ".join(f"{k} {v}" for k, v in sorted(r["operations"].items())),
                    _tokens_text(r["tokens_by_command"])]
                   for r in rows])
    if agent is None or agent != ctx.agent:
        cache = store.cache_usage()
        return Result("stats", data={"store": str(store.root), "agents": rows, "cache": cache},
                      table=table, notices=(f"cache: {cache['total']:,} bytes (SQL columnar "
                                            f"copies {cache['sql_copies']:,})",))
    # one agent's own figures: its row (no store path, no other agent) and its session's
    from scratch.answers.kernel.prices import budget_for
    view = budget_for(ctx).status()
    r = rows[0]
    data = {**r, "session": {"session": ctx.session, **{k: view[k] for k in (
        "calls", "extracted", "intercepted", "used", "remaining")}}}
    ops = ", ".join(f"{k} {v}" for k, v in sorted(r["operations"].items())) or "-"
    text = "".join(f"{k}: {v}\n" for k, v in (
        ("agent", agent), ("files", r["files"]), ("logs", r["logs"]),
        ("log entries", r["log_entries"]), ("bytes", r["bytes"]),
        ("ledger bytes", f"{r['ledger_bytes']} (answers {r['answer_bytes']})"),
        ("total bytes", r["total_bytes"]), ("operations", ops),
        ("tokens intercepted", r["tokens_intercepted"]),
        ("tokens extracted", r["tokens_extracted"]),
        ("tokens by command", _tokens_text(r["tokens_by_command"]) or "-"),
        ("tokens by session", _tokens_text(r["tokens_by_session"]) or "-"),
        ("session", f"{ctx.session}: {view['calls']} calls, {view['extracted']} extracted, "
                    f"{view['intercepted']} intercepted, {view['remaining']} left")))
    return Result("stats", data=data, text=text)


def _tokens_text(tally: dict[str, Tally]) -> str:
    """``get-in 1,234 (3 calls), head 0 (1 call)``: tokens charged, most first."""
    ranked = sorted(tally.items(), key=lambda kv: (-kv[1]["tokens"], kv[0]))
    return ", ".join(f"{k} {t['tokens']:,} ({t['calls']} call{'' if t['calls'] == 1 else 's'})"
                     for k, t in ranked)


COMMAND = Command(
    "stats", "Per agent: files, logs, log entries, bytes, operations by kind, and from the "
    "call ledger the tokens charged per command and per session.\n\n"
    "bytes are the entries' (what quota.bytes bounds); ledger_bytes the call ledger's, the "
    "answers it keeps included (answer_bytes of them; bounded by ledger.max_bytes); "
    "total_bytes both.\n\n"
    "Example: scratch stats --json",
    store_stats,
    tools=(Tool("get_usage_stats", "Entries, bytes, operations, and the tokens this "
                "scratchpad kept out of (intercepted) and put into (extracted) the context, "
                "per command and per session.",
                toolset="session"),))
