"""get-in's command line takes negative paths (-1, -2.name): what looks like an option is one.

get-in is declared with click's ``ignore_unknown_options``, so a PATH such as ``-1`` reaches
the command instead of being refused as an unknown option; this hook refuses what is still an
option (``--nosuch``, ``-x``) as the parser would have.
"""

from __future__ import annotations

from scratch.calls import Call
from scratch.errors import UsageError


def path_or_option(ctx: object, made: Call) -> Call:
    """``made`` as it is, unless its path is an unknown option rather than a negative index."""
    path = made.args.get("path")
    if isinstance(path, str) and path.startswith("-") and not path[1:2].isdigit():
        raise UsageError(f"no such option: {path}", code="usage_error")
    return made
