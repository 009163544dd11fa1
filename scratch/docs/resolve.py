"""What the word under the cursor completes: the line read over the command tree, as the CLI would.

Shell completion (:mod:`scratch.docs.completion`) hands over the words before the cursor and the
word being typed. They are read command by command over the :class:`~scratch.docs.model.CommandDoc`
records the way click's parser reads a real run (options with their values, ``--opt=value``,
clusters of short options such as ``-iC 3``, ``--`` ending the options, arguments in order (a word
of a dash and a digit among them, :func:`scratch.declare.argument_word`), then a group's
subcommand), except that reading never fails: it stops quietly at a word it cannot place
(an unknown option, an option missing its value), so a half-typed line still completes. Then:

1. a word starting with ``-`` (before any ``--``) completes the option names of the command;
2. right after an option that takes a value, it completes that option's values;
3. else it completes the first argument not given yet;
4. else the command itself: its subcommands, and its option names when the word starts with a
   character that is not a letter or digit.

Values come from the callback the parameter declares (``autocompletion=`` in the CLI), called as
``callback(line, incomplete)`` where ``line.params`` holds the values given on the line (the
nearest command's win, so ``--agent`` counts before or after the command name); else from its
choices; else a path parameter asks the shell for its own path completion.

Invariants: nothing on the line runs (no option callbacks, no command); hidden commands are
resolved but never offered; an option already given is not offered again unless it may repeat;
the order of candidates is the tree's (subcommands as registered, options as declared).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple, TypeAlias

from scratch.declare import argument_word
from scratch.docs.model import CommandDoc, ParamDoc

# what a parameter on the line was given: True (a flag), its word, or its words (nargs > 1
# or an argument taking all that remain); a list of those for one given more than once
Word: TypeAlias = bool | str | tuple[str, ...]
Given: TypeAlias = Word | list[Word]


class Candidate(NamedTuple):
    kind: str  # "plain": offer the value; "file"/"dir": ask the shell to complete a path
    value: str
    help: str = ""


@dataclass(frozen=True)
class Line:
    """What a completion callback is given: the values typed on the line, by parameter name."""

    params: Mapping[str, Given]


@dataclass
class Reading:
    """One command of the line as read: the parameters given, the words left for a subcommand."""

    doc: CommandDoc
    given: dict[str, Given] = field(default_factory=dict)
    rest: list[str] = field(default_factory=list)
    prefixes: frozenset[str] = frozenset({"-", "--"})


class _Stop(Exception):
    """A word that cannot be placed: the reading of this command ends before it."""


def _split_opt(opt: str) -> tuple[str, str]:
    """(prefix, name): ``--lines`` -> ("--", "lines"), ``-n`` -> ("-", "n")."""
    first = opt[:1]
    if first.isalnum():
        return "", opt
    if opt[1:2] == first:
        return opt[:2], opt[2:]
    return first, opt[1:]


class _Reader:
    """Reads the words of one command (its own options and arguments)."""

    def __init__(self, doc: CommandDoc) -> None:
        self.doc = doc
        self.short: dict[str, ParamDoc] = {}
        self.long: dict[str, ParamDoc] = {}
        prefixes = {"-", "--"}
        for param in doc.params:
            if param.kind != "option":
                continue
            for opt in param.opts:
                prefix, name = _split_opt(opt)
                prefixes.add(prefix)
                table = self.short if len(prefix) == 1 and len(name) == 1 else self.long
                table[opt] = param
        self.prefixes = frozenset(prefixes)

    def read(self, words: Sequence[str]) -> Reading:
        reading = Reading(self.doc, prefixes=self.prefixes)
        loose: list[str] = []  # words that are not options, in order
        queue = list(words)
        try:
            while queue:
                word = queue.pop(0)
                if word == "--":
                    break
                if argument_word(word) and word not in self.short and word not in self.long:
                    loose.append(word)  # -1, -2.name: an argument, as the CLI reads it
                elif word[:1] in self.prefixes and len(word) > 1:
                    self._option(word, queue, loose, reading.given)
                elif self.doc.interspersed:
                    loose.append(word)
                else:  # a group's subcommand, or `run`'s command: the rest is theirs
                    queue.insert(0, word)
                    break
        except _Stop:  # arguments stay unassigned, as in click's resilient parsing
            reading.rest = loose
            return reading
        reading.rest = self._arguments(loose + queue, reading.given)
        return reading

    def _option(self, word: str, queue: list[str], loose: list[str],
                given: dict[str, Given]) -> None:
        name, eq, attached = word.partition("=")
        param = self.long.get(name)
        if param is not None:
            if param.nargs:
                if eq:
                    queue.insert(0, attached)
                self._take(param, queue, given)
            elif eq:
                raise _Stop  # a flag given a value
            else:
                self._record(param, True, given)
        elif word[:2] not in self.prefixes:  # -abc: short options, maybe with a value
            self._short(word, queue, loose, given)
        elif self.doc.ignore_unknown_options:
            loose.append(word)
        else:
            raise _Stop

    def _short(self, word: str, queue: list[str], loose: list[str],
               given: dict[str, Given]) -> None:
        prefix, unknown = word[0], []
        for end, char in enumerate(word[1:], start=2):
            param = self.short.get(prefix + char)
            if param is None:
                if not self.doc.ignore_unknown_options:
                    raise _Stop
                unknown.append(char)
                continue
            if not param.nargs:
                self._record(param, True, given)
                continue
            if end < len(word):  # -n5: the rest of the word is the value
                queue.insert(0, word[end:])
            self._take(param, queue, given)
            break
        if unknown:
            loose.append(prefix + "".join(unknown))

    def _take(self, param: ParamDoc, queue: list[str], given: dict[str, Given]) -> None:
        if len(queue) < param.nargs:
            raise _Stop
        value: Word
        if param.nargs == 1:
            value = queue.pop(0)
        else:
            value = tuple(queue[: param.nargs])
            del queue[: param.nargs]
        self._record(param, value, given)

    @staticmethod
    def _record(param: ParamDoc, value: Word, given: dict[str, Given]) -> None:
        if param.multiple:
            values = given.setdefault(param.name, [])
            assert isinstance(values, list)  # a parameter given more than once is a list
            values.append(value)
        else:
            given[param.name] = value

    def _arguments(self, words: list[str], given: dict[str, Given]) -> list[str]:
        """Assign ``words`` to the arguments in order (one taking all that remain takes what the
        arguments after it leave); return the words left over."""
        params = [p for p in self.doc.params if p.kind == "argument"]
        star = next((i for i, p in enumerate(params) if p.nargs < 0), len(params))
        for param in params[:star]:
            if len(words) < param.nargs:
                return words
            given[param.name] = words[0] if param.nargs == 1 else tuple(words[: param.nargs])
            words = words[param.nargs:]
        if star == len(params):
            return words
        for param in reversed(params[star + 1:]):
            if len(words) < param.nargs:
                break
            given[param.name] = words[-1] if param.nargs == 1 else tuple(words[-param.nargs:])
            words = words[: -param.nargs]
        given[params[star].name] = tuple(words)
        return []


def read_line(docs: Mapping[tuple[str, ...], CommandDoc], words: Sequence[str]) -> list[Reading]:
    """The commands of the line, the root first, each as read."""
    readings = []
    path: tuple[str, ...] = ()
    while True:
        doc = docs[path]
        reading = _Reader(doc).read(words)
        readings.append(reading)
        if not (doc.is_group and reading.rest and reading.rest[0] in doc.commands):
            return readings  # a command, or an unknown name: complete here
        path += (reading.rest[0],)
        words = reading.rest[1:]


def complete(docs: Mapping[tuple[str, ...], CommandDoc], words: Sequence[str],
             incomplete: str) -> list[Candidate]:
    """The candidates for ``incomplete``, typed after ``words`` (the words after ``scratch``)."""
    readings = read_line(docs, words)
    here = readings[-1]
    prefixes = frozenset().union(*(r.prefixes for r in readings))

    def is_option(word: str) -> bool:
        return word[:1] in prefixes

    words = list(words)
    if incomplete == "=":  # bash hands `--opt=` over as `--opt`, `=`
        incomplete = ""
    elif "=" in incomplete and is_option(incomplete):
        name, _, incomplete = incomplete.partition("=")
        words.append(name)
    if "--" not in words and is_option(incomplete):
        return _command(here, incomplete)
    for param in here.doc.params:
        if param.kind == "option" and param.nargs:
            last = next((w for w in reversed(words[-param.nargs:]) if is_option(w)), None)
            if last in param.opts:
                return _values(param, readings, incomplete)
    for param in here.doc.params:
        if param.kind == "argument" and (param.nargs < 0 or param.name not in here.given):
            return _values(param, readings, incomplete)
    return _command(here, incomplete)


def _command(here: Reading, incomplete: str) -> list[Candidate]:
    doc = here.doc
    out = [Candidate("plain", name, text) for name, text in doc.listing
           if name.startswith(incomplete)]
    if incomplete and not incomplete[0].isalnum():
        for param in doc.params:
            if param.kind != "option" or param.hidden:
                continue
            if param.name in here.given and not param.multiple:
                continue
            out += [Candidate("plain", opt, param.help) for opt in param.opts
                    if opt.startswith(incomplete)]
    return out


def _values(param: ParamDoc, readings: list[Reading], incomplete: str) -> list[Candidate]:
    if param.complete is not None:
        params: dict[str, Given] = {}
        for reading in readings:  # the root first, so values nearer the cursor win
            params.update((k, v) for k, v in reading.given.items() if v)
        return [c for c in _candidates(param.complete(Line(params), incomplete))
                if c.value.startswith(incomplete)]
    if param.choices:
        return [Candidate("plain", c) for c in param.choices if c.startswith(incomplete)]
    if param.paths:
        return [Candidate(param.paths, incomplete)]
    return []


def _candidates(items: Iterable[object]) -> Iterable[Candidate]:
    """A callback's answer: values, or (value, help) pairs."""
    for item in items:
        if isinstance(item, tuple):
            yield Candidate("plain", str(item[0]), str(item[1] or ""))
        else:
            yield Candidate("plain", str(item))
