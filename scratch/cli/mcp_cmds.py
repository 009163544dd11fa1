"""`scratch mcp`: serve the store to MCP clients (stdio or HTTP) and manage HTTP tokens.

Only `scratch mcp serve` imports the MCP SDK (inside the command), so no other command pays
for it; the token commands need nothing beyond the store.
"""

from typing import TYPE_CHECKING, Annotated, List, Optional

import typer

from scratch.answers.kernel.context import Context
from scratch.cli.common import app, command

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scratch.answers.kernel.result import Result
    from scratch.mcp.auth import TokenInfo
    from scratch.mcp.serve.reqlog import RequestLog
    from scratch.mcp.serve.session import ServerState

mcp_app = typer.Typer(name="mcp", help="Serve the store to MCP clients (Claude Desktop, Claude "
                      "Code, Cursor, agent SDKs) over stdio or streamable HTTP.\n\n"
                      "Example: claude mcp add scratch -- scratch mcp serve",
                      no_args_is_help=True)
app.add_typer(mcp_app, name="mcp")
token_app = typer.Typer(name="token", help="Bearer tokens for 'scratch mcp serve --http', one or "
                        "more per agent (stored hashed).\n\nExample: scratch mcp token add ops",
                        no_args_is_help=True)
mcp_app.add_typer(token_app, name="token")

DEFAULT_RATE = 600
DEFAULT_MAX_BODY = 32 << 20
KEPT_INDEXES = 32  # indexes a server keeps open between calls (each a few open maps)
KEPT_SQL_SESSIONS = 4  # sql sessions of columnar copies a server keeps open (DuckDB, attached)
# what 'mcp install' registers: every tool, so an agent given scratch the documented way can
# store its own outputs and files (ingest, write_file), not only read what something else stored
INSTALL_TOOLS = "all"


@command("serve", target=mcp_app,
         help="Speak MCP on stdin/stdout (default) or streamable HTTP at HOST:PORT/mcp.\n\n"
         "stdio: the agent is --agent (or $SCRATCH_AGENT). HTTP: when the store has tokens "
         "('scratch mcp token add AGENT') every request needs one and its agent is the "
         "token's; without tokens only a loopback address is served. Each client connection "
         "has its own budget session unless --session names one to share. One JSON line per "
         "request goes to stderr or --log-file (never content).\n\n"
         "Example: scratch mcp serve --http 127.0.0.1:8765")
def serve_cmd(ctx: Context,
              http: Annotated[Optional[str], typer.Option(
                  "--http", metavar="HOST:PORT", help="Serve streamable HTTP here instead of "
                  "stdio (port 0: any free port; the URL is printed on stderr).",
                  show_default=False)] = None,
              rate_limit: Annotated[int, typer.Option(
                  "--rate-limit", metavar="N", help="HTTP requests per minute per token "
                  "(0: no limit).")] = DEFAULT_RATE,
              max_body: Annotated[int, typer.Option(
                  "--max-body", metavar="BYTES", help="Largest HTTP request body.")]
              = DEFAULT_MAX_BODY,
              allow_origin: Annotated[Optional[List[str]], typer.Option(
                  "--allow-origin", metavar="ORIGIN", help="A browser origin allowed besides "
                  "loopback ones (repeatable).", show_default=False)] = None,
              log_file: Annotated[Optional[str], typer.Option(
                  "--log-file", metavar="FILE", help="Append the request log here instead of "
                  "stderr.", show_default=False)] = None,
              quiet: Annotated[bool, typer.Option(
                  "--quiet", help="No request log.")] = False,
              structured: Annotated[bool, typer.Option(
                  "--structured", help="Answers as structuredContent ({data, meta}) with the "
                  "same JSON as their text, for programs; the default is plain text, which "
                  "costs the model fewer tokens.")] = False,
              tools: Annotated[Optional[str], typer.Option(
                  "--tools", metavar="SET", help="The tools offered: explore (exploring a "
                  "stored entry), files (versioned files and logs), run (a run's artifacts "
                  "and finish) or all, or several joined by commas (default: config "
                  "mcp.tools, explore; explore,run for a server of a run).",
                  show_default=False)] = None) -> int:
    import anyio

    from scratch.errors import UsageError
    from scratch.mcp.serve.reqlog import RequestLog
    if max_body < 1024:
        raise UsageError("--max-body must be at least 1024 bytes", code="invalid_argument")
    state = _server_state(ctx, structured=structured, coordinator=ctx.coordinator)
    from scratch.mcp import specs
    specs.serve(specs.offer(_toolset(ctx, tools, "mcp.tools",
                                     ("explore", "files", "run", "all"))))
    from scratch.store import Store
    Store.open(ctx.root, ctx.agent, ctx.config)  # create the store now, not on the first call
    _announce("serve", ctx)
    log = None if quiet else RequestLog(log_file)
    _keep_warm(state)
    try:
        if http is None:
            from scratch.mcp.serve.server import serve_stdio
            anyio.run(serve_stdio, state, log)
        else:
            anyio.run(_serve_http, state, log, http, rate_limit, max_body, allow_origin or [])
    except KeyboardInterrupt:
        pass
    finally:
        if log is not None:
            log.close()
    return 0


def _server_state(ctx: Context, *, structured: bool = False, coordinator: bool = False
                  ) -> "ServerState":
    """The state of a server (serve's or the proxy's) acting as ctx says: what was given by
    flag is handed on as given (the store, the model, the encoding); the rest the server
    finds as a command would."""
    from scratch.mcp.serve.session import ServerState
    flags = ctx.config.sources
    return ServerState(store=_store_flag(ctx), agent=ctx.agent,
                       session=ctx.session if ctx.session != "default" else None,
                       model=ctx.config["model"] if flags["model"] == "--model" else None,
                       encoding=ctx.config["encoding"] if flags["encoding"] == "--encoding"
                       else None, structured=structured, run=ctx.run,
                       iteration=ctx.iteration if "iteration" in ctx.named else None,
                       coordinator=coordinator)


def _keep_warm(state: "ServerState") -> None:
    """A server keeps recently used indexes and sql's sessions of columnar copies open
    between calls, and warms up before its first."""
    from scratch.answers.kernel.kept_indexes import keep_indexes
    keep_indexes(KEPT_INDEXES)
    from scratch.query.sql import keep_sessions
    keep_sessions(KEPT_SQL_SESSIONS)
    state.warm_up()


def _toolset(ctx: Context, flag: Optional[str], key: str, choices: tuple[str, ...]) -> str:
    """The --tools of a server: the flag, else the config key (or its environment variable),
    else, for a server of a run, its default with the run's tools (``explore,run``). Choices
    may be joined by commas."""
    from scratch.errors import UsageError
    choice = flag if flag is not None else str(ctx.config[key])
    if flag is None and ctx.run is not None and ctx.config.sources.get(key) == "default" \
            and "run" in choices:  # mcp serve's (the proxy keeps its few tools)
        choice = f"{choice},run"
    if not all(part in choices for part in choice.split(",")):
        where = "--tools" if flag is not None else key
        raise UsageError(f"{where} must be one of {', '.join(choices)}, not {choice!r}",
                         code="invalid_argument", argument="tools", choices=list(choices))
    return choice


def _store_flag(ctx: Context) -> Optional[str]:
    """The server's --store: the one given, else None, so the server finds the same store the
    same way and says how (a path handed on would read as given by --store)."""
    return str(ctx.root) if ctx.root_source == "--store" else None


def _agent_source(ctx: Context) -> str:
    """How ctx's agent was chosen: an agent other than the environment's would give, or the one
    given before the command, came from --agent (one equal to it after the command reads as
    the environment's: the same agent either way)."""
    from scratch.cli.common import GLOBAL_DEFAULTS
    from scratch.store.names import find_agent
    agent, source = find_agent(None)
    return "--agent" if GLOBAL_DEFAULTS.get("agent") or ctx.agent != agent else source


def _announce(command: str, ctx: Context) -> None:
    """One line on stderr at start: which store and agent this server uses, and why. A client
    starts its servers with an environment of its own, so this is not always the store or agent
    its user's shell would give."""
    import sys

    from scratch.store.names import how_chosen
    role = ("" if ctx.run is None else f", {'coordinator' if ctx.coordinator else 'worker'} "
            f"of run {ctx.run!r}" + (f" iteration {ctx.iteration}" if "iteration" in ctx.named
                                     else ""))
    print(f"scratch mcp {command}: store {ctx.root} ({how_chosen(ctx.root_source)}), agent "
          f"{ctx.agent!r} ({how_chosen(_agent_source(ctx))}){role}", file=sys.stderr,
          flush=True)


async def _serve_http(state: "ServerState", log: "RequestLog | None", bind: str,
                      rate_limit: int, max_body: int, origins: list[str]) -> None:
    import sys

    from scratch.mcp.auth import TokenTable
    from scratch.mcp.serve.http import build_app, check_bind, parse_bind, serve_http
    from scratch.mcp.serve.ratelimit import RateLimiter
    from scratch.mcp.serve.server import build_server, in_thread
    host, port = parse_bind(bind)
    tokens = TokenTable(state.root)
    check_bind(host, tokens)

    async def ended(token: "TokenInfo | None", sid: str) -> None:
        """A client ended its session: its worker finishes, the run's other sessions hear."""
        session = state.forget(("http", token.id if token else None, sid),
                               token.agent if token else state.agent)
        if session is not None and state.hub is not None:
            await in_thread(state.hub.finish, session, "session_closed")
            await state.hub.deliver()

    app = build_app(build_server(state, log), host=host, tokens=tokens,
                    limiter=RateLimiter(rate_limit), log=log, max_body=max_body,
                    origins=origins, on_end=ended)

    def announce(url: str) -> None:
        who = (f"{len(tokens)} token(s)" if len(tokens) else
               f"no tokens: every local client acts as agent {state.agent!r}")
        print(f"scratch mcp: serving {url} ({who})", file=sys.stderr, flush=True)

    try:
        await serve_http(app, host, port, announce)
    finally:  # every session still open finishes its worker
        if state.hub is not None:
            await in_thread(state.hub.finish_all, "server_stopped")


AgentArg = Annotated[str, typer.Argument(metavar="AGENT", help="Agent the token acts as.")]


@command("add", target=token_app,
         help="Create a bearer token for AGENT and print it once (only its hash is kept).\n\n"
         "With --run RUN the token's sessions are workers of that run (--iteration N: of that "
         "iteration, else of the latest when a session starts; --coordinator: its "
         "coordinator).\n\n"
         "Example: scratch mcp token add ops --run r1")
def token_add(ctx: Context, for_agent: AgentArg) -> "Result[Mapping[str, object]]":
    from scratch.answers.kernel.result import Result
    from scratch.mcp.auth import add_token
    from scratch.store import Store
    Store.open(ctx.root, ctx.agent, ctx.config)  # the store (a coordinator has no pad)
    token, info = add_token(ctx.root, for_agent, run=ctx.run,
                            iteration=ctx.iteration if "iteration" in ctx.named else None,
                            coordinator=ctx.coordinator)
    role = ("" if info.run is None else
            f" in run {info.run}" + (f" (iteration {info.iteration})" if info.iteration else "")
            + (" as its coordinator" if info.coordinator else ""))
    return Result("mcp token add", data={"token": token, **info._asdict()},
                  text=token + "\n",
                  notices=(f"token {info.id} for agent {for_agent}{role}: shown once, keep "
                           "it; send it as 'Authorization: Bearer TOKEN'",))


@command("list", target=token_app, help="List the tokens: id, agent, created (never the "
         "tokens themselves).\n\nExample: scratch mcp token list")
def token_list(ctx: Context) -> "Result[Mapping[str, object]]":
    from scratch.answers.kernel.result import Result, Table
    from scratch.mcp.auth import list_tokens
    rows = list_tokens(ctx.root)
    return Result("mcp token list", data={"tokens": [r._asdict() for r in rows]},
                  table=Table(["id", "agent", "created", "run"],
                              [[r.id, r.agent, r.created, _role(r)] for r in rows]))


def _role(token: "TokenInfo") -> str:
    if token.run is None:
        return "-"
    return (token.run + (f" iteration {token.iteration}" if token.iteration else "")
            + (" coordinator" if token.coordinator else ""))


@command("remove", target=token_app, help="Revoke every token of AGENT (or the one token with "
         "that id); a running server refuses them at once.\n\n"
         "Example: scratch mcp token remove ops")
def token_remove(ctx: Context, who: Annotated[str, typer.Argument(
        metavar="AGENT|ID", help="Agent whose tokens to revoke, or one token's id.")]
                 ) -> "Result[Mapping[str, object]]":
    from scratch.answers.kernel.result import Result
    from scratch.mcp.auth import remove_tokens
    gone = remove_tokens(ctx.root, who)
    return Result("mcp token remove", data={"removed": [r._asdict() for r in gone]},
                  text="".join(f"removed {r.id} (agent {r.agent})\n" for r in gone))


DEFAULT_TIMEOUT = 120.0


@command("proxy", target=mcp_app,
         help="Stand between an MCP client and its servers: their tools beside scratch's, "
         "and any result at or over its tool's threshold stored, a pointer returned.\n\n"
         "The servers: those of an mcpServers JSON file (--config), or the one command after "
         "--. Thresholds: [mcp.servers.NAME.scratchpad] in "
         "scratch.toml ('scratch config threshold SERVER TOOL' explains one). A tool name "
         "two servers have is offered as SERVER__TOOL; an upstream's tool keeps its name, "
         "and a scratch tool of the same name is offered as scratch_NAME. Speaks stdio; "
         "stopping it stops every server it started.\n\n"
         "Example: scratch mcp proxy -- npx -y @modelcontextprotocol/server-filesystem .",
         context_settings={"allow_interspersed_args": False})
def proxy_cmd(ctx: Context,
              command_words: Annotated[Optional[List[str]], typer.Argument(
                  metavar="[-- CMD [ARGS]...]", help="One upstream server's command.",
                  show_default=False)] = None,
              config: Annotated[Optional[str], typer.Option(
                  "--config", metavar="FILE", help="An mcpServers JSON file (Claude Desktop, "
                  "Cursor, Claude Code's .mcp.json; a file 'scratch mcp wrap' rewrote).",
                  show_default=False)] = None,
              server_name: Annotated[Optional[str], typer.Option(
                  "--name", metavar="NAME", help="The server's name for -- CMD (default: "
                  "from the command), as [mcp.servers.NAME] knows it.",
                  show_default=False)] = None,
              timeout: Annotated[float, typer.Option(
                  "--timeout", metavar="SECONDS", help="How long a call to an upstream may "
                  "take (a server's own \"timeout\" in the file wins).")] = DEFAULT_TIMEOUT,
              tools: Annotated[Optional[str], typer.Option(
                  "--tools", metavar="SET", help="scratch's tools offered: proxy (a few to "
                  "explore a stored output), explore, files or all (default: config "
                  "mcp.proxy_tools, proxy).", show_default=False)] = None) -> int:
    import anyio

    from scratch.errors import UsageError
    from scratch.mcp.proxy.config import UpstreamSpec, command_name, load_servers
    if bool(config) == bool(command_words):
        raise UsageError("give --config FILE or -- CMD [ARGS]... (one of them)",
                         code="invalid_argument")
    if timeout <= 0:
        raise UsageError("--timeout must be a positive number of seconds",
                         code="invalid_argument")
    if config:
        found = load_servers(config)
    else:
        words = list(command_words or [])
        found = [UpstreamSpec(server_name or command_name(words), command=words[0],
                              args=tuple(words[1:]))]
    from scratch.mcp.proxy.server import serve_proxy
    from scratch.mcp.proxy.upstream import Upstream
    state = _server_state(ctx)
    toolset = _toolset(ctx, tools, "mcp.proxy_tools", ("proxy", "explore", "files", "all"))
    ctx.store()
    _announce("proxy", ctx)
    _keep_warm(state)
    try:
        anyio.run(serve_proxy, state, [Upstream(s, timeout) for s in found], toolset)
    except KeyboardInterrupt:
        pass
    finally:  # its client left: the worker finishes (what it intercepted, what it read)
        _finish_sessions(state, "session_closed")
    return 0


def _finish_sessions(state: "ServerState", reason: str) -> None:
    """Every session of a run the server still holds finishes its worker
    (scratch.runs.finish_worker), recorded when it intercepted or extracted anything."""
    from scratch.runs import finish_worker
    from scratch.store import ledger
    for session in state.forget_all():
        if session.run is None:  # no worker of a run: only an explicit finish records one
            continue
        try:
            config = state.configs.get()
            finish_worker(state.root, agent=session.agent, session=session.session,
                          run=session.run, iteration=session.iteration,
                          interface=session.interface, reason=reason, explicit=False,
                          config=config, max_ledger_bytes=int(config.get(
                              "ledger.max_bytes", ledger.DEFAULT_MAX_BYTES)))
        except Exception:  # a store gone: the event is lost, never the exit
            continue


@command("wrap", target=mcp_app,
         help="Rewrite an MCP client's config file so that every server in it runs behind "
         "'scratch mcp proxy'.\n\nThe original is copied to FILE.scratch-backup first (once); the "
         "servers' entries move, untouched, under \"scratchProxy\" in the same file, and one "
         "entry \"scratch\" runs the proxy on them. --undo puts them back.\n\n"
         "Example: scratch mcp wrap ~/.cursor/mcp.json")
def wrap_cmd(ctx: Context,
             file: Annotated[str, typer.Argument(metavar="FILE", help="The client's mcpServers "
                                                 "JSON file.", show_default=False)],
             undo: Annotated[bool, typer.Option(
                 "--undo", help="Put the wrapped servers back and remove the proxy's entry.")]
             = False) -> "Result[Mapping[str, object]]":
    from scratch.answers.kernel.result import Result
    from scratch.mcp.proxy.config import unwrap_file, wrap_file
    # the client starts the proxy without this environment: a store found otherwise is named
    extra = [] if ctx.root_source == "XDG data directory" else ["--store", str(ctx.root)]
    if undo:
        done = unwrap_file(file)
        return Result("mcp wrap", data=done, text=f"{done['file']}: restored "
                      f"{', '.join(done['restored']) or 'no servers'}\n")
    done = wrap_file(file, extra_args=extra)
    if done["unchanged"]:
        return Result("mcp wrap", data=done, text=f"{done['file']}: already wrapped\n")
    return Result("mcp wrap", data=done, text=(
        f"{done['file']}: {', '.join(done['wrapped'])} now run behind entry "
        f"{done['entry']!r} (scratch mcp proxy); backup: {done['backup']}; undo: scratch mcp "
        f"wrap --undo {done['file']}\n"))


@command("install", target=mcp_app,
         help="Register 'scratch mcp serve' with an MCP client (claude-code, claude-desktop, "
         "cursor, vscode, codex, gemini-cli or windsurf) in its own config file.\n\n"
         "The files: ~/.claude.json, claude_desktop_config.json, ~/.cursor/mcp.json, "
         ".vscode/mcp.json here, ~/.codex/config.toml, ~/.gemini/settings.json and "
         "~/.codeium/windsurf/mcp_config.json. The entry \"scratch\" names this store "
         "(--store), a non-default agent (--agent) and the tools it offers (--tools, default "
         "all: the agent can store outputs and files itself; explore when something else "
         "stores them, such as 'scratch hooks' or "
         "'scratch mcp proxy') explicitly, since the client starts servers with an "
         "environment of its own. The file is copied to FILE.scratch-backup first (once: an "
         "existing backup is kept; a TOML file keeps its comments and layout); an existing "
         "\"scratch\" entry is replaced only with --force. Restart the client to load it.\n\n"
         "Example: scratch mcp install claude-code --tools explore")
def install_cmd(ctx: Context,
                client_name: Annotated[str, typer.Argument(
                    metavar="CLIENT", help="claude-code, claude-desktop, cursor, vscode, "
                    "codex, gemini-cli or windsurf.", show_default=False)],
                config: Annotated[Optional[str], typer.Option(
                    "--config", metavar="FILE", help="The client's config file to edit "
                    "(default: the client's own; e.g. a project's .mcp.json for Claude Code).",
                    show_default=False)] = None,
                print_only: Annotated[bool, typer.Option(
                    "--print", help="Print the JSON to add instead of editing a file.")]
                = False,
                force: Annotated[bool, typer.Option(
                    "--force", help="Replace an existing \"scratch\" entry.")] = False,
                tools: Annotated[str, typer.Option(
                    "--tools", metavar="SET", help="The tools the server offers: all (every "
                    "tool, ingest and write_file among them), explore (reading stored "
                    "entries) or files (versioned files and logs).")] = INSTALL_TOOLS
                ) -> "Result[Mapping[str, object]]":
    from pathlib import Path

    from scratch.clientfiles import client_named, install_entry, scratch_command, snippet
    client = client_named(client_name)
    toolset = _toolset(ctx, tools, "mcp.tools", ("explore", "files", "all"))
    entry = client.entry(scratch_command(), ctx.root, ctx.agent, toolset)
    path = Path(config).expanduser().absolute() if config else client.default_file()
    from scratch.cli.client_install import ClientEdit, install_answer
    edit = ClientEdit("mcp install", path, f"{client.label}'s config",
                      f"already has this 'scratch' entry (store {ctx.root})",
                      f"'scratch' (scratch mcp serve --tools {toolset} on store {ctx.root}, "
                      f"agent {ctx.agent!r})", after=f"; restart {client.label} to load it")
    return install_answer(
        edit, print_only=print_only,
        printed=lambda: ({"client": client.name, "file": str(path), "entry": "scratch",
                          "server": entry}, snippet(client, entry)),
        install=lambda: install_entry(client, path, entry, force=force))
