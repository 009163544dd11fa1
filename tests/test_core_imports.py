"""The core stays importable without the CLI stack (and so starts fast)."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import scratch

INTERFACES = ("scratch.cli", "scratch.docs", "scratch.mcp", "scratch.ui", "scratch.hooks",
              "scratch.__main__")


def core_modules() -> list[str]:
    """Every module of scratch below the interfaces (cli, docs, mcp)."""
    out = []
    for info in pkgutil.walk_packages([str(Path(scratch.__file__).parent)], "scratch."):
        if not info.name.startswith(INTERFACES):
            out.append(info.name)
    return sorted(out)


CORE = core_modules()


def test_the_core_is_every_layer_below_the_interfaces() -> None:
    assert {"scratch.answers.kernel.fitting", "scratch.answers.kernel.execution", "scratch.store",
            "scratch.index.reader", "scratch.query.paths", "scratch.tokens"} <= set(CORE)
    assert not [m for m in CORE if m.startswith(INTERFACES)]


def test_core_does_not_import_typer_or_rich() -> None:
    code = (
        "import sys\n"
        + "".join(f"import {m}\n" for m in CORE)
        + "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('typer', 'rich', 'click', 'git'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_the_command_tree_is_the_cli_table_and_the_declarations() -> None:
    """Every top-level command is either the CLI's own (COMMAND_MODULES) or a declared command
    of the answers layer (or its group); none is both."""
    from scratch.answers.kernel.catalogue import every_command
    from scratch.cli import COMMAND_MODULES, command_tree

    group = command_tree()
    names = set(group.commands)  # type: ignore[attr-defined]
    declared = {c.words[0] for c in every_command()}
    declared |= {a for c in every_command() if len(c.words) == 1 for a in c.aliases}
    assert names == set(COMMAND_MODULES) | declared
    assert not set(COMMAND_MODULES) & declared
    for name, module in COMMAND_MODULES.items():
        callback = group.commands[name].callback  # type: ignore[attr-defined]
        if callback is not None and name not in ("log", "config", "budget", "remote"):
            assert callback.__module__ == f"scratch.cli.{module}", name


def test_a_run_builds_only_its_own_command() -> None:
    code = ("import sys; sys.argv = ['scratch', 'head', '--help']\n"
            "from scratch import cli\n"
            "cli._register(sys.argv[1:])\n"
            "print(sorted(m for m in sys.modules if m.startswith('scratch.cli.')))\n"
            "print(sorted(m for m in sys.modules if m.startswith('scratch.answers.commands.')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip().splitlines() == ["['scratch.cli.common', 'scratch.cli.generate', "
                                        "'scratch.cli.negative_paths']",
                                        "['scratch.answers.commands._args', "
                                        "'scratch.answers.commands.head']"]


def test_a_command_run_loads_no_completion_or_docs_code() -> None:
    """Completion and the docs generators load only when a shell asks or docs are built."""
    code = ("import sys; sys.argv = ['scratch', 'head', 'nosuch']\n"
            "from scratch import cli\n"
            "try:\n"
            "    cli.main()\n"
            "except SystemExit:\n"
            "    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('scratch.docs')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"
