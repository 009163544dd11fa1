"""The layers of scratch hold: each imports only those below it, and no imports go in circles.

    interfaces   scratch.cli, scratch.mcp, scratch.docs, scratch.ui, scratch.hooks,
                 scratch.__main__, scratch.api (the Python API)
    answers      scratch.answers
    query        scratch.query (pure engines, line diffs included)
    index        scratch.index (the normaliser included: it ends in the index's analysis)
    formats      scratch.formats (sniffing, JSON text, embedded documents, log lines)
    tokens       scratch.tokens
    sync         scratch.sync (remotes, push, pull, merge: over the store alone)
    store        scratch.store (the store, git, locks, names, config, the ledger, counters,
                 spooling), scratch.redact, scratch.runs, scratch.clientfiles
    foundation   scratch, scratch.errors, scratch.words, scratch.calls, scratch.lazy,
                 scratch.safefs, scratch.jsonvalues, scratch.pathnames, scratch.valuecounts,
                 scratch.reindent, scratch.declare, scratch.progress, scratch.meta,
                 scratch.thresholds, scratch.children, scratch.heap, scratch.beside (the
                 loose modules of scratch/ besides the entry points)

Every module or package directly in scratch/ is named in exactly one layer; what lies inside a
package ranks with it. The graph is read from the source and counts every reference of one
module to another: every ``import``, module-level or inside a function (both run, so both must
go downwards and never in a circle; the function-level ones are counted apart), the imports
under ``TYPE_CHECKING`` (they never run, but the module still leans on the other's types), and
the strings that name a module (``"scratch.answers.commands"``, not a module's own package; a
``"module:function"`` hook, the submodules a package's ``__init__`` loads lazily by name) or,
below the answers layer, a command (``call("ls")``, a suggestion: the command is a module of
the answers layer). :func:`imports` keeps the imports that run; :func:`references` adds the
rest, and the checks run on it. Packages of one layer may import each other but not both ways,
except the pairs in :data:`PACKAGE_CYCLES`. Run this file alone to print the graph's summary:
``python tests/test_layers.py``.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "scratch"
if __name__ == "__main__":  # run alone: read the declarations of this checkout's scratch
    sys.path.insert(0, str(PACKAGE.parent))

# bottom to top; names are the members directly in scratch/ ("scratch" is its __init__)
LAYERS = [
    # the loose modules of scratch/: what every layer may use (the entry points aside)
    ("foundation", ("scratch", "scratch.errors", "scratch.words", "scratch.calls",
                    "scratch.lazy", "scratch.safefs", "scratch.jsonvalues", "scratch.pathnames",
                    "scratch.valuecounts", "scratch.reindent", "scratch.declare",
                    "scratch.progress", "scratch.meta", "scratch.thresholds",
                    "scratch.children", "scratch.heap", "scratch.beside")),
    # store/ holds the store and the rest of its layer (git, locks, names, config, ledger);
    # clientfiles is the MCP and hook clients' files, below the two interfaces that share it
    ("store", ("scratch.store", "scratch.redact", "scratch.runs", "scratch.clientfiles")),
    # sync needs the store only; it sits below answers, which will run it as a command
    ("sync", ("scratch.sync",)),
    ("tokens", ("scratch.tokens",)),
    ("formats", ("scratch.formats",)),
    ("index", ("scratch.index",)),
    ("query", ("scratch.query",)),
    ("answers", ("scratch.answers",)),
    ("interfaces", ("scratch.cli", "scratch.mcp", "scratch.docs", "scratch.ui",
                    "scratch.hooks", "scratch.__main__", "scratch.api")),
]
RANK = {member: i for i, (_, members) in enumerate(LAYERS) for member in members}

# Packages of one layer that import each other, each with why it is let be. An entry that no
# longer holds fails the test too: take it out.
PACKAGE_CYCLES = {
    ("scratch.cli", "scratch.docs"): "shell completion (cli -> docs.completion) answers from the "
                                     "live command tree that the docs read (docs.tree -> cli), "
                                     "itself generated from the command declarations",
}

# Imports that are not a layer's use of another, each with why. The only one: the package
# re-exports the Python API (``from scratch import Scratchpad``) lazily, in a PEP 562
# ``__getattr__`` that runs on first use of the name, never when scratch is imported.
REEXPORTS = {
    ("scratch", "scratch.api"): "the Python API's names, re-exported on first use",
}

MODULE, FUNCTION = "module", "function"
# the references that are not imports that run (see the module docstring)
TYPES, NAMED = "types", "by name"
STRENGTH = {MODULE: 3, FUNCTION: 2, TYPES: 1, NAMED: 0}  # one edge, shown as its strongest


def module_name(path: Path, root: Path = PACKAGE.parent) -> str:
    rel = path.relative_to(root).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def member_of(module: str) -> str:
    """The member of scratch/ that ``module`` belongs to: ``scratch.index.lines`` ->
    ``scratch.index``."""
    return ".".join(module.split(".")[:2])


def layer_of(module: str) -> int:
    member = member_of(module)
    assert member in RANK, f"{member} is in no layer: name it in one of LAYERS"
    return RANK[member]


def members_on_disk() -> list[str]:
    """What lies directly in scratch/: its modules and the folders that hold Python code."""
    out = []
    for entry in sorted(PACKAGE.iterdir()):
        if entry.suffix == ".py":
            out.append("scratch" if entry.stem == "__init__" else f"scratch.{entry.stem}")
        elif entry.is_dir() and any(entry.rglob("*.py")):
            out.append(f"scratch.{entry.name}")
    return out


def _type_checking(node: ast.AST) -> bool:
    return (isinstance(node, ast.If) and isinstance(node.test, ast.Name)
            and node.test.id == "TYPE_CHECKING")


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def _top_level_names(path: Path) -> set[str]:
    """The names ``path`` defines at module level (functions, classes, assignments)."""
    out = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            out |= {t.id for t in targets if isinstance(t, ast.Name)}
    return out


class Names:
    """What a string may name: a module of the package by its dotted name, a
    ``"module:function"`` hook (the module named by its last parts, the function defined in
    it), a submodule of the package whose ``__init__`` the string is in, or a command."""

    def __init__(self, paths: dict[str, Path], commands: dict[str, str]) -> None:
        self.paths = paths
        self.commands = commands
        self._defined: dict[str, set[str]] = {}

    def hook(self, text: str) -> str | None:
        where, _, function = text.partition(":")
        if not re.fullmatch(r"[a-z_][a-z0-9_.]*", where) or not function.isidentifier():
            return None
        found = [m for m in self.paths if m == where or m.endswith("." + where)]
        for m in found:
            if function in self._defined.setdefault(m, _top_level_names(self.paths[m])):
                return m
        return None

    def named(self, text: str, me: str, package: bool) -> str | None:
        if text in self.paths:
            # a module's own package, named where its data files lie (importlib.resources), is
            # loaded before the module itself: no reference that could go round
            return None if me.startswith(text + ".") else text
        if package and f"{me}.{text}" in self.paths:
            return f"{me}.{text}"
        if ":" in text:
            return self.hook(text)
        return None


def imports_of(path: Path, modules: set[str], me: str, names: Names | None = None
               ) -> dict[str, str]:
    """The scratch modules that ``path`` (module ``me``) imports, each with where:
    :data:`MODULE` if any import of it runs when the module loads, else :data:`FUNCTION`
    (only inside a function). A ``from package import name`` of a submodule counts as that
    submodule. With ``names``, every reference: also :data:`TYPES` (imported under
    ``TYPE_CHECKING`` only) and :data:`NAMED` (named only in a string, see :class:`Names`;
    a command, below the answers layer, as the one a ``call(...)`` or ``Call(...)`` names)."""
    tree = ast.parse(path.read_text())
    out: dict[str, str] = {}
    docs = _docstrings(tree)
    below_answers = names is not None and layer_of(me) < RANK["scratch.answers"]
    called = {id(node.args[0]) for node in ast.walk(tree) if isinstance(node, ast.Call)
              and isinstance(node.func, ast.Name) and node.func.id in ("call", "Call")
              and node.args}

    def add(name: str, where: str) -> None:
        if (name != me and name in modules
                and STRENGTH[where] > STRENGTH.get(out.get(name, ""), -1)):
            out[name] = where

    def visit(node: ast.AST, where: str) -> None:
        if _type_checking(node):
            if names is not None:
                for child in node.body:
                    visit(child, TYPES)
            for child in node.orelse:
                visit(child, where)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("scratch"):
                    add(alias.name, where)
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
                    add(sub if sub in modules else base, where)
        elif (names is not None and isinstance(node, ast.Constant)
              and isinstance(node.value, str) and id(node) not in docs):
            named = names.named(node.value, me, path.name == "__init__.py")
            if named is not None:
                add(named, NAMED)
            elif below_answers and id(node) in called and node.value in names.commands:
                add(names.commands[node.value], NAMED)
        inner = FUNCTION if isinstance(node, _FUNCTIONS) and where != TYPES else where
        for child in ast.iter_child_nodes(node):
            visit(child, inner)

    visit(tree, MODULE)
    return out


def commands_by_name(package: Path = PACKAGE) -> dict[str, str]:
    """Every declared command's name -> the module of the answers layer that declares it."""
    if package != PACKAGE:
        return {}
    from scratch.answers.kernel.catalogue import PACKAGE as COMMANDS
    from scratch.answers.kernel.catalogue import every_command
    from scratch.answers.kernel.catalogue import module_name as command_module

    return {c.name: f"{COMMANDS}.{command_module(c.name)}" for c in every_command()}


def imports(package: Path = PACKAGE, *, everything: bool = False
            ) -> dict[str, dict[str, str]]:
    """Every module of ``package`` -> the scratch modules it imports, each with where; with
    ``everything``, every reference (see :func:`imports_of`)."""
    paths = {module_name(p, package.parent): p for p in sorted(package.rglob("*.py"))}
    names = Names(paths, commands_by_name(package)) if everything else None
    found = {me: imports_of(path, set(paths), me, names) for me, path in paths.items()}
    for me, dep in REEXPORTS if package == PACKAGE else ():
        assert found[me].pop(dep, None) == FUNCTION, f"{me} no longer re-exports {dep}"
    return found


def references(package: Path = PACKAGE) -> dict[str, dict[str, str]]:
    """Every module of ``package`` -> every scratch module it refers to, each with how."""
    return imports(package, everything=True)


def graph(found: dict[str, dict[str, str]] | None = None) -> dict[str, set[str]]:
    """Module -> the modules it refers to, however (every reference by default)."""
    return {m: set(deps) for m, deps in (references() if found is None else found).items()}


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


def package_graph(g: dict[str, set[str]]) -> dict[str, set[str]]:
    """Member of scratch/ -> the other members its modules import."""
    out: dict[str, set[str]] = {}
    for m, deps in g.items():
        out.setdefault(member_of(m), set()).update(
            member_of(d) for d in deps if member_of(d) != member_of(m))
    return out


def package_cycles(g: dict[str, set[str]]) -> list[tuple[str, ...]]:
    return [tuple(c) for c in cycles(package_graph(g))]


def upward(found: dict[str, dict[str, str]]) -> list[str]:
    out = []
    for m, deps in sorted(found.items()):
        for d, where in sorted(deps.items()):
            if layer_of(d) > layer_of(m):
                how = {FUNCTION: " in a function", TYPES: " for types only",
                       NAMED: " by name in a string"}.get(where, "")
                out.append(f"{m} ({LAYERS[layer_of(m)][0]}) imports {d} "
                           f"({LAYERS[layer_of(d)][0]}){how}")
    return out


def test_every_member_of_the_package_is_in_exactly_one_layer() -> None:
    named = [member for _, members in LAYERS for member in members]
    assert sorted(named) == sorted(set(named)), "a member is named in two layers"
    assert sorted(members_on_disk()) == sorted(named)


def test_no_module_imports_a_layer_above_its_own() -> None:
    assert upward(references()) == []


def test_no_imports_go_in_circles() -> None:
    assert cycles(graph()) == []


def test_packages_import_each_other_only_where_listed() -> None:
    assert package_cycles(graph()) == sorted(PACKAGE_CYCLES)


def test_a_function_level_import_counts_in_every_check(tmp_path: Path) -> None:
    """An import inside a function is found, marked as such, and an upward or circular one
    fails like a module-level one (the graph of a throwaway package in a temp folder)."""
    pkg = tmp_path / "scratch"
    for folder in ("index", "answers"):
        (pkg / folder).mkdir(parents=True)
        (pkg / folder / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "answers" / "x.py").write_text("")
    (pkg / "errors.py").write_text("def f():\n    from scratch.index import lines\n")
    (pkg / "index" / "lines.py").write_text(
        "from typing import TYPE_CHECKING\n\n"
        "from scratch import errors\n\n"
        "if TYPE_CHECKING:\n    from scratch.answers import x\n")
    found = imports(pkg)
    assert found["scratch.errors"] == {"scratch.index.lines": FUNCTION}
    assert found["scratch.index.lines"] == {"scratch.errors": MODULE}  # not the type-only one
    assert upward(found) == ["scratch.errors (foundation) imports scratch.index.lines "
                             "(index) in a function"]
    assert cycles(graph(found)) == [["scratch.errors", "scratch.index.lines"]]


def test_types_only_imports_and_names_in_strings_count_too(tmp_path: Path) -> None:
    """Every reference is an edge: an import under ``TYPE_CHECKING``, a ``"module:function"``
    hook, a submodule a package's ``__init__`` loads by name, a module's dotted name, and below
    the answers layer a command a ``call(...)`` names (the graph of a throwaway package)."""
    pkg = tmp_path / "scratch"
    for folder in ("index", "answers", "answers/commands", "cli"):
        (pkg / folder).mkdir(parents=True)
        (pkg / folder / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "cli" / "words.py").write_text("def run_words():\n    pass\n")
    (pkg / "answers" / "commands" / "ls.py").write_text("")
    (pkg / "answers" / "x.py").write_text('HOOK = "words:run_words"\n'
                                          'OTHER = "words:no_such_function"\n')
    (pkg / "index" / "__init__.py").write_text('HOME = {"load": "lines"}\n')
    (pkg / "index" / "lines.py").write_text(
        "from typing import TYPE_CHECKING\n\n"
        'ERRORS = "scratch.errors"\n\n'
        "if TYPE_CHECKING:\n    from scratch.answers import x\n\n"
        'def f():\n    return call("ls"), "ls"\n')
    (pkg / "errors.py").write_text('"""scratch.index.lines, in a docstring, names nothing."""\n')
    paths = {module_name(p, tmp_path): p for p in sorted(pkg.rglob("*.py"))}
    names = Names(paths, {"ls": "scratch.answers.commands.ls"})
    found = {me: imports_of(path, set(paths), me, names) for me, path in paths.items()}
    assert found["scratch.index.lines"] == {"scratch.answers.x": TYPES, "scratch.errors": NAMED,
                                            "scratch.answers.commands.ls": NAMED}
    assert found["scratch.index"] == {"scratch.index.lines": NAMED}
    assert found["scratch.answers.x"] == {"scratch.cli.words": NAMED}
    assert found["scratch.errors"] == {}
    assert upward(found) == [
        "scratch.answers.x (answers) imports scratch.cli.words (interfaces) by name in a string",
        "scratch.index.lines (index) imports scratch.answers.commands.ls (answers) by name in a "
        "string",
        "scratch.index.lines (index) imports scratch.answers.x (answers) for types only"]
    assert imports(pkg)["scratch.index.lines"] == {}  # the imports that run: none of these


def command_words() -> tuple[str, ...]:
    """Every first word of a command: the declared commands' and the CLI's own."""
    from scratch.answers.kernel.catalogue import every_command
    from scratch.cli import COMMAND_MODULES

    declared = {c.words[0] for c in every_command()}
    return tuple(sorted(declared | set(COMMAND_MODULES)))


COMMAND_WORDS = command_words()
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


def _declared_help(tree: ast.AST) -> set[int]:
    """The help texts of command declarations (``Command(...)`` and the groups' ``GROUPS``):
    the CLI's and the man pages' documentation, whose examples are command lines."""
    out: set[int] = set()
    for node in ast.walk(tree):
        declared = (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id == "Command")
        groups = (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                  and node.target.id == "GROUPS")
        if declared or groups:
            out |= {id(n) for n in ast.walk(node) if isinstance(n, ast.Constant)}
    return out


def command_literals(path: Path, name: str | None = None) -> list[str]:
    """The string constants of ``path`` (module ``name``, by default its name in scratch/)
    that spell a command line, docstrings and command declarations' help left out."""
    name = module_name(path) if name is None else name
    tree = ast.parse(path.read_text())
    docs = _docstrings(tree) | _declared_help(tree)
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                and id(node) not in docs and COMMAND_LITERAL.search(node.value)):
            found.append(f"{name}:{node.lineno}: {node.value[:60]!r}")
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
    sample = tmp_path / "_sample_for_test.py"  # beside the package, never inside it
    sample.write_text('"""scratch head x in a docstring is documentation."""\n'
                      'X = f"run scratch get-in {1} please"\n')
    assert command_literals(sample, "scratch.answers._sample_for_test") == [
        "scratch.answers._sample_for_test:2: 'run scratch get-in '"]


def summary() -> list[str]:
    """What ``python tests/test_layers.py`` prints."""
    found = references()
    g = graph(found)
    kinds = (MODULE, FUNCTION, TYPES, NAMED)

    def counts(modules: list[str]) -> list[int]:
        wheres = [w for m in modules for w in found[m].values()]
        return [wheres.count(kind) for kind in kinds]

    every = counts(list(found))
    lines = [f"{len(g)} modules, {sum(every)} references between them: {every[0]} module-level "
             f"imports, {every[1]} function-level, {every[2]} for types only, {every[3]} by "
             "name in a string",
             f"  {'layer':<11} {'modules':>7} {'module-level':>13} {'function-level':>15} "
             f"{'types only':>11} {'by name':>8}"]
    for rank, (name, _) in enumerate(LAYERS):
        members = [m for m in found if layer_of(m) == rank]
        top, inner, typed, named = counts(members)
        lines.append(f"  {name:<11} {len(members):>7} {top:>13} {inner:>15} {typed:>11} "
                     f"{named:>8}")
    listed = [f"{' <-> '.join(pair)} (listed: {why})" for pair, why in PACKAGE_CYCLES.items()
              if pair in package_cycles(g)]
    unlisted = [" <-> ".join(c) for c in package_cycles(g) if c not in PACKAGE_CYCLES]
    ups = upward(found)
    lines += [f"cycles: {len(cycles(g))}" + "".join(f"\n  {c}" for c in cycles(g)),
              "package cycles: " + "; ".join(unlisted + listed or ["none"]),
              f"upward references: {len(ups)}" + "".join(f"\n  {u}" for u in ups)]
    return lines


if __name__ == "__main__":
    print("\n".join(summary()))


def test_every_step_a_lower_layer_suggests_is_done_by_a_declared_command() -> None:
    """Below the answers layer a suggestion names a step (``suggest(Step.LIST_ENTRIES)``); the
    answers layer registers the command that does each, and each is a declared command."""
    import scratch.answers  # noqa: F401  (registers the steps' commands)
    from scratch.answers.kernel.catalogue import every_command
    from scratch.calls import Step, call, doer, suggest

    declared = {c.name for c in every_command()}
    doers = {step: doer(step) for step in Step}
    assert [step for step, command in doers.items() if command not in declared] == []
    assert suggest(Step.LIST_ENTRIES, prefix="k/", limit=None) == call("ls", prefix="k/")
    assert suggest(Step.SET_BUDGET_USED, tokens=5) == call("budget used", tokens=5)
