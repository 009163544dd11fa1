"""Shell completion reads a line as the CLI would: scratch.docs.resolve over the command records.

The real shells are driven in test_docs.py; these call the resolver in-process, over a small Typer
app (so each reading rule has a line that shows it) and over scratch's own tree, and the protocol
entry point (scratch.docs.completion.respond) with the words a shell sends.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import pytest
import typer
import typer.main
from helpers import cli

from scratch.cli import command_tree
from scratch.cli.common import complete_agents, complete_names
from scratch.docs import completion
from scratch.docs.model import Tree
from scratch.docs.resolve import Candidate, complete
from scratch.docs.tree import walk

SEEN: list[dict[str, Any]] = []  # what the fruit callback was given, call by call


class Color(StrEnum):
    red = "red"
    green = "green"


def complete_fruit(ctx: Any, incomplete: str) -> list[Any]:
    SEEN.append(dict(ctx.params))
    return [("apple", "a fruit"), "banana", ("cherry", None)]


def _app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def root(agent: Annotated[str | None, typer.Option("--agent")] = None) -> None:
        """The root."""

    @app.command(help="Eat FRUIT somewhere.")
    def eat(fruit: Annotated[str, typer.Argument(autocompletion=complete_fruit)],
            where: Annotated[Path, typer.Argument(file_okay=False)],
            n: Annotated[int, typer.Option("-n", "--count", help="How many.")] = 1,
            loud: Annotated[bool, typer.Option("-l", "--loud")] = False,
            color: Annotated[Color, typer.Option()] = Color.red,
            tag: Annotated[list[str] | None, typer.Option()] = None,
            agent: Annotated[str | None, typer.Option("--agent")] = None) -> None:
        pass

    @app.command(hidden=True)
    def secret(quiet: Annotated[bool, typer.Option("--quiet")] = False) -> None:
        pass

    group = typer.Typer(help="A group.")

    @group.command(help="All the words.")
    def words(rest: Annotated[list[str] | None, typer.Argument()] = None) -> None:
        pass

    app.add_typer(group, name="grp")
    return app


TREE = Tree(typer.main.get_command(_app()))


def values(words: list[str], incomplete: str = "") -> list[str]:
    return [c.value for c in complete(TREE, words, incomplete)]


def test_the_records_carry_what_reading_a_line_needs() -> None:
    eat = {p.name: p for p in TREE[("eat",)].params}
    assert eat["fruit"].complete is complete_fruit and eat["fruit"].paths is None
    assert eat["where"].paths == "dir" and eat["n"].paths is None
    assert (eat["n"].nargs, eat["loud"].nargs, eat["tag"].multiple) == (1, 0, True)
    assert eat["color"].choices == ("red", "green")
    assert TREE[()].commands == ("eat", "secret", "grp")
    assert [name for name, _ in TREE[()].listing] == ["eat", "grp"]
    assert not TREE[()].interspersed and TREE[("eat",)].interspersed
    assert ("nosuch",) not in TREE and TREE.get(("grp", "nosuch")) is None


def test_subcommands_in_their_order_with_short_help_hidden_ones_left_out() -> None:
    assert complete(TREE, [], "") == [Candidate("plain", "eat", "Eat FRUIT somewhere."),
                                      Candidate("plain", "grp", "A group.")]
    assert values([], "s") == []
    assert values(["secret"], "--q") == ["--quiet"]  # a hidden command still resolves
    assert values(["grp"], "") == ["words"]
    assert values(["nosuch"], "e") == ["eat"]  # an unknown name: complete where it stands


def test_option_names_when_the_word_starts_with_a_dash() -> None:
    assert values(["eat"], "--c") == ["--count", "--color"]
    assert values(["eat"], "-") == ["-n", "--count", "-l", "--loud", "--color", "--tag",
                                    "--agent", "--help"]
    assert values(["eat", "-n", "3"], "--c") == ["--color"]  # given already: not offered again
    assert values(["eat", "--tag", "x"], "--t") == ["--tag"]  # one that repeats is offered
    assert values(["eat", "apple", "/tmp"], "/x") == []  # all arguments given: the command's


def test_values_come_from_the_callback_filtered_with_their_help() -> None:
    assert complete(TREE, ["eat"], "") == [Candidate("plain", "apple", "a fruit"),
                                           Candidate("plain", "banana"),
                                           Candidate("plain", "cherry")]
    assert values(["eat"], "b") == ["banana"]
    assert values(["eat", "apple"], "") == [""]
    assert complete(TREE, ["eat", "apple"], "sr") == [Candidate("dir", "sr")]
    assert values(["eat", "--color"], "") == ["red", "green"]
    assert values(["eat"], "--color=g") == ["green"]
    assert values(["eat"], "=") == ["apple", "banana", "cherry"]
    assert values(["eat", "-n"], "") == []  # a number: nothing to offer


@pytest.mark.parametrize("words", [
    ["eat", "-n5"], ["eat", "-n", "5"], ["eat", "--count=5"], ["eat", "-ln", "5"],
    ["eat", "-ln5"], ["eat", "-l"], ["eat", "--loud", "--tag", "a", "--tag", "b"],
    ["eat", "--"], ["--agent", "ops", "eat"],
    # a word that cannot be placed ends the reading; the arguments stay open
    ["eat", "--nosuch"], ["eat", "apple", "--nosuch"], ["eat", "-x"], ["eat", "--loud=1"],
])
def test_options_and_their_values_are_read_as_the_cli_reads_them(words: list[str]) -> None:
    assert values(words) == ["apple", "banana", "cherry"]


def test_after_the_arguments_come_the_commands_options() -> None:
    assert values(["eat", "apple", "/tmp", "-n", "2"], "--l") == ["--loud"]
    assert values(["eat", "--", "apple"], "") == [""]  # after --, words are arguments
    assert values(["eat", "--"], "-") == []  # ... even one that starts with a dash
    assert values(["grp", "words", "a", "b"], "") == [""]  # a list argument takes them all


def test_callbacks_see_the_values_given_nearest_first() -> None:
    SEEN.clear()
    values(["--agent", "ops", "eat"])
    values(["--agent", "ops", "eat", "--agent", "dev", "-n", "3"])
    values(["eat", "--agent", ""])
    assert SEEN == [{"agent": "ops"}, {"agent": "dev", "n": "3"}, {}]


def test_scratch_parameters_declare_their_completions() -> None:
    docs = walk(include_hidden=True)
    for doc in docs:
        for param in doc.params:
            if param.name == "agent":
                assert param.complete is complete_agents, doc.name
            if (param.kind == "argument" and param.metavar in ("REF", "NAME")
                    and doc.path != ("ingest",)):  # ingest names a new entry
                assert param.complete is complete_names, doc.name
            if param.complete is not None:
                assert param.paths is None, doc.name
    by_path = {d.path: {p.name: p for p in d.params} for d in docs}
    assert by_path[("completions",)]["shell"].complete is not None
    assert by_path[("write",)]["source"].paths == "file"
    assert by_path[("tokens",)]["split_dir"].paths == "file"
    assert by_path[("log", "tail")]["lines"].paths is None


def test_the_lazy_tree_gives_walks_records() -> None:
    root = command_tree()
    tree = Tree(root)
    everything = walk(root, include_hidden=True)
    assert list(tree) == [d.path for d in everything] and len(tree) == len(everything)
    assert [tree[d.path] for d in everything] == everything
    assert [d.path for d in walk(root)] == [d.path for d in everything if not d.hidden]


@pytest.mark.parametrize(("text", "words"), [
    ('scratch read "notes/p', ["scratch", "read", "notes/p"]),  # an unterminated quote
    ("scratch read 'a b", ["scratch", "read", "a b"]),
    ("scratch read a\\", ["scratch", "read", "a"]),  # a trailing backslash
    ("scratch 'read' \"x y\"", ["scratch", "read", "x y"]),
    ("scratch\nread\n", ["scratch", "read"]),  # bash joins COMP_WORDS with its IFS, a newline
    ("", []),
])
def test_the_line_is_split_as_a_shell_would(text: str, words: list[str]) -> None:
    assert completion.split_words(text) == words


def _respond(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
             instruction: str, words: str, cword: str | None) -> tuple[int, str, str]:
    monkeypatch.setenv("COMP_WORDS", words)
    if cword is None:
        monkeypatch.delenv("COMP_CWORD", raising=False)
    else:
        monkeypatch.setenv("COMP_CWORD", cword)
    code = completion.respond(instruction, command_tree)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_protocol_answers_each_shell(monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert cli("write", "notes/plan.md", input=b"x\n").code == 0
    assert cli("--agent", "ops", "write", "runbook.md", input=b"y\n").code == 0
    ask = lambda *a: _respond(monkeypatch, capsys, *a)  # noqa: E731
    assert ask("complete_bash", 'scratch read "notes/p', "2") == (0, "plain\tnotes/plan.md\n", "")
    assert ask("complete_fish", "scratch read notes/p", "2") == (
        0, "plain\tnotes/plan.md\t\n", "")
    assert ask("complete_zsh", "scratch read --agent=o", "2") == (0, "plain\t--agent=ops\t\n", "")
    assert ask("complete_zsh", "scratch read --agent=", "2") == (
        0, "plain\t--agent=default\t\nplain\t--agent=ops\t\n", "")
    assert ask("complete_bash", "scratch read --agent = o", "4") == (0, "plain\tops\n", "")
    assert ask("complete_bash", "scratch write x ", None) == (0, "file\t\n", "")
    assert ask("complete_bash", "scratch read ", "x") == (0, "plain\tnotes/plan.md\n", "")
    assert ask("source_zsh", "", None) == (0, completion.script("zsh") + "\n", "")
    assert ask("complete_tcsh", "scratch ", None) == (1, "", "Shell tcsh not supported.\n")
    assert ask("complete", "scratch ", None) == (1, "", "Invalid completion instruction.\n")
    assert ask("run_bash", "scratch ", None) == (
        1, "", 'Completion instruction "run" not supported.\n')
