"""CLI input hooks (registered in :func:`scratch.cli.generate.input_hooks`) for command lines whose
words the declaration alone cannot place: an optional positional before a needed one, and a command
line to run after ``--``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from scratch.calls import Call

if TYPE_CHECKING:
    from scratch.answers.kernel.context import Context


def threshold_words(ctx: Context, made: Call) -> Call:
    """``config threshold [SERVER] TOOL``: a single word is TOOL (the parser gave it to the
    first place, SERVER's)."""
    args = dict(made.args)
    if "tool" not in args and "server" in args:
        args["tool"] = args.pop("server")
    return Call(made.command, args)


def run_words(ctx: Context, made: Call, *, extra_args: list[str]) -> Call:
    """``run [OPTIONS] [NAME] -- CMD [ARGS]...``: the words after the options are the command
    to run (the parser keeps them as extra arguments, unparsed; a NAME before ``--`` became
    ``--name`` in :func:`scratch.cli.argv.rewrite_run_argv`)."""
    from scratch.errors import UsageError

    words = list(extra_args)
    if not words:
        raise UsageError("nothing to run: run [NAME] -- CMD ARGS...", code="invalid_argument")
    return made.with_args(words=words)
