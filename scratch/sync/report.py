"""The human text of sync results (``--json`` prints the data itself; its keys: scratch-sync(1))."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from scratch.calls import Call, Step, suggest

if TYPE_CHECKING:
    from scratch.sync.status import RemoteStatus


def _who(row: dict[str, Any], agents: list[str]) -> str:
    return row["name"] if len(agents) <= 1 else f"{row['agent']}:{row['name']}"


def _ids(pair: list[int]) -> str:
    return str(pair[0]) if pair[0] == pair[1] else f"{pair[0]}-{pair[1]}"


def sync_text(results: list[dict[str, Any]], own: str, spell: Callable[[Call], str]) -> str:
    """The text of ``results``; a log of the agent ``own`` that received entries says the call
    that reads on from them, spelled by ``spell`` (another agent's, where they begin)."""
    out: list[str] = []
    for r in results:
        agents = r["agents"]
        moved = (f"received {len(r['received'])} "
                 f"entr{'y' if len(r['received']) == 1 else 'ies'}, sent {len(r['sent'])}")
        if r["pushed"]:
            tail = f"pushed {r['pushed'][:12]}"
        elif r["sent"] or r["received"]:
            tail = "nothing new to push"
        else:
            tail = "up to date"
        out.append(f"sync {r['remote']} (agent{'s' if len(agents) != 1 else ''} "
                   f"{', '.join(agents) or 'none'}): {moved}; {tail}")
        for purge_id in r.get("purges_applied") or ():
            out.append(f"  purge {purge_id} made by another store: applied here (its entries "
                       "are gone from this store and its history)")
        if r.get("replaced"):
            out.append(f"  {r['remote']}'s history replaced (purged entries removed; force "
                       "with lease)" + ("; its unreachable objects pruned" if r.get("pruned")
                                        else "; it keeps unreachable objects until it runs "
                                        "git gc"))
        for log in r["logs"]:
            name = _who(log, agents)
            for move in log["renumbered"]:
                out.append(f"  log {name}: ids {_ids(move['from'])} are now {_ids(move['to'])}")
            if log["received"] and log.get("first_changed_id"):
                since = log["first_changed_id"] - 1
                read_on = suggest(Step.READ_LOG, name=log["name"], since=since)
                more = (f"read on with {spell(read_on)}" if log["agent"] == own
                        else f"new from entry {since + 1}")
                out.append(f"  log {name}: {log['received']} new entr"
                           f"{'y' if log['received'] == 1 else 'ies'}; {more}")
        for v in r["versions"]:
            out.append(f"  {_who(v, agents)}: written on both sides: versions "
                       f"{', '.join(map(str, v['ours']))} here, "
                       f"{', '.join(map(str, v['theirs']))} from {r['remote']}; "
                       f"current is version {v['current']}")
        for k in r["kept_writes"]:
            out.append(f"  {_who(k, agents)}: deleted on one side, written on the other: "
                       "the write is kept")
        for d in r["deduplicated"]:
            out.append(f"  {_who(d, agents)}: the same output as {d['same_as']} (one entry "
                       "now)")
        for c in r["conflicts"]:
            out.append(f"  {_who(c, agents)}: a {c['ours_kind']} here, a {c['theirs_kind']} "
                       f"there: theirs kept as {c['theirs_as']}")
        for row in r["local_only"]:
            out.append(f"  local only: {_who(row, agents)} ({row['bytes']:,} bytes, over "
                       "sync.max_file_bytes)")
    return "\n".join(out) + "\n"


def status_text(results: list[RemoteStatus]) -> str:
    out: list[str] = []
    for r in results:
        stale = "" if r["fetched"] else f" (as last fetched: {r['fetch_error']})"
        out.append(f"{r['remote']} {r['url']}{stale}")
        if r.get("purge"):
            out.append(f"  {r['purge']}")
        if not r["agents"]:
            out.append("  no agents")
        for a in r["agents"]:
            out.append(f"  {a['agent']}: ahead {a['ahead']}, behind {a['behind']}, "
                       f"both changed {len(a['both'])}")
            for rows, label in ((a["outgoing"], "would send"), (a["incoming"], "would receive"),
                                (a["both"], "would merge")):
                for row in rows:
                    extra = f" ({row['log_entries']} log entries)" if row.get("log_entries") \
                        else ""
                    out.append(f"    {label}: {row['name']}{extra}")
            for here in a["local_only"]:
                out.append(f"    only here: {here['name']} ({here['reason']})")
    return "\n".join(out) + "\n"
