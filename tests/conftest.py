"""Hermetic test set-up: every test gets its own store through SCRATCH_HOME.

Real git, real tokenizers, real files; nothing reaches the network. Tests that read the shared
corpus use the ``corpus_dir`` fixture, which skips cleanly when ../shared/corpus is absent.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# ../shared/corpus beside the checkout, or wherever $SCRATCH_CORPUS says (benchmarks and
# tests/readme_figures.py look in the same places)
CORPUS = Path(os.environ.get("SCRATCH_CORPUS") or REPO.parent / "shared" / "corpus")


def pytest_configure(config: pytest.Config) -> None:
    """The tests import the checkout, not the installed copy: build the optional C extensions
    (``scratch._reindent``, ``scratch._union``, ``scratch._fieldcount``) into it when a compiler is there, so the
    C code is tested too (tests/test_compiled.py fails if a compiler is there and the build did
    not work)."""
    if hasattr(config, "workerinput"):  # an xdist worker: the controller built it
        return
    import importlib.util
    import shutil
    import subprocess
    import sys

    def stale(name: str) -> bool:
        """Missing, or built from an older ``scratch/NAME.c`` or header (a checkout that moved
        on: an accelerator whose signature changed fails at its first call)."""
        spec = importlib.util.find_spec(f"scratch.{name}")
        if spec is None or spec.origin is None:
            return True
        built = os.path.getmtime(spec.origin)
        return any(built < source.stat().st_mtime
                   for source in [REPO / "scratch" / f"{name}.c", *REPO.glob("scratch/_*.h")]
                   if source.is_file())

    missing = [name for name in ("_reindent", "_union", "_fieldcount") if stale(name)]
    if not missing or not shutil.which("cc"):
        return
    proc = subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"],
                          cwd=REPO, capture_output=True, text=True)
    if proc.returncode == 0:
        return
    # a setuptools too old for pyproject.toml: compile them the way build_ext would
    import sysconfig
    include = sysconfig.get_paths()["include"]
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    for name in missing:
        cc = subprocess.run(["cc", "-O2", "-shared", "-fPIC", f"-I{include}",
                             str(REPO / "scratch" / f"{name}.c"), "-o",
                             str(REPO / "scratch" / f"{name}{suffix}")],
                            capture_output=True, text=True)
        if cc.returncode != 0:
            print(f"note: could not build scratch.{name}: {proc.stderr.strip()[-300:]} "
                  f"{cc.stderr.strip()[-300:]}")


@pytest.fixture(scope="session")
def user_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``$XDG_CACHE_HOME`` of every test of a worker: the tokenizers' derived files (rank
    table, verified ranks) and the redaction rules' JSON copy, built by the first process that
    needs them. A cache per test made every ``python -m scratch`` that counts tokens rebuild
    them (~2.4 s of CPU each). They are a speed cache only (verified when read, replaced by
    rename); the tests of the cache itself give each case a directory of its own."""
    return tmp_path_factory.getbasetemp() / "xdg-cache"


@pytest.fixture(autouse=True)
def scratch_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, user_cache: Path) -> Path:
    home = tmp_path / "store"
    monkeypatch.setenv("SCRATCH_HOME", str(home))
    for var in ("SCRATCH_AGENT", "SCRATCH_SESSION", "SCRATCH_MODEL", "SCRATCH_ENCODING",
                "SCRATCH_DEBUG", "GIT_DIR", "GIT_WORK_TREE", "NO_COLOR"):
        monkeypatch.delenv(var, raising=False)
    for var in list(os.environ):
        if var.startswith("SCRATCH_") and var != "SCRATCH_HOME":
            monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("XDG_CACHE_HOME", str(user_cache))
    return home


@pytest.fixture
def wl(scratch_home: Path) -> str:
    """The real Insights workload file (tests/workload_support.py) stored as ``wl``."""
    from tests.helpers import cli
    from tests.workload_support import DATA
    assert cli("write", "wl", input=DATA.read_bytes()).code == 0
    return "wl"


@pytest.fixture
def corpus_dir() -> Path:
    if not CORPUS.is_dir():
        pytest.skip(f"the corpus is not present at {CORPUS} (set SCRATCH_CORPUS to where it is)")
    return CORPUS


SCREENSHOTS = REPO / "build" / "ui-screenshots"  # tests/test_ui_browser.py saves them here


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config.stash[_STARTED] = __import__("time").time()


def pytest_terminal_summary(terminalreporter: object, config: pytest.Config) -> None:
    """Name the directory of the screenshots the browser tests took in this run."""
    started = config.stash.get(_STARTED, None)
    if started is None or not SCREENSHOTS.is_dir():
        return
    shots = [p for p in SCREENSHOTS.glob("*.png") if p.stat().st_mtime >= started]
    if shots:
        terminalreporter.write_line(  # type: ignore[attr-defined]
            f"scratch ui screenshots ({len(shots)}): {SCREENSHOTS}")


_STARTED = pytest.StashKey[float]()
