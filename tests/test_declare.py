"""Commands declared once (scratch/declare.py): a command added through its declaration alone
reaches every interface and document.

The throwaway command lives in a temporary folder added to ``scratch.answers.commands``' path in
the child process, so nothing is written into the package: the CLI, a real MCP server driven by
the SDK's client, the man pages and the completion protocol all find it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Annotated

import pytest

from scratch.declare import Arg, Command, check, params
from scratch.errors import UsageError

THROWAWAY = '''
from __future__ import annotations

from typing import Annotated

from scratch.answers.kernel.result import Result
from scratch.declare import Arg, Command, Tool


def echo_words(ctx, words: Annotated[str, Arg("The words to say back.", metavar="WORDS")],
               times: Annotated[int, Arg("How many times.", flags=("--times",), metavar="N",
                                         minimum=1)] = 1,
               shout: Annotated[bool, Arg("Say them in capitals.", flags=("--shout",))] = False,
               tags: Annotated[list[str] | None, Arg("Labels to add.", flags=("--tags",),
                                                     metavar="A,B")] = None) -> Result:
    said = " ".join([words.upper() if shout else words] * times)
    if tags:
        said += " [" + "/".join(tags) + "]"
    return Result("echo-words", data={"said": said}, text=said + "\\n")


COMMAND = Command(
    "echo-words", "Say WORDS back, TIMES times.\\n\\nExample: scratch echo-words hi --times 2",
    echo_words, tools=(Tool("echo_words", "Say words back.", toolset="session"),))
'''

BOOT = ("import sys\n"
        "import scratch.answers.commands as commands\n"
        "commands.__path__.append({folder!r})\n")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    where = tmp_path / "more_commands"
    where.mkdir()
    (where / "echo_words.py").write_text(THROWAWAY)
    return where


def _python(folder: Path, code: str, *args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRATCH_")}
    env.update(SCRATCH_HOME=str(home), COLUMNS="100")
    return subprocess.run([sys.executable, "-c", BOOT.format(folder=str(folder)) + code, *args],
                          capture_output=True, text=True, env=env, timeout=120)


def _cli(folder: Path, *args: str, home: Path) -> subprocess.CompletedProcess[str]:
    return _python(folder, "from scratch.cli import main\nmain()\n", *args, home=home)


def test_a_declared_command_runs_on_the_cli_with_its_help(folder: Path, tmp_path: Path) -> None:
    home = tmp_path / "store"
    top = _cli(folder, "--help", home=home)
    assert top.returncode == 0 and "echo-words" in top.stdout
    own = _cli(folder, "echo-words", "--help", home=home)
    assert "Say WORDS back, TIMES times." in own.stdout
    assert "--times N" in own.stdout and "--shout" in own.stdout and "--tags A,B" in own.stdout
    ran = _cli(folder, "echo-words", "hi", "--times", "2", "--shout", "--tags", "a,b",
               home=home)
    assert (ran.returncode, ran.stdout) == (0, "HI HI [a/b]\n")
    refused = _cli(folder, "echo-words", "hi", "--times", "0", home=home)
    assert refused.returncode == 2
    assert "error [invalid_argument]: --times must be >= 1, not 0" in refused.stderr


def test_a_declared_command_is_an_mcp_tool(folder: Path, tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    from mcp import StdioServerParameters

    from tests.mcp_support import McpClient, text_of
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCRATCH_")}
    env["SCRATCH_HOME"] = str(tmp_path / "store")
    server = StdioServerParameters(
        command=sys.executable,
        args=["-c", BOOT.format(folder=str(folder)) + "from scratch.cli import main\nmain()\n",
              "mcp", "serve", "--quiet", "--tools", "all"], env=env)
    client = McpClient(server)
    try:
        listed = {t.name: t for t in client.tools()}
        assert "echo_words" in listed
        schema = listed["echo_words"].input_schema
        assert schema["required"] == ["words"]
        assert schema["properties"]["times"] == {"type": "integer",
                                                 "description": "How many times.",
                                                 "minimum": 1, "default": 1}
        assert schema["properties"]["tags"]["type"] == "string"
        answer = client.call("echo_words", {"words": "yo", "times": 3, "tags": "x,y"})
        assert not answer.is_error
        assert text_of(answer).startswith("yo yo yo [x/y]")
        bad = client.call("echo_words", {"words": "yo", "times": 0})
        assert bad.is_error and "--" not in text_of(bad)
    finally:
        client.close()


def test_a_declared_command_has_a_man_page_and_completes(folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "docs"
    (out / "man").mkdir(parents=True)
    (out / "completions").mkdir()
    (out / "pyproject.toml").write_text("")
    made = _python(folder, "from scratch.docs.__main__ import main\n"
                   f"sys.exit(main(['--root', {str(out)!r}]))\n", home=tmp_path / "store")
    assert made.returncode == 0, made.stderr
    page = (out / "man" / "scratch-echo-words.1").read_text()
    assert "Say WORDS back, TIMES times." in page and "\\-\\-times" in page
    assert "scratch\\-echo\\-words" in (out / "man" / "scratch.1").read_text()
    # the completion protocol the shell scripts speak answers from the same tree
    done = _python(folder, "from scratch.docs.completion import respond\n"
                   "from scratch.cli import command_tree\n"
                   "import os\n"
                   "os.environ['COMP_WORDS'] = 'scratch echo-words hi --'\n"
                   "os.environ['COMP_CWORD'] = '3'\n"
                   "sys.exit(respond('complete_bash', command_tree))\n", home=tmp_path / "store")
    assert "--times" in done.stdout and "--shout" in done.stdout, done.stdout + done.stderr


# -- the declaration records themselves ----------------------------------------------------------

def _sample(ctx: object, ref: Annotated[str, Arg("R.")],
            n: Annotated[int, Arg("N.", flags=("-n",), minimum=1, maximum=9)] = 3,
            names: Annotated[list[str] | None, Arg("L.", flags=("--names",))] = None,
            quiet: Annotated[bool, Arg("Q.", negate="--loud")] = True,
            kind: Annotated[str | None, Arg("K.", flags=("--kind",), choices=("a", "b"))] = None,
            *, rendering: object = None) -> None:
    return None


SAMPLE = Command("sample", "A sample.", _sample)


def test_params_read_the_signature_and_its_args() -> None:
    got = {p.name: (p.kind, p.required, p.default, p.positional) for p in params(SAMPLE)}
    assert got == {"ref": ("str", True, None, True), "n": ("int", False, 3, False),
                   "names": ("names", False, None, False),
                   "quiet": ("bool", False, True, False),
                   "kind": ("str", False, None, False)}  # rendering: the interface's


def test_check_refuses_out_of_range_values_by_argument() -> None:
    declared = {p.name: p for p in params(SAMPLE)}
    check(SAMPLE, declared["n"], 9)
    with pytest.raises(UsageError) as low:
        check(SAMPLE, declared["n"], 0)
    assert (low.value.message, low.value.details["argument"]) == ("'n' must be >= 1, not 0", "n")
    assert low.value.spelled(lambda a: f"--{a}") == "--n must be >= 1, not 0"
    with pytest.raises(UsageError, match="must be one of a, b, not 'c'"):
        check(SAMPLE, declared["kind"], "c")


def test_an_argument_without_arg_is_refused() -> None:
    def bad(ctx: object, x: int = 1) -> None:
        return None
    with pytest.raises(TypeError, match="'x' is not Annotated with an Arg"):
        params(Command("bad", "Bad.", bad))


def test_the_toolset_order_is_the_tool_list_order() -> None:
    from scratch.answers.kernel.catalogue import every_command
    from scratch.declare import TOOLSETS
    from scratch.mcp.specs import tools
    toolset = {t.name: t.toolset for c in every_command() for t in c.tools}
    ranks = [TOOLSETS.index(toolset[t.name]) for t in tools() if t.name in toolset]
    assert ranks == sorted(ranks)
    assert json.dumps([t.name for t in tools()])  # every tool has a name


def test_every_cli_input_hook_is_a_declared_command_s() -> None:
    """The CLI registers its input hooks by command name: a name that no command declares (one
    renamed or removed) would leave its command reading no FILE or stdin."""
    from scratch.answers.kernel.catalogue import every_command
    from scratch.cli.generate import input_hooks

    declared = {c.name for c in every_command() if c.cli}
    assert sorted(input_hooks()) == ["artifact put", "config threshold", "ingest", "log append",
                                     "run", "tokens", "write"]
    assert set(input_hooks()) <= declared


def test_a_declared_tool_without_a_toolset_is_in_none(folder: Path, tmp_path: Path) -> None:
    """A tool whose declaration names no toolset joins none: no default tool list pays for it;
    ``all`` (and a server offering it by name) still has it, after every toolset's tools."""
    (folder / "echo_words.py").write_text(
        THROWAWAY.replace(', toolset="session")', ")"))
    assert 'toolset="session"' not in (folder / "echo_words.py").read_text()
    probe = ("from scratch.declare import TOOLSETS\nfrom scratch.mcp import specs\n"
             "print(specs.declared().toolset['echo_words'])\n"
             "print([c for c in TOOLSETS if 'echo_words' in {t.name for t in specs.toolset(c)}])\n"
             "print([t.name for t in specs.toolset('all')][-1])\n")
    out = _python(folder, probe, home=tmp_path / "store")
    assert (out.returncode, out.stdout.splitlines()) == (0, ["None", "[]", "echo_words"]), \
        out.stderr
