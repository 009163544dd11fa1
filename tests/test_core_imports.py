"""The core stays importable without the CLI stack (and so starts fast)."""

from __future__ import annotations

import subprocess
import sys

CORE = ["scratch.store", "scratch.logs", "scratch.config", "scratch.errors", "scratch.names",
        "scratch.diffing", "scratch.ops.files", "scratch.ops.logs", "scratch.ops.tokens",
        "scratch.ops.run", "scratch.context", "scratch.ingest", "scratch.pointer",
        "scratch.pricing", "scratch.tokens", "scratch.formats", "scratch.index",
        "scratch.query.paths", "scratch.query.grep", "scratch.query.items",
        "scratch.explore.lines", "scratch.explore.grep", "scratch.explore.structure",
        "scratch.explore.items", "scratch.explore.read", "scratch.explore.summarize"]


def test_core_does_not_import_typer_or_rich() -> None:
    code = (
        "import sys\n"
        + "".join(f"import {m}\n" for m in CORE)
        + "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('typer', 'rich', 'click', 'git'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_command_module_table_matches_the_command_tree() -> None:
    """Each run imports only its command's module: the table must name every command."""
    import importlib

    from typer.main import get_command

    from scratch.cli import COMMAND_MODULES, app

    for module in set(COMMAND_MODULES.values()):
        importlib.import_module(f"scratch.cli.{module}")
    group = get_command(app)
    names = set(group.commands)  # type: ignore[attr-defined]
    assert names == set(COMMAND_MODULES)
    for name, module in COMMAND_MODULES.items():
        callback = group.commands[name].callback  # type: ignore[attr-defined]
        if callback is not None and name not in ("log", "config", "budget"):
            assert callback.__module__ == f"scratch.cli.{module}", name


def test_a_run_builds_only_its_own_module() -> None:
    code = ("import sys; sys.argv = ['scratch', 'tokens', '--help']\n"
            "from scratch import cli\n"
            "cli._register(sys.argv[1:])\n"
            "print(sorted(m for m in sys.modules if m.startswith('scratch.cli.')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "['scratch.cli.common', 'scratch.cli.tokens_cmds']"
