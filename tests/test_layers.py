"""The layers of scratch hold: each imports only those below it, and no imports go in circles.

    interfaces   scratch.cli, scratch.mcp, scratch.docs
    answers      scratch.answers
    query        scratch.query, scratch.diffing
    index        scratch.index, scratch.formats
    store        scratch.store, scratch.gitstore, scratch.locking, scratch.names, scratch.config,
                 scratch.spool, scratch.stats, scratch.logs, scratch.thresholds, scratch.tokens,
                 scratch.sync, scratch.clientfiles
    foundation   scratch.errors, scratch.words, scratch.calls, scratch.lazy, scratch.safefs,
                 scratch.jsonvalues, scratch.pathnames, scratch.valuecounts, scratch.reindent

The import graph is read from the source (every ``import``, module-level or inside a
function, ``TYPE_CHECKING`` blocks left out: they never run). Run this file alone to print
the graph's summary: ``python tests/test_layers.py``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "scratch"

LAYERS = [
    ("foundation", ("scratch", "scratch.errors", "scratch.words", "scratch.calls",
                    "scratch.lazy", "scratch.safefs", "scratch.jsonvalues", "scratch.pathnames",
                    "scratch.valuecounts", "scratch.reindent")),
    ("store", ("scratch.store", "scratch.gitstore", "scratch.locking", "scratch.names",
               "scratch.config", "scratch.spool", "scratch.stats", "scratch.logs",
               "scratch.thresholds", "scratch.tokens", "scratch.sync", "scratch.clientfiles")),
    ("index", ("scratch.index", "scratch.formats")),
    ("query", ("scratch.query", "scratch.diffing")),
    ("answers", ("scratch.answers",)),
    ("interfaces", ("scratch.cli", "scratch.mcp", "scratch.docs", "scratch.__main__")),
]


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer_of(module: str) -> int:
    best, rank = -1, -1
    for i, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, rank = len(prefix), i
    assert rank >= 0, f"{module} is in no layer"
    return rank


def _type_checking(node: ast.AST) -> bool:
    return (isinstance(node, ast.If) and isinstance(node.test, ast.Name)
            and node.test.id == "TYPE_CHECKING")


def imports_of(path: Path, modules: set[str]) -> set[str]:
    """The scratch modules ``path`` imports (a ``from package import name`` of a submodule
    counts as that submodule)."""
    tree = ast.parse(path.read_text())
    me = module_name(path)
    out: set[str] = set()

    def visit(node: ast.AST) -> None:
        if _type_checking(node):
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("scratch"):
                    out.add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = me if path.name == "__init__.py" else me.rsplit(".", 1)[0]
                for _ in range(node.level - 1):
                    pkg = pkg.rsplit(".", 1)[0]
                base = f"{pkg}.{base}" if base else pkg
            if base.startswith("scratch"):
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    out.add(sub if sub in modules else base)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    out.discard(me)
    return {m for m in out if m in modules}


def graph() -> dict[str, set[str]]:
    paths = sorted(PACKAGE.rglob("*.py"))
    modules = {module_name(p) for p in paths}
    return {module_name(p): imports_of(p, modules) for p in paths}


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(g.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            strong(v)
    return out


def upward(g: dict[str, set[str]]) -> list[str]:
    out = []
    for m, deps in sorted(g.items()):
        for d in sorted(deps):
            if layer_of(d) > layer_of(m):
                out.append(f"{m} ({LAYERS[layer_of(m)][0]}) imports {d} "
                           f"({LAYERS[layer_of(d)][0]})")
    return out


def test_no_module_imports_a_layer_above_its_own() -> None:
    assert upward(graph()) == []


def test_no_imports_go_in_circles() -> None:
    assert cycles(graph()) == []


def test_every_module_is_in_a_layer() -> None:
    for m in graph():
        layer_of(m)


COMMAND_WORDS = ("head", "tail", "slice", "read", "grep", "schema", "get-in", "item-schema",
                 "iterate-over", "summarize", "log", "write", "history", "diff", "restore",
                 "rm", "ls", "stats", "config", "budget", "tokens", "ingest", "run", "export",
                 "git", "init", "guide", "completions", "mcp")
COMMAND_LITERAL = re.compile(r"\bscratch (?:" + "|".join(map(re.escape, COMMAND_WORDS))
                             + r")\b")


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string constants that are docstrings."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value,
                                                                     ast.Constant):
                out.add(id(body[0].value))
    return out


def command_literals(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    docs = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                and id(node) not in docs and COMMAND_LITERAL.search(node.value)):
            found.append(f"{module_name(path)}:{node.lineno}: {node.value[:60]!r}")
    return found


def test_no_command_line_is_spelled_below_the_interfaces() -> None:
    """Only an interface writes a call as a command line; the core names calls as data."""
    interfaces = len(LAYERS) - 1
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if layer_of(module_name(path)) < interfaces:
            found += command_literals(path)
    assert found == []


def test_the_literal_check_finds_a_command_line(tmp_path: Path) -> None:
    sample = PACKAGE / "answers" / "_sample_for_test.py"
    try:
        sample.write_text('"""scratch head x in a docstring is documentation."""\n'
                          'X = f"run scratch get-in {1} please"\n')
        assert [f.split(": ", 1)[1] for f in command_literals(sample)] == [
            "'run scratch get-in '"]
    finally:
        sample.unlink()


if __name__ == "__main__":
    g = graph()
    print(f"{len(g)} modules, {sum(len(v) for v in g.values())} imports")
    for name, _ in LAYERS:
        members = [m for m in g if LAYERS[layer_of(m)][0] == name]
        print(f"  {name:<11} {len(members):>3} modules")
    print("cycles:", cycles(g) or "none")
    print("upward imports:", upward(g) or "none")
