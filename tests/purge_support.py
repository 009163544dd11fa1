"""Helpers for the purge and gc tests: where a marker string can still be found in a store or
a bare repository, and whether a repository is sound."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.sync_support import git_env


def git_dir(repo: Path) -> Path:
    return repo / ".git" if (repo / ".git").is_dir() else repo


def objects_holding(repo: Path, marker: bytes) -> list[str]:
    """Every object in ``repo``'s database (reachable or not, loose or packed) whose
    content holds ``marker``: what a byte search of the compressed files cannot see."""
    proc = subprocess.run(["git", f"--git-dir={git_dir(repo)}", "cat-file",
                           "--batch-all-objects", "--batch", "--unordered"],
                          capture_output=True, env=git_env(), check=True)
    data, pos, found = proc.stdout, 0, []
    while pos < len(data):
        end = data.index(b"\n", pos)
        sha, _kind, size = data[pos:end].split()
        body = data[end + 1:end + 1 + int(size)]
        if marker in body:
            found.append(sha.decode())
        pos = end + 1 + int(size) + 1
    return found


def files_holding(root: Path, marker: bytes) -> list[str]:
    """Every file under ``root`` whose bytes hold ``marker`` (a plain byte search)."""
    found = []
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            path = Path(dirpath) / name
            if path.is_symlink() or not path.is_file():
                continue
            if marker in path.read_bytes():
                found.append(path.relative_to(root).as_posix())
    return sorted(found)


def anywhere(repo: Path, marker: bytes) -> list[str]:
    """Files (plain bytes) and objects (their content) of ``repo`` that hold ``marker``."""
    return files_holding(repo, marker) + [f"object {o}" for o in objects_holding(repo, marker)]


def history_holds(repo: Path, marker: str) -> bool:
    proc = subprocess.run(["git", f"--git-dir={git_dir(repo)}", "log", "--all", "-p",
                           "--format=%H %B"], capture_output=True, env=git_env(), check=True)
    return marker.encode() in proc.stdout


def lost_found(repo: Path) -> str:
    """What ``git fsck --lost-found`` says (asserting it found nothing wrong)."""
    proc = subprocess.run(["git", f"--git-dir={git_dir(repo)}", "fsck", "--lost-found"],
                          capture_output=True, text=True, env=git_env())
    assert proc.returncode == 0, proc.stderr
    return proc.stdout + proc.stderr
