"""`scratch completions SHELL` and `scratch guide`.

Neither touches the store: they build no Context, so they work (and a shell start-up that
sources completions stays quiet) even where the store or scratch.toml is broken.
"""

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated

import typer

from scratch.cli.common import CompletionLine, JsonOpt, app
from scratch.docs.completion import SHELLS

if TYPE_CHECKING:
    from scratch.answers.kernel.result import Result


def _emit(name: str, build: Callable[[], object], json_output: bool) -> None:
    from scratch.cli import render
    from scratch.errors import ScratchError
    try:
        code = render.render(build(), json_mode=json_output)  # type: ignore[arg-type]
    except ScratchError as exc:
        code = render.render_error(name, exc, json_mode=json_output)
    except BrokenPipeError:
        from scratch.cli.common import _silence_stdout
        _silence_stdout()
        code = 0
    raise typer.Exit(code)


def _complete_shells(ctx: CompletionLine, incomplete: str) -> list[str]:
    return [s for s in SHELLS if s.startswith(incomplete)]


@app.command("completions", help="Print the completion script for SHELL (bash, zsh or fish).\n\n"
             "The script asks scratch on each TAB, so it completes subcommands, options, the "
             "entry names of the current agent and store, and agent names. Install it once "
             "(the comments at its top say where; see also man scratch-completions).\n\n"
             "Example: scratch completions bash > ~/.local/share/bash-completion/completions/"
             "scratch")
def completions_cmd(
    shell: Annotated[str, typer.Argument(metavar="SHELL", help="bash, zsh or fish.",
                                         autocompletion=_complete_shells, show_default=False)],
    json_output: JsonOpt = False,
) -> None:
    def build() -> "Result[dict[str, str]]":
        from scratch.answers.kernel.result import Result
        from scratch.docs.completion import script
        text = script(shell)
        return Result("completions", data={"shell": shell, "script": text},
                      text=text.encode("utf-8"))
    _emit("completions", build, json_output)


@app.command("guide", help="Print a short guide for LLM agents: the pointer, the order of "
             "commands that saves tokens, refusals, --fit and next, the budget.\n\n"
             "At most 600 tokens; give it to an agent once, e.g. in its system prompt.\n\n"
             "Example: scratch guide --json")
def guide_cmd(json_output: JsonOpt = False) -> None:
    def build() -> "Result[object]":
        from scratch.answers.kernel.result import Result
        from scratch.docs import guide
        return Result("guide", data=guide.data(), text=guide.text())
    _emit("guide", build, json_output)
