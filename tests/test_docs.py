"""Generated docs stay true to the live command tree: completions, man pages, guide, README.

Completion is exercised in the real shells (bash always; zsh and fish when installed) against a
store holding real entries, through a `scratch` on PATH that runs this checkout.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import orjson
import pytest
import typer
import typer.main
from helpers import cli

from scratch import __version__, docs
from scratch.docs import completion, guide, man
from scratch.docs.tree import walk

REPO = Path(__file__).resolve().parents[1]
DOCS = walk()
VISIBLE = [d for d in DOCS if d.path]  # every command but the root
IDS = [d.name for d in VISIBLE]
BY_PATH = {d.path: d for d in DOCS}


# -- generated files ---------------------------------------------------------------------------

def test_committed_files_match_a_fresh_generation() -> None:
    assert docs.check(REPO) == [], "run: python -m scratch.docs"


def test_regeneration_is_byte_stable_and_removes_stale_pages(tmp_path: Path) -> None:
    (tmp_path / "man").mkdir()
    (tmp_path / "man" / "scratch-gone.1").write_text("old page\n")
    first = docs.write(tmp_path)
    assert "man/scratch-gone.1" in first and not (tmp_path / "man" / "scratch-gone.1").exists()
    assert docs.write(tmp_path) == []
    for rel, text in docs.generate().items():
        assert (tmp_path / rel).read_bytes() == (REPO / rel).read_bytes() == text.encode()


def test_generation_does_not_depend_on_hash_seed() -> None:
    code = "from scratch import docs; import hashlib, json; print(hashlib.sha256(" \
           "json.dumps(docs.generate(), sort_keys=True).encode()).hexdigest())"
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env={**os.environ, "PYTHONHASHSEED": seed}, check=True).stdout
            for seed in ("1", "2")}
    assert len(outs) == 1


@pytest.mark.parametrize("shell", completion.SHELLS)
def test_completions_command_prints_the_committed_script(shell: str) -> None:
    committed = (REPO / "completions" / completion.FILES[shell]).read_bytes()
    run = cli("completions", shell)
    assert (run.code, run.out) == (0, committed)
    env = cli("completions", shell, "--json").json
    assert env["ok"] and env["data"] == {"shell": shell, "script": committed.decode()}


def test_completions_rejects_an_unknown_shell() -> None:
    run = cli("completions", "tcsh", "--json")
    assert run.code == 2
    assert run.json["error"]["code"] == "invalid_argument"
    assert run.json["error"]["choices"] == ["bash", "zsh", "fish"]


def test_docs_commands_work_with_a_broken_store_config(scratch_home: Path) -> None:
    scratch_home.mkdir(parents=True)
    (scratch_home / "scratch.toml").write_text("no_such_key = 1\n")
    assert cli("guide").code == 0
    assert cli("completions", "bash").code == 0


def test_guide_and_completion_modules_stay_clear_of_the_cli_stack() -> None:
    code = ("import sys, scratch.docs.guide, scratch.docs.completion, scratch.docs\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('typer', 'rich')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# -- completion in real shells -----------------------------------------------------------------

@pytest.fixture
def shell_env(tmp_path: Path, scratch_home: Path) -> dict[str, str]:
    """A store with entries for two agents, and a `scratch` on PATH that runs this checkout."""
    assert cli("write", "notes/plan.md", input=b"step 1\n").code == 0
    assert cli("write", "notes/todo.md", input=b"x\n").code == 0
    assert cli("--agent", "ops", "write", "runbook.md", input=b"y\n").code == 0
    bindir = tmp_path / "bin"
    bindir.mkdir()
    shim = bindir / "scratch"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m scratch "$@"\n')
    shim.chmod(0o755)
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "input.json").write_text("{}")
    env = {k: v for k, v in os.environ.items() if not k.startswith("_SCRATCH")}
    env.update(PATH=f"{bindir}{os.pathsep}{env.get('PATH', '')}", HOME=str(tmp_path),
               PYTHONPATH=str(REPO))
    return env


def _bash(env: dict[str, str], *words: str) -> list[str]:
    script = ('source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ));'
              ' _scratch_completion scratch "${COMP_WORDS[COMP_CWORD]}" "";'
              ' printf "%s\\n" "${COMPREPLY[@]}"')
    out = subprocess.run(["bash", "--norc", "--noprofile", "-c", script, "bash",
                          str(REPO / "completions" / "scratch.bash"), *words],
                         env=env, capture_output=True, text=True, timeout=60, check=True)
    return [line for line in out.stdout.splitlines() if line]


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_bash_completes_commands_entries_agents_and_options(shell_env: dict[str, str]) -> None:
    assert _bash(shell_env, "scratch", "rea") == ["read"]
    assert _bash(shell_env, "scratch", "log", "") == ["append", "read", "tail"]
    assert _bash(shell_env, "scratch", "read", "notes/p") == ["notes/plan.md"]
    assert _bash(shell_env, "scratch", "head", "") == ["notes/plan.md", "notes/todo.md"]
    assert _bash(shell_env, "scratch", "ls", "--agent", "") == ["default", "ops"]
    # bash splits --agent=o into three words; the completion glues them back
    assert _bash(shell_env, "scratch", "ls", "--agent", "=", "o") == ["ops"]
    # the agent given before or after the command decides whose entries are offered
    assert _bash(shell_env, "scratch", "--agent", "ops", "read", "") == ["runbook.md"]
    assert _bash(shell_env, "scratch", "read", "--agent", "ops", "") == ["runbook.md"]
    assert _bash(shell_env, "scratch", "read", "--since-v") == ["--since-version"]
    assert _bash(shell_env, "scratch", "completions", "") == ["bash", "zsh", "fish"]
    assert "get_in" not in _bash(shell_env, "scratch", "get")  # hidden aliases stay hidden


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_the_protocol_asks_the_shell_for_paths_where_a_file_goes(
        shell_env: dict[str, str]) -> None:
    def ask(shell: str, line: list[str]) -> list[str]:
        env = {**shell_env, "_SCRATCH_COMPLETE": f"complete_{shell}",
               "COMP_WORDS": " ".join(line), "COMP_CWORD": str(len(line) - 1)}
        out = subprocess.run(["scratch"], env=env, capture_output=True, text=True, timeout=60,
                             check=False)
        assert out.returncode == 0, out.stderr
        return [line for line in out.stdout.splitlines() if line]

    assert ask("bash", ["scratch", "write", "notes/x", "inp"]) == ["file\t"]
    assert ask("bash", ["scratch", "init", ""]) == ["file\t"]
    assert ask("bash", ["scratch", "log", "tail", "events", "-n", ""]) == []  # a number
    assert ask("zsh", ["scratch", "rea"])[0].startswith("plain\tread\tThe whole content")
    assert ask("fish", ["scratch", "ls", "--agent=o"]) == ["plain\t--agent=ops\t"]


def test_directory_only_parameters_ask_for_directories() -> None:
    from scratch.docs.completion import _wants_paths

    app = typer.Typer()

    @app.command()
    def cmd(where: Annotated[Path, typer.Argument(file_okay=False)],
            what: Annotated[Path, typer.Argument()],
            n: Annotated[int, typer.Option()] = 1) -> None:
        pass

    params = {p.name: p for p in typer.main.get_command(app).params}
    assert [_wants_paths(params[k]) for k in ("where", "what", "n")] == ["dir", "file", None]


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_script_completes_through_its_completion_functions(
        shell_env: dict[str, str]) -> None:
    # compsys builtins replaced by stubs that print what the script hands them
    stubs = ('compdef() { : }; '
             '_describe() { local n=${@[-1]}; print -rl -- "${(@P)n}" }; '
             'compadd() { local n=${@[-1]}; print -rl -- "${(@P)n}" }; '
             '_files() { print -r -- "<files $*>" }; ')

    def zsh(*words: str) -> list[str]:
        script = (stubs + 'source "$1"; shift; words=("$@"); CURRENT=${#words}; _scratch')
        out = subprocess.run(["zsh", "-f", "-c", script, "zsh",
                              str(REPO / "completions" / "_scratch"), *words],
                             env=shell_env, capture_output=True, text=True, timeout=60,
                             check=False)
        assert out.stderr == ""
        return out.stdout.splitlines()

    assert [c.split(":")[0] for c in zsh("scratch", "rea")] == ["read"]
    assert zsh("scratch", "read", "notes/") == ["notes/plan.md", "notes/todo.md"]
    assert zsh("scratch", "ls", "--agent=o") == ["--agent=ops"]
    assert zsh("scratch", "write", "notes/x", "in") == ["<files >"]


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")
def test_fish_completes_commands_entries_and_agents(shell_env: dict[str, str],
                                                    tmp_path: Path) -> None:
    def fish(line: str) -> list[str]:
        script = f'source "{REPO / "completions" / "scratch.fish"}"; complete -C {line!r}'
        out = subprocess.run(["fish", "--no-config", "-c", script], env=shell_env,
                             cwd=tmp_path / "work", capture_output=True, text=True, timeout=60,
                             check=False)
        assert out.stderr == ""
        return [c.split("\t")[0] for c in out.stdout.splitlines()]

    assert fish("scratch rea") == ["read"]
    assert fish("scratch read notes/") == ["notes/plan.md", "notes/todo.md"]
    assert fish("scratch ls --agent ") == ["default", "ops"]
    assert fish("scratch --agent ops read ") == ["runbook.md"]
    assert fish("scratch write notes/x inp") == ["input.json"]


# -- man pages ---------------------------------------------------------------------------------

SECTIONS = ["NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "ENVIRONMENT",
            "FILES", "EXAMPLES", "SEE ALSO"]


@pytest.mark.parametrize("doc", DOCS, ids=[d.name for d in DOCS])
def test_man_page_has_every_section_and_its_facts(doc) -> None:
    text = (REPO / "man" / f"{doc.page}.1").read_text()
    # a command without an example fails test_command_has_summary_option_help_and_example
    expected = [s for s in SECTIONS if s != "EXAMPLES" or doc.examples or not doc.path]
    added = [name for name, _ in _manual_sections(doc.page) if name not in man.APPENDABLE]
    expected[expected.index("OPTIONS") + 1:expected.index("OPTIONS") + 1] = added
    assert re.findall(r"^\.SH (.+)$", text, re.MULTILINE) == expected
    assert f'"scratch\\-mcp {__version__}"' in text.splitlines()[1]  # the distribution
    assert text.isascii()
    from scratch.errors import EXIT_CODE_HELP
    for code in EXIT_CODE_HELP:
        assert f".B {int(code)}\n" in text
    for var in ("SCRATCH_HOME", "SCRATCH_AGENT", "SCRATCH_SESSION", "SCRATCH_MODEL",
                "SCRATCH_DEBUG", "SCRATCH_<SECTION>_<KEY>", "NO_COLOR", "XDG_DATA_HOME",
                "XDG_CACHE_HOME"):
        assert f".B {man.esc(var)}\n" in text
    for path, _ in man.store_layout():
        assert f".I {man.esc(path)}\n" in text
    for example in doc.examples:
        assert man.esc(example) in text


def _manual_sections(page: str) -> list[tuple[str, list[str]]]:
    text = man.manual_text(page)
    return man.manual(text) if text is not None else []


MANUAL_FILES = sorted(p.stem for p in (REPO / "scratch" / "docs" / "manual").glob("*.txt"))


def test_every_manual_file_belongs_to_a_page_and_ships_in_the_wheel() -> None:
    import tomllib
    pages = {d.page for d in DOCS} | set(man.TOPICS)
    assert MANUAL_FILES and [f for f in MANUAL_FILES if f not in pages] == []
    config = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert "docs/manual/*.txt" in config["tool"]["setuptools"]["package-data"]["scratch"]


@pytest.mark.parametrize("page", MANUAL_FILES)
def test_manual_sections_are_rendered_into_their_page(page: str) -> None:
    text = (REPO / "man" / f"{page}.1").read_text()
    headings = re.findall(r"^\.SH (.+)$", text, re.MULTILINE)
    sections = _manual_sections(page)
    assert sections, "a manual file without a '## SECTION'"
    for name, lines in sections:
        assert man.esc(name) in headings
        assert "\n".join(lines) in text  # in the page as rendered, in its section
    if shutil.which("man") is None:
        return
    out = subprocess.run(["man", "-l", str(REPO / "man" / f"{page}.1")], capture_output=True,
                         text=True, timeout=60, check=False,
                         env={**os.environ, "MANPAGER": "cat", "MANWIDTH": "100"})
    assert out.returncode == 0 and out.stderr == ""
    shown = re.sub(r".\x08", "", out.stdout)  # overstrike bold, if any
    for name, _ in sections:
        assert re.search(rf"^{re.escape(name)}$", shown, re.MULTILINE), name


def test_manual_markup_renders_each_block_and_escapes_roff() -> None:
    text = ("## FIRST PART\n"
            "A -x flag, a \\path, `code-y`, **bold** and scratch-sync(1).\n"
            ".starts with a dot\n"
            "'starts with a quote\n"
            "caf\u00e9\n"
            "\n"
            "- one\n"
            "  more of one\n"
            "- two\n"
            "\n"
            "    .pre -n \\d\n"
            "\n"
            "    'still pre\n"
            "\n"
            "| k | n |\n"
            "| --- | ---: |\n"
            "| `a-b` | 1 |\n"
            "| c\\|d | 200 |\n"
            "\n"
            "+ `scratch head REF`\n"
            "  the first lines\n"
            "### Sub part\n"
            "## EXIT STATUS\n"
            "Also 127.\n")
    sections = man.manual(text)
    assert [n for n, _ in sections] == ["FIRST PART", "EXIT STATUS"]
    assert sections[0][1] == [
        ".PP",
        "A \\-x flag, a \\epath, \\fBcode\\-y\\fR, \\fBbold\\fR and \\fBscratch\\-sync\\fR(1).",
        "\\&.starts with a dot",
        "\\&'starts with a quote",
        "caf\\[u00E9]",
        ".IP \\(bu 2", "one", "more of one",
        ".IP \\(bu 2", "two",
        ".IP", ".nf", "\\&.pre \\-n \\ed", "", "\\&'still pre", ".fi",
        ".IP", ".nf",
        "k      n",
        "\\-\\-\\-  \\-\\-\\-",
        "\\fBa\\-b\\fR    1",
        "c|d  200",
        ".fi",
        ".TP", "\\fBscratch head REF\\fR", "the first lines",
        ".SS Sub part",
    ]
    for bad in ("text before a section\n", "## lower Case\n", "## SYNOPSIS\nx\n"):
        with pytest.raises(ValueError):
            man.manual(bad)


def test_a_manual_section_named_like_a_generated_one_extends_it(monkeypatch) -> None:
    doc = BY_PATH[("head",)]
    monkeypatch.setattr(man, "manual_text", lambda page: (
        "## NOTES\nA note.\n\n## EXIT STATUS\nAlso this.\n" if page == doc.page else None))
    text = man.page(doc, DOCS, __version__)
    headings = re.findall(r"^\.SH (.+)$", text, re.MULTILINE)
    assert headings.index("NOTES") == headings.index("OPTIONS") + 1
    assert headings.count("EXIT STATUS") == 1
    status = text.split(".SH EXIT STATUS")[1].split(".SH ")[0]
    assert status.rstrip().endswith(".PP\nAlso this.")


def test_store_layout_is_read_from_the_store_docstring() -> None:
    paths = [p for p, _ in man.store_layout()]
    assert paths[:1] == ["scratch.toml"] and "agents/<agent>/logs/<name>.jsonl" in paths


def test_root_page_lists_every_setting_as_an_environment_variable() -> None:
    from scratch.store.config import SETTINGS, env_name
    text = (REPO / "man" / "scratch.1").read_text()
    for key, setting in SETTINGS.items():
        if setting.type is not dict:
            assert f".B {man.esc(env_name(key))}\n" in text


@pytest.mark.skipif(shutil.which("groff") is None, reason="groff is not installed")
@pytest.mark.parametrize("page", sorted(p.name for p in (REPO / "man").glob("*.1")))
@pytest.mark.parametrize("device", ["utf8", "ascii"])  # ascii: man under LANG=C
def test_man_page_renders_without_warnings(page: str, device: str) -> None:
    out = subprocess.run(["groff", "-man", f"-T{device}", "-ww", "-z", str(REPO / "man" / page)],
                         capture_output=True, text=True, timeout=60, check=False)
    assert (out.returncode, out.stderr) == (0, "")


@pytest.mark.skipif(shutil.which("man") is None, reason="man is not installed")
def test_man_renders_the_root_page() -> None:
    out = subprocess.run(["man", "-l", str(REPO / "man" / "scratch.1")], capture_output=True,
                         text=True, timeout=60, check=False,
                         env={**os.environ, "MANPAGER": "cat", "MANWIDTH": "80"})
    assert out.returncode == 0 and out.stderr == ""
    assert "scratch-log-append(1)" in out.stdout and "EXIT STATUS" in out.stdout


# -- every command documented ------------------------------------------------------------------

@pytest.mark.parametrize("doc", VISIBLE, ids=IDS)
def test_command_has_summary_option_help_and_example(doc) -> None:
    assert doc.summary, "no one-line summary (first paragraph of the help)"
    assert len(doc.summary) <= 240 and "\n" not in doc.summary
    undocumented = [p.opts or p.metavar for p in doc.params if not p.help and not p.hidden]
    assert undocumented == [], "options or arguments without help"
    assert doc.examples, "no 'Example: ...' in the help"
    assert any(doc.name in e for e in doc.examples), "the example does not run this command"


@pytest.mark.parametrize("doc", VISIBLE, ids=IDS)
def test_command_has_a_man_page_listed_in_scratch_1(doc) -> None:
    assert (REPO / "man" / f"{doc.page}.1").is_file()
    root = (REPO / "man" / "scratch.1").read_text()
    assert f".BR {man.esc(doc.page)} (1)" in root


@pytest.mark.parametrize("doc", VISIBLE, ids=IDS)
def test_command_appears_in_the_readme(doc) -> None:
    """Every command is named in the README: as a command line, or in its command table as a
    code span (`log append`)."""
    readme = (REPO / "README.md").read_text()
    words = doc.name.removeprefix("scratch ")
    named = (re.search(re.escape(doc.name) + r"(?![\w-])", readme)
             or f"`{words}`" in readme)
    assert named, f"README lacks `{doc.name}`"


def test_every_hidden_command_is_an_alias_of_a_documented_one() -> None:
    hidden = {d.name for d in walk(include_hidden=True) if d.hidden}
    aliases = {" ".join(("scratch",) + d.path[:-1] + (a,)) for d in DOCS for a in d.aliases}
    assert hidden == aliases


# -- the guide ---------------------------------------------------------------------------------

def test_guide_fits_in_600_o200k_tokens_in_both_forms() -> None:
    from scratch.tokens import count_text, resolve_encoding
    spec = resolve_encoding(None, "o200k_base")
    human = cli("guide")
    assert human.code == 0 and human.text == guide.text()
    assert count_text(human.text, spec) <= guide.MAX_TOKENS
    envelope = cli("guide", "--json").json
    assert count_text(orjson.dumps(envelope).decode(), spec) <= guide.MAX_TOKENS
    rebuilt = "\n\n".join(f"# {s['heading']}\n{s['body']}" for s in envelope["data"]["sections"])
    assert rebuilt + "\n" == guide.text()


def test_guide_covers_what_the_issue_asks_for() -> None:
    text = guide.text()
    order = [text.index(f"scratch {c} ") for c in
             ("schema", "item-schema", "iterate-over", "get-in", "grep", "slice")]
    assert order == sorted(order)
    for word in ("pointer", "--fit", "next", "estimated_tokens", "suggestions",
                 "head_too_large", "budget_exceeded", "scratch budget used N",
                 "scratch budget reset"):
        assert word in text


def test_every_command_and_option_the_guide_names_exists() -> None:
    named = set()
    for m in re.finditer(r"scratch ([a-z][a-z-]*)(?: ([a-z][a-z-]*))?", guide.text()):
        first, second = m.groups()
        path = (first, second) if (first, second) in BY_PATH else (first,)
        named.add(path)
    missing = sorted(" ".join(p) for p in named if p not in BY_PATH)
    assert missing == [], f"the guide names commands that do not exist: {missing}"
    claims = [("ingest", "--tool"), ("iterate-over", "--fields"), ("iterate-over", "--limit"),
              ("grep", "-m")] + [(c, "--fit") for c in ("head", "tail", "slice", "grep",
                                                       "get-in", "iterate-over", "read")]
    absent = [f"{c} {o}" for c, o in claims
              if (c,) not in BY_PATH or not any(o in p.opts for p in BY_PATH[(c,)].params)]
    assert absent == [], f"the guide names options that do not exist: {absent}"


def test_ci_runs_exactly_the_readme_test_command() -> None:
    """The README opens with two set-up commands; CI runs the second one as written, with only
    ruff and mypy between its two halves (its install, then its pytest)."""
    readme = (REPO / "README.md").read_text()
    blocks = re.findall(r"```sh\n(.*?)\n```", readme, flags=re.S)
    install, test = blocks[0].strip(), blocks[1].strip()
    assert install.startswith("python3 -m pip install . && scratch ingest ")
    assert test == "python3 -m pip install '.[test]' && python3 -m pytest"
    first, second = test.split(" && ")
    ci = [line for line in (REPO / ".ci" / "run").read_text().splitlines()
          if line and not line.startswith("#")]
    at = ci.index(first)
    assert ci[at:at + 4] == [first, "python3 -m ruff check scratch tests",
                             "python3 -m mypy scratch", second]
