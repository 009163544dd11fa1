"""`scratch hook CLIENT` (what a client's hook settings run) and `scratch hooks install /
uninstall CLIENT` (scratch's hook in those settings).

The installed ``scratch`` command answers ``scratch hook`` before this module is ever imported
(:mod:`scratch.__main__`); the command here gives it its help, man page and completion, and
runs it the same way when reached through the command tree.
"""


from typing import TYPE_CHECKING, Annotated, List, Optional

import typer

from scratch.answers.kernel.context import Context
from scratch.cli.common import app, command

if TYPE_CHECKING:
    from collections.abc import Mapping

    from scratch.answers.kernel.result import Result

hooks_app = typer.Typer(name="hooks", help="Capture big tool results where agents work: "
                        "install scratch's hook in a client's settings (Claude Code, Gemini "
                        "CLI, Cursor), so every result at or over its tool's threshold is "
                        "stored and the model reads the pointer instead.\n\n"
                        "Codex cannot replace a result: its hook hints, before each usually "
                        "big Bash command, to run it under 'scratch run'.\n\n"
                        "Example: scratch hooks install claude-code",
                        no_args_is_help=True)
app.add_typer(hooks_app, name="hooks")

HOOK_HELP = (
    "Answer a client's hook call (what 'scratch hooks install' makes it run after each tool "
    "call): a big result is stored and the model reads its pointer instead.\n\n"
    "The payload comes on stdin. A result below its tool's threshold ([thresholds], matched "
    "on the client's tool name, e.g. Bash or 'mcp__github__*') passes untouched; at or over "
    "it, it is stored and the answer holds the client's replacement field with the pointer, "
    "whose next commands run as printed from the model's shell. Exit status always 0; on "
    "any failure nothing is "
    "replaced, one line goes to stderr and one record to the call ledger. For codex it runs "
    "before each Bash command (PreToolUse) and stores nothing: when the command's output is "
    "usually big (kubectl get -o json, journalctl, aws/az/gcloud listings, gh api, cat of a "
    "big file, or a tool with a [thresholds] pattern; config hooks.hint_builtin) it answers "
    "additionalContext telling the model to run it as 'scratch run -- CMD', spelled to run; "
    "never a decision that blocks it. Options after "
    "CLIENT: --timeout SECONDS (the client's hook timeout: scratch gives up at 80% of it), "
    "--store DIR, --agent NAME (default: the client's name).\n\n"
    "Example: scratch hook claude-code --timeout 60 < payload.json")


@app.command("hook", help=HOOK_HELP, context_settings={
    "allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": ["--help"]})
def hook_cmd(client_name: Annotated[str, typer.Argument(
                 metavar="CLIENT", help="claude-code, gemini-cli, cursor or codex.",
                 show_default=False)],
             options: Annotated[Optional[List[str]], typer.Argument(
                 metavar="[--timeout SECONDS] [--store DIR] [--agent NAME]", hidden=True,
                 show_default=False)] = None) -> None:
    from scratch.cli.spelling import shell_line
    from scratch.hooks.run import main
    raise typer.Exit(main([client_name, *(options or [])], speller=lambda: shell_line))


SettingsOpt = Annotated[Optional[str], typer.Option(
    "--settings", metavar="FILE", help="The settings file to edit: user (default), project, "
    "local (Claude Code only) or a path.", show_default=False)]


@command("install", target=hooks_app,
         help="Add scratch's hook to a client's settings: claude-code (PostToolUse, "
         "~/.claude/settings.json), gemini-cli (AfterTool, ~/.gemini/settings.json) or cursor "
         "(postToolUse on MCP tools, ~/.cursor/hooks.json) or codex (PreToolUse on Bash).\n\n"
         "For codex the hook only hints (see 'scratch hook'); it goes in ~/.codex/config.toml "
         "(its comments kept), or the hooks.json beside it when that exists; Codex runs it "
         "once you trust it (/hooks).\n\nIt runs 'scratch hook CLIENT' "
         "for Bash, Read, WebFetch, Grep and every MCP tool (the client's names; --tools "
         "narrows them). The file is copied to FILE.scratch-backup first (once); a scratch "
         "hook already there is replaced only with --force; the user's own hooks are kept.\n\n"
         "Example: scratch hooks install claude-code --settings project")
def install_cmd(ctx: Context,
                client_name: Annotated[str, typer.Argument(
                    metavar="CLIENT", help="claude-code, gemini-cli, cursor or codex.",
                    show_default=False)],
                settings: SettingsOpt = None,
                tools: Annotated[Optional[str], typer.Option(
                    "--tools", metavar="NAMES", help="Comma-separated tool names or regexes "
                    "the hook runs for (default: Bash,Read,WebFetch,Grep,mcp__.* and the "
                    "like for each client).", show_default=False)] = None,
                timeout: Annotated[float, typer.Option(
                    "--timeout", metavar="SECONDS", help="The client's timeout for the hook "
                    "(scratch gives up at 80% of it and passes the output through).")] = 60.0,
                print_only: Annotated[bool, typer.Option(
                    "--print", help="Print the JSON to add instead of editing a file.")]
                = False,
                force: Annotated[bool, typer.Option(
                    "--force", help="Replace a scratch hook already there.")] = False
                ) -> "Result[Mapping[str, object]]":
    import json

    from scratch.errors import UsageError
    from scratch.hooks.settings import hook_command, install, settings_for
    spec = settings_for(client_name)
    if timeout <= 0:
        raise UsageError("--timeout must be a positive number of seconds",
                         code="invalid_argument", argument="timeout")
    names = [t.strip() for t in tools.split(",") if t.strip()] if tools else None
    if tools is not None and not names:
        raise UsageError("--tools names no tool", code="invalid_argument", argument="tools")
    store = None if ctx.root_source == "XDG data directory" else ctx.root
    agent = ctx.agent if ctx.agent != "default" else None
    group = spec.group(hook_command(spec.name, store, agent, timeout), timeout, names)
    path = spec.path(settings)
    trust = (("Codex runs a new or changed hook only once you trust it: open /hooks in "
              "Codex",) if spec.name == "codex" else ())

    def printed() -> "tuple[Mapping[str, object], str]":
        from scratch.hooks.settings import is_toml, toml_block
        shown = (toml_block(spec, group) if is_toml(path) else
                 json.dumps({"hooks": {spec.event: [group]}}, indent=2) + "\n")
        return {"client": spec.name, "file": str(path), "event": spec.event,
                "hook": group}, shown

    from scratch.cli.client_install import ClientEdit, install_answer
    edit = ClientEdit("hooks install", path, f"{spec.label}'s settings",
                      "already runs this scratch hook",
                      f"scratch's {spec.event} hook for {group['matcher']} (store {ctx.root}, "
                      f"agent {agent or spec.name!r})", notices=trust)
    return install_answer(edit, print_only=print_only, printed=printed,
                          install=lambda: install(spec, path, group, force=force))


@command("uninstall", target=hooks_app,
         help="Remove scratch's hook from a client's settings; every other hook stays.\n\n"
         "Example: scratch hooks uninstall claude-code")
def uninstall_cmd(ctx: Context,
                  client_name: Annotated[str, typer.Argument(
                      metavar="CLIENT", help="claude-code, gemini-cli, cursor or codex.",
                      show_default=False)],
                  settings: SettingsOpt = None) -> "Result[Mapping[str, object]]":
    from scratch.answers.kernel.result import Result
    from scratch.hooks.settings import settings_for, uninstall
    spec = settings_for(client_name)
    path = spec.path(settings)
    done = uninstall(spec, path)
    if not done["removed"]:
        return Result("hooks uninstall", data=done, text=f"{path}: no scratch hook\n")
    return Result("hooks uninstall", data=done, text=(
        f"{path}: removed scratch's {spec.event} hook; backup: {done['backup']}\n"))
