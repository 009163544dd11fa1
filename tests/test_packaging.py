"""What an install gives: the distribution's name and version in one place, and a broken
install (a module missing) reported as such, naming what to reinstall."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib

import orjson

from scratch import __distribution__, __version__
from tests.conftest import REPO
from tests.helpers import cli


def test_name_and_version_live_in_one_place() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["name"] == __distribution__ == "scratch-mcp"
    assert "version" not in project and project["dynamic"] == ["version"]
    build = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert build["dynamic"]["version"] == {"attr": "scratch.__version__"}


def test_version_prints_the_distribution_and_version() -> None:
    run = cli("--version")
    assert (run.code, run.text) == (0, f"scratch-mcp {__version__}\n")


def test_one_install_brings_the_mcp_stack() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    names = {d.split(">")[0].split("<")[0].split("=")[0] for d in project["dependencies"]}
    assert {"mcp", "mcp-types", "anyio", "uvicorn"} <= names
    assert project["optional-dependencies"]["mcp"] == []


def _scratch_without(modules: tuple[str, ...], *args: str,
                     tmp_path) -> subprocess.CompletedProcess[str]:
    """``scratch ARGS`` in a fresh interpreter where importing ``modules`` fails (as in an
    install that lost them): ``sys.modules[name] = None`` makes every import of it raise."""
    code = (f"import sys; sys.modules.update(dict.fromkeys({modules!r})); "
            f"sys.argv = ['scratch', *{args!r}]; from scratch.cli import main; main()")
    env = {**os.environ, "SCRATCH_HOME": str(tmp_path / "store"), "PYTHONPATH": str(REPO)}
    env.pop("SCRATCH_DEBUG", None)
    return subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)


def test_a_missing_module_says_what_to_install(tmp_path) -> None:
    proc = _scratch_without(("anyio",), "mcp", "serve", tmp_path=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert "internal_error" not in proc.stderr
    assert "missing_dependency" in proc.stderr
    assert ("scratch mcp serve needs the Python module 'anyio', which this install lacks; "
            "reinstall scratch-mcp (e.g. pip install --force-reinstall scratch-mcp, or pipx "
            "reinstall scratch-mcp)") in proc.stderr


def test_a_missing_module_in_json_mode(tmp_path) -> None:
    (tmp_path / "t.csv").write_text("a,b\n1,2\n")
    assert cli("--store", str(tmp_path / "store"), "write", "t", str(tmp_path / "t.csv")).code == 0
    proc = _scratch_without(("_duckdb", "duckdb"), "--json", "sql", "t", "SELECT 1", tmp_path=tmp_path)
    assert proc.returncode == 1, proc.stderr
    error = orjson.loads(proc.stdout)["error"]
    assert error["code"] == "missing_dependency"
    assert error["module"] == "duckdb"
    assert error["install"] == "pip install --force-reinstall scratch-mcp"


def test_the_command_is_also_installed_under_the_distributions_name() -> None:
    """`uvx scratch-mcp ...` runs the command named after the package; both enter through
    scratch.__main__, which answers `scratch hook` before the CLI stack loads."""
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"scratch": "scratch.__main__:main",
                       "scratch-mcp": "scratch.__main__:main"}
