"""The README's shell examples run as written.

Every fenced ``sh`` block that follows a ``<!-- runnable -->`` line is run, in the order the
README shows them, by one bash from a directory where ``scratch/samples`` is the checkout's,
against a new store, with ``scratch`` being this checkout. A block may end a line with ``# exit N`` to say the
command is expected to exit N (a refusal shown on purpose). A block that is not marked (an
install line, a client's config) is documentation only. So the front door cannot drift from
what the commands do.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]
MARK = "<!-- runnable -->"
BLOCK = re.compile(r"^" + re.escape(MARK) + r"\n```sh\n(.*?)^```", re.MULTILINE | re.DOTALL)
EXPECT = re.compile(r"#\s*exit (\d+)\s*$")


def runnable_blocks(text: str) -> list[str]:
    return [m.group(1) for m in BLOCK.finditer(text)]


def script_of(blocks: list[str]) -> str:
    """One bash script: each command line run in turn; a line marked ``# exit N`` must exit
    N, any other must succeed."""
    out = ["set -uo pipefail", "n=0"]
    for block in blocks:
        for line in block.splitlines():
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            want = EXPECT.search(line)
            code = int(want.group(1)) if want else 0
            quoted = line.replace("'", "'\"'\"'")
            out += ["n=$((n+1))", "(", line, ") >out.txt 2>&1", "rc=$?",
                    f"if [ $rc -ne {code} ]; then echo 'line failed (exit '$rc', want {code}): "
                    f"{quoted}'; cat out.txt; exit 1; fi"]
    out.append('echo "ran $n"')
    return "\n".join(out) + "\n"


def test_the_marker_finds_blocks() -> None:
    text = f"x\n{MARK}\n```sh\nscratch ls\nscratch head nope   # exit 4\n```\n```sh\nno\n```\n"
    assert runnable_blocks(text) == ["scratch ls\nscratch head nope   # exit 4\n"]
    assert "want 4" in script_of(runnable_blocks(text))


def test_every_runnable_block_of_the_readme_runs(tmp_path: Path) -> None:
    blocks = runnable_blocks((REPO / "README.md").read_text())
    if not blocks:
        pytest.fail("the README marks no block runnable")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "scratch"
    shim.write_text(f"#!/bin/sh\nexec {sys.executable} -m scratch \"$@\"\n")
    shim.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRATCH_")}
    env.update(SCRATCH_HOME=str(tmp_path / "store"), PYTHONPATH=str(REPO),
               PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", HOME=str(tmp_path))
    script = tmp_path / "readme.sh"
    script.write_text(script_of(blocks))
    work = tmp_path / "work"  # the sample is read from the checkout, the output kept here
    work.mkdir()
    (work / "scratch").symlink_to(REPO / "scratch")
    ran = subprocess.run(["bash", str(script)], cwd=work, env=env, capture_output=True,
                         text=True, timeout=240)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert ran.stdout.strip().startswith("ran ")


# ---------------------------------------------------------------------------------------------
# the README's figures are made by tests/readme_figures.py, and it stays short

def _figures() -> ModuleType:
    sys.path.insert(0, str(REPO / "tests"))
    import readme_figures
    return readme_figures


def test_the_readme_is_at_most_300_lines() -> None:
    assert len((REPO / "README.md").read_text().splitlines()) <= 300


@pytest.mark.parametrize("name", ["sample", "footer", "toolsets", "guide", "commands"])
def test_each_figure_is_what_the_script_makes(name: str) -> None:
    figures = _figures()
    shown = figures.in_readme((REPO / "README.md").read_text())
    assert name in shown, f"the README has no figure {name}"
    assert shown[name] == figures.FIGURES[name](), (
        f"README figure {name} drifted: python3 tests/readme_figures.py --write")


@pytest.mark.corpus
def test_the_pointer_table_is_what_the_script_makes(corpus_dir: Path) -> None:
    figures = _figures()
    shown = figures.in_readme((REPO / "README.md").read_text())
    assert shown["pointer-table"] == figures.pointer_table(), (
        "the README's pointer table drifted: python3 tests/readme_figures.py --write")


def test_the_script_knows_every_figure_the_readme_names() -> None:
    figures = _figures()
    shown = figures.in_readme((REPO / "README.md").read_text())
    assert set(shown) == set(figures.FIGURES)


def test_a_command_in_no_group_fails_the_command_table(monkeypatch: pytest.MonkeyPatch) -> None:
    figures = _figures()
    groups = [g for g in figures.COMMAND_GROUPS if "ui" not in g[0]]
    monkeypatch.setattr(figures, "COMMAND_GROUPS", groups)
    with pytest.raises(SystemExit, match="commands in no README group: ui"):
        figures.commands()
