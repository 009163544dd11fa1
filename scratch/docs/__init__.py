"""Documentation generated from the live command tree: completions, man pages, the agent guide.

Regenerate everything with one command from the repository root::

    python -m scratch.docs            # writes completions/ and man/
    python -m scratch.docs --check    # exit 1 and list the files that drifted

What is written (paths relative to the repository root):
- ``completions/scratch.bash``, ``completions/_scratch`` (zsh), ``completions/scratch.fish``:
  exactly what ``scratch completions SHELL`` prints (see :mod:`scratch.docs.completion`).
- ``man/scratch.1`` and ``man/scratch-<command path>.1`` for every visible command, e.g.
  ``man/scratch-log-append.1`` (see :mod:`scratch.docs.man`). Pages of commands that no longer
  exist are deleted, so man/ holds exactly the generated set.

Invariants: the output depends only on the code (command tree, settings, exit codes, version),
never on the time, the machine or the store; running the generator twice changes nothing.
tests/test_docs.py regenerates in memory and byte-compares with the committed files.

Only the CLI and this package's generators import typer; :mod:`scratch.docs.guide` and
:mod:`scratch.docs.completion` (at import) stay free of it.
"""

from __future__ import annotations

from pathlib import Path

MAN_DIR = "man"
COMPLETIONS_DIR = "completions"


def generate() -> dict[str, str]:
    """Relative path -> content of every generated file."""
    from scratch import __version__
    from scratch.docs import completion, man
    from scratch.docs.tree import walk

    out: dict[str, str] = {}
    for shell in completion.SHELLS:
        out[f"{COMPLETIONS_DIR}/{completion.FILES[shell]}"] = completion.script(shell)
    for name, text in man.pages(walk(), __version__).items():
        out[f"{MAN_DIR}/{name}"] = text
    return out


def _stale(root: Path, files: dict[str, str]) -> list[str]:
    """Generated-looking man pages that the command tree no longer has."""
    return sorted(f"{MAN_DIR}/{p.name}" for p in (root / MAN_DIR).glob("scratch*.1")
                  if f"{MAN_DIR}/{p.name}" not in files)


def check(root: Path) -> list[str]:
    """Paths under ``root`` that differ from what would be generated (missing, changed, stale)."""
    files = generate()
    drift = [rel for rel, text in sorted(files.items())
             if not (root / rel).is_file() or (root / rel).read_bytes() != text.encode()]
    return drift + _stale(root, files)


def write(root: Path) -> list[str]:
    """Write every generated file under ``root``; delete stale pages; return what changed."""
    files = generate()
    changed = []
    for rel, text in sorted(files.items()):
        path = root / rel
        data = text.encode()
        if path.is_file() and path.read_bytes() == data:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        changed.append(rel)
    for rel in _stale(root, files):
        (root / rel).unlink()
        changed.append(rel)
    return changed
