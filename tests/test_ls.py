"""``scratch ls`` in a terminal never breaks an entry name (issue 30, item 13): at 100
columns a long automatic name folded across three lines of a box, so it could not be copied.
A table is boxed only when every column can be as wide as its longest word; otherwise it is
the plain aligned columns a pipe gets. Driven through a real pseudo-terminal."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.terminal_support import SCRATCH, run_at_terminal, scratch_env

TOOL = "some_long_tool_name_for_an_mcp_server_listing_its_things"


def _store(home: Path, tool: str) -> str:
    done = subprocess.run([*SCRATCH, "ingest", "--tool", tool, "--store-always", "--json"],
                          env=scratch_env(home), input=json.dumps({"a": 1}), capture_output=True,
                          text=True, check=False, timeout=120, cwd=home)
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["data"]["name"])


def test_ls_at_100_columns_keeps_every_name_whole(tmp_path: Path) -> None:
    home = tmp_path / "store"
    home.mkdir()
    names = [_store(home, TOOL), _store(home, "kubectl")]
    assert len(names[0]) > 80
    code, _, _ = shown_at = run_at_terminal(home, "ls", columns=100)
    shown = shown_at.plain
    assert code == 0, shown
    lines = shown.splitlines()
    for name in names:
        assert any(name in line for line in lines), (name, shown)
    assert len(lines) == 1 + len(names)  # a header and one line per entry: nothing folded


def test_a_table_that_fits_is_boxed_with_whole_names(tmp_path: Path) -> None:
    home = tmp_path / "store"
    home.mkdir()
    name = _store(home, "kubectl")
    shown_at = run_at_terminal(home, "ls", columns=100)
    shown = shown_at.plain
    assert shown_at.code == 0
    assert "┃ name" in shown and any(name in line and line.startswith("│")
                                   for line in shown.splitlines())
