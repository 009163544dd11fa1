"""Calls spelled as shell lines (scratch/cli/spelling.py) are lines the CLI parses back.

The spelling table is checked against the live command tree: every command it spells
exists, its positional arguments are the command's arguments in order, and every flag it
writes is an option of that command. A spelled call, parsed by the real CLI, gives back the
same command and arguments.
"""

from __future__ import annotations

import shlex

import pytest

from scratch.answers.kernel.catalogue import every_command
from scratch.calls import Call, call
from scratch.cli.spelling import shell_line, shell_words, spelling
from scratch.docs.tree import walk
from tests.helpers import cli

DOCS = {doc.path: doc for doc in walk()}


@pytest.mark.parametrize("command", sorted(c.name for c in every_command() if c.cli))
def test_each_spelling_matches_the_command_tree(command: str) -> None:
    form = spelling(command)
    assert form is not None
    doc = DOCS[form.words]
    arguments = [p for p in doc.params if p.kind == "argument"]
    options = {o for p in doc.params if p.kind == "option" for o in p.opts}
    assert len(form.positional) <= len(arguments), command
    for _, flag in form.options:
        assert flag.rstrip("!") in options, (command, flag)


def test_every_command_a_suggestion_names_has_a_spelling() -> None:
    names = {c.name for c in every_command()}
    unspelled = {c for c in names if spelling(c) is None}
    # a declared command is spelled from its declaration, even one that takes a stream
    assert unspelled == set()


@pytest.mark.parametrize("c,line", [
    (call("head", ref="pods", lines=20), "scratch head pods -n 20"),
    (call("slice", ref="a b", start=3, end=9, fit=True, numbers=False),
     "scratch slice 'a b' 3 9 --fit --no-numbers"),
    (call("grep", ref="log", pattern="err|fail", ignore_case=True, max_count=5, context=2,
          from_line=40, fit=True), "scratch grep log 'err|fail' -C 2 -i -m 5 --from-line 40 --fit"),
    (call("grep", all=True, pattern="x", max_count=3), "scratch grep --all x -m 3"),
    (call("iterate-over", ref="p", path="items", fields=["metadata.name", "status.phase"],
          where="@.x == 'y'", limit=10),
     "scratch iterate-over p items --fields metadata.name,status.phase --where '@.x == '\"'\"'y'\"'\"'' --limit 10"),
    (call("log read", name="ev", since=3, limit=10, fit=True),
     "scratch log read ev --since 3 --limit 10 --fit"),
    (call("budget set-window", tokens=200000), "scratch budget set-window 200000"),
    (call("get-in", ref="p", path='metadata.labels."app.kubernetes.io/name"'),
     "scratch get-in p 'metadata.labels.\"app.kubernetes.io/name\"'"),
])
def test_calls_spell_as_shell_lines(c: Call, line: str) -> None:
    assert shell_line(c) == line


def test_an_argument_without_a_spelling_is_an_error_not_a_silent_drop() -> None:
    with pytest.raises(KeyError):
        shell_words(call("head", ref="x", bogus=1))


def test_a_spelled_call_runs_as_printed(scratch_home) -> None:
    cli("write", "notes/plan.md", input="one\ntwo\nthree\n")
    for c, out in ((call("head", ref="notes/plan.md", lines=2), "1:one\n2:two\n"),
                   (call("slice", ref="notes/plan.md", start=2, end=3, numbers=False),
                    "two\nthree\n"),
                   (call("grep", ref="notes/plan.md", pattern="T.O|no such line",
                         ignore_case=True), "2:two\n")):
        words = shlex.split(shell_line(c))
        assert words[0] == "scratch"
        r = cli(*words[1:])
        assert (r.code, r.text) == (0, out), shell_line(c)


def test_the_repeated_flags_are_the_renderings_not_the_process() -> None:
    # the common flags a command line was given travel with its rendering: two renderings in
    # one process spell the same call each with its own, and a bare spelling has none
    from scratch.cli.render import JsonEnvelope, ShellText, call_json
    c = call("artifact ls", run="r1")
    w2 = ShellText(["--agent", "w2", "--run", "r1"])
    boss = JsonEnvelope(["--store", "/s", "--agent", "boss", "--coordinator"])
    assert w2.spell(c) == "scratch artifact ls r1 --agent w2 --run r1"
    assert boss.spell(c) == "scratch artifact ls r1 --store /s --agent boss --coordinator"
    assert boss.call_data(c) == boss.spell(c)
    assert call_json(c, boss.spell)["shell"] == boss.spell(c) + " --json"
    assert shell_line(c) == "scratch artifact ls r1" == ShellText().spell(c)
    assert shell_line(c, ["--session", "a b"]) == "scratch artifact ls r1 --session 'a b'"


def test_a_refusal_repeats_the_flags_given_but_not_iteration(scratch_home) -> None:
    cli("write", "big.txt", "--agent", "zz", input="".join(f"line {i} " + "word " * 30 + "\n"
                                                           for i in range(2000)))
    r = cli("--agent", "zz", "--session", "s1", "--json", "head", "big.txt", "-n", "2000")
    assert r.code == 3, r.text
    shells = [s["shell"] for s in r.json["error"]["suggestions"]]
    assert shells and all(s.endswith(" --agent zz --session s1 --json") for s in shells), shells
    text = cli("--agent", "zz", "--session", "s1", "head", "big.txt", "-n", "2000")
    lines = [line.strip() for line in text.err.splitlines() if line.startswith("  scratch ")]
    assert lines and all(line.endswith(" --agent zz --session s1") for line in lines), text.err
    # a bare spelling after those commands carries nothing of them
    assert shell_line(call("head", ref="big.txt", lines=5)) == "scratch head big.txt -n 5"
    cli("runs", "iterate", "r9")
    at = cli("--json", "--agent", "zz", "--run", "r9", "--iteration", "1", "head", "big.txt",
             "-n", "2000")
    assert at.code == 3, at.text
    shells = [s["shell"] for s in at.json["error"]["suggestions"]]
    assert shells and all(s.endswith(" --agent zz --run r9 --json") for s in shells), shells
