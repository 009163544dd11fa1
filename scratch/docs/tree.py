"""The live command tree of scratch, as records: for man pages, completions and tests.

:func:`root_command` builds the click command of the whole CLI (every command module
registered); :func:`walk` reads it into the frozen records of :mod:`scratch.docs.model`
(re-exported here), parents before children, siblings sorted by name.
"""

from __future__ import annotations

from scratch.docs.model import (
    COMMON_PANEL,
    CommandDoc,
    ParamDoc,
    Tree,
    paragraphs,
    path_kind,
    split_examples,
)

__all__ = ["COMMON_PANEL", "CommandDoc", "ParamDoc", "Tree", "alias_names", "paragraphs",
           "path_kind", "root_command", "split_examples", "walk"]


def root_command() -> object:
    """The click command of the whole CLI, with every command module registered."""
    from scratch.cli import command_tree

    return command_tree()


def walk(root: object | None = None, *, include_hidden: bool = False) -> list[CommandDoc]:
    """Every command, parents before children, siblings sorted by name (a hidden command and
    the commands under it only with ``include_hidden``)."""
    tree = Tree(root if root is not None else root_command())
    out: list[CommandDoc] = []
    left_out: set[tuple[str, ...]] = set()
    for path in tree:
        doc = tree[path]
        if not include_hidden and (doc.hidden or path[:-1] in left_out):
            left_out.add(path)
            continue
        out.append(doc)
    return out


def alias_names(docs: list[CommandDoc]) -> set[str]:
    """Full names of hidden aliases (``scratch get_in``) of the given commands."""
    return {" ".join(("scratch",) + d.path[:-1] + (a,)) for d in docs for a in d.aliases}
