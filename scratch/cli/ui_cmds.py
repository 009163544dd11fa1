"""`scratch ui`: a local, read-only web page over the store (its code: scratch.ui).

Only this command imports scratch.ui (and, through it, Starlette and uvicorn), inside the
command, so no other command pays for them.
"""

from typing import Annotated, List, Optional

import typer

from scratch.answers.kernel.context import Context
from scratch.calls import Call
from scratch.cli.common import command

KEPT_INDEXES = 32  # indexes the page keeps open between requests
PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-")


def readable_word(word: str) -> str:
    """A shell word as a person reads it best and the shell still reads back: as it is when
    it needs no quoting; in double quotes when it holds none of the characters special
    there (so SQL's 'x' stays as written); else as shlex quotes it."""
    import shlex
    if word and all(c in PLAIN for c in word):
        return word
    if not any(c in word for c in '"\\$`!'):
        return f'"{word}"'
    return shlex.quote(word)


def readable_line(c: Call) -> str:
    """``c`` as the page writes a command line: the CLI's words, quoted readably."""
    from scratch.cli.spelling import shell_words
    return " ".join(readable_word(w) for w in shell_words(c))


@command("ui", help="Serve a read-only web page over the store: where each agent's tokens "
         "went (spend over time, session budgets, costliest calls, savings), what each call "
         "got back, sessions, entries, runs and a search, updated live while agents "
         "work.\n\n"
         "Listens on 127.0.0.1 (a free port unless --port) and prints the page's URL, which "
         "holds a random token: every request needs it, and a Host or Origin header that is "
         "not local is refused. --host serves another address; the store must then have MCP "
         "tokens ('scratch mcp token add AGENT') and the URL takes one of them in place of "
         "TOKEN, showing that agent only (and of a run it worked in, its own calls and "
         "events). A run's page shows its workers, artifacts, iterations and usage events. "
         "Runs until interrupted.\n\n"
         "Example: scratch ui --open")
def ui_cmd(ctx: Context,
           port: Annotated[int, typer.Option(
               "--port", metavar="N", help="Port to listen on (0: any free one).")] = 0,
           host: Annotated[Optional[str], typer.Option(
               "--host", metavar="HOST", help="Address to listen on instead of 127.0.0.1 "
               "(not loopback: needs the store's MCP tokens).", show_default=False)] = None,
           open_browser: Annotated[bool, typer.Option(
               "--open", help="Open the page in the default browser.")] = False,
           allow_origin: Annotated[Optional[List[str]], typer.Option(
               "--allow-origin", metavar="ORIGIN", help="A browser origin allowed besides "
               "the page's own (repeatable).", show_default=False)] = None) -> int:
    import secrets
    import sys

    import anyio

    from scratch.errors import UsageError
    if not 0 <= port <= 65535:
        raise UsageError("--port takes 0 to 65535", code="invalid_argument", argument="port")
    from scratch.mcp.auth import TokenTable
    from scratch.mcp.serve.http import check_bind, is_loopback
    from scratch.ui.app import build_app, serve
    bind = (host or "127.0.0.1").strip("[]")
    loopback = is_loopback(bind)
    table = TokenTable(ctx.root)
    check_bind(bind, table)
    ctx.store()  # the page shows this store: made now if it is new
    from scratch.answers.kernel.kept_indexes import keep_indexes
    keep_indexes(KEPT_INDEXES)  # a warm page keeps the indexes it read open, as a server does
    secret = secrets.token_urlsafe(24) if loopback else None
    app = build_app(ctx.root, readable_line, host=bind, secret=secret,
                    table=None if loopback else table, origins=allow_origin or [])
    app.warm_up()

    def announce(bound: int) -> None:
        shown = f"[{bind}]" if ":" in bind else bind
        url = f"http://{shown}:{bound}/{secret if secret else 'TOKEN'}/"
        print(url, flush=True)
        print(f"scratch ui: store {ctx.root}; "
              + ("open the URL above (its token is the key)" if secret else
                 f"replace TOKEN with one of the store's {len(table)} MCP token(s)")
              + "; Ctrl-C stops it", file=sys.stderr, flush=True)
        if open_browser and secret:
            import webbrowser
            webbrowser.open(url)

    try:
        anyio.run(serve, app, bind, port, announce)
    except KeyboardInterrupt:
        pass
    return 0
