"""What an install gives: the distribution's name and version in one place."""

from __future__ import annotations

import tomllib

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

