"""Hermetic test set-up: every test gets its own store through SCRATCH_HOME.

Real git, real tokenizers, real files; nothing reaches the network. Tests that read the shared
corpus use the ``corpus_dir`` fixture, which skips cleanly when ../shared/corpus is absent.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"


@pytest.fixture(autouse=True)
def scratch_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "store"
    monkeypatch.setenv("SCRATCH_HOME", str(home))
    for var in ("SCRATCH_AGENT", "SCRATCH_SESSION", "SCRATCH_MODEL", "SCRATCH_ENCODING",
                "SCRATCH_DEBUG", "GIT_DIR", "GIT_WORK_TREE", "NO_COLOR"):
        monkeypatch.delenv(var, raising=False)
    for var in list(os.environ):
        if var.startswith("SCRATCH_") and var != "SCRATCH_HOME":
            monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    return home


@pytest.fixture
def corpus_dir() -> Path:
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus is not present")
    return CORPUS
