"""``python -m scratch`` and the ``scratch`` command (the console scripts' entry point).

``scratch hook CLIENT`` runs after every tool call an agent client makes, so it is answered
before the CLI stack (Typer, Rich, the command tree) is imported: :mod:`scratch.hooks.run`
decides a result below its threshold on bytes alone. Every other command, and ``scratch hook
--help``, goes to :func:`scratch.cli.main`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scratch.calls import Call


def _shell_line() -> Callable[[Call], str]:
    from scratch.cli.spelling import shell_line
    return shell_line


def main() -> None:
    argv = sys.argv[1:]
    if argv[:1] == ["hook"] and not {"-h", "--help"} & set(argv):
        from scratch.hooks.run import main as hook
        sys.exit(hook(argv[1:], speller=_shell_line))
    from scratch.cli import main as cli
    cli()


if __name__ == "__main__":
    main()
