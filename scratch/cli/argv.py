"""Argument rewriting done before Typer parses (kept free of command imports)."""

from typing import List


def rewrite_run_argv(args: List[str]) -> List[str]:
    """`run NAME -- CMD` -> `run --name NAME -- CMD` (click drops '--', losing where NAME ends)."""
    if not args or "run" not in args or "--" not in args:
        return args
    at = args.index("run")
    dash = args.index("--")
    if dash < at:
        return args
    valued = {"--tool", "--format", "--store", "--agent", "--session", "--model", "--encoding",
              "--name"}
    before = args[at + 1:dash]
    bare = []
    i = 0
    while i < len(before):
        word = before[i]
        if word in valued:
            i += 2
            continue
        if not word.startswith("-"):
            bare.append(i)
        i += 1
    if len(bare) != 1:
        return args
    j = at + 1 + bare[0]
    return args[:j] + ["--name", args[j]] + args[j + 1:]
