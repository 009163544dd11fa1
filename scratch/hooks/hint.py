"""The PreToolUse hint: where a client cannot replace a tool's result (Codex), scratch tells the
model, before a shell command whose output is usually big, to run it under ``scratch run``.

The rule (cheap and predictable: words, a ``stat`` for ``cat``, never the command's output):

- Only one simple command gets a hint: no pipe, ``;``, ``&&``, ``||``, ``&``, subshell,
  command substitution, here-document or redirection of its stdout (a redirection of stderr,
  ``2>&1`` or ``2>FILE``, is fine), no leading ``NAME=value``; ``bash -c SCRIPT`` (or ``sh``,
  ``zsh``, ``-lc``) is read as SCRIPT. Anything else is left alone: the model already shapes
  that output, and ``scratch run -- CMD`` could not be spelled as the same command.
- A command that already runs ``scratch`` (``scratch run``, ``scratch ingest``...) never gets
  one.
- It gets one when the name ``scratch run`` would give its output (``kubectl get pods`` ->
  ``kubectl_get``) matches a ``[thresholds]`` pattern (other than a bare ``*``): the user
  configured that tool's outputs; or, unless ``hooks.hint_builtin`` is false, when it is one of
  :data:`BUILTIN`'s usually big outputs: ``kubectl``/``oc get`` as JSON or YAML, ``kubectl
  logs`` without ``--tail``, ``journalctl`` without ``-n``, ``aws`` describe/list/get calls
  (JSON by default) without ``--query`` or a text output, ``gcloud`` list/describe as JSON or
  YAML and ``gcloud logging read``, ``az`` list/show (JSON by default) without ``--query``,
  ``gh api`` and ``gh ... --json`` without ``--jq``/``--template``, and ``cat`` of files
  together at least 4 bytes a token of the ``cat`` threshold (20,480 bytes by default).

The hint spells the command to run, exactly and runnable from the model's shell: ``scratch
[--store DIR] --agent AGENT --session SESSION run -- CMD``, CMD as the model wrote it. It never
blocks the command: the answer holds only ``additionalContext``, never a decision.

Only the standard library and scratch's config and thresholds: this runs before every shell
command of the client.
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

from scratch.hooks.identity import HookIdentity

if TYPE_CHECKING:
    from scratch.hooks.clients import JSONObject
    from scratch.store.config import Config

SHELLS = frozenset({"bash", "sh", "zsh", "dash"})
BYTES_PER_TOKEN = 4  # what a threshold in tokens is taken to be in bytes for `cat FILE`
# options that take a value, as `scratch run` skips them to name the tool (ingest's list)
VALUED_OPTIONS = frozenset({"-n", "--namespace", "--context", "--kubeconfig", "--cluster",
                            "-o", "--output", "--region", "--profile", "-R", "--repo",
                            "--project", "--zone"})
TOOL_BAD = re.compile(r"[^A-Za-z0-9_.-]+")
STDERR_REDIRECT = re.compile(r"2>>?(&1|&2|\S*)$")
STRUCTURED = ("json", "yaml", "jsonpath")
BUILTIN = ("kubectl", "oc", "journalctl", "aws", "gcloud", "az", "gh", "cat")


def run_tool(words: list[str]) -> str:
    """The tool name ``scratch run -- WORDS`` gives the output: the program and its first
    word that is not an option (the rule of ingest's ``default_tool``, kept here without its
    imports; a test holds the two together)."""
    prog = os.path.basename(words[0])
    rest = iter(words[1:])
    for word in rest:
        if word in VALUED_OPTIONS:
            next(rest, None)
            continue
        if not word.startswith("-"):
            return _slug(f"{prog}_{word}")
    return _slug(prog)


def _slug(tool: str) -> str:
    return TOOL_BAD.sub("_", tool).strip("._-")[:100] or "stdin"


def simple_command(command: str) -> tuple[str, list[str]] | None:
    """(the command's text, its words) when ``command`` is one simple command (see the
    module), else None."""
    text = command.strip()
    if not text or not _plain(text):
        return None
    try:
        words = shlex.split(text)
    except ValueError:
        return None
    if not words:
        return None
    if (os.path.basename(words[0]) in SHELLS and len(words) == 3
            and words[1] in ("-c", "-lc", "-cl")):
        return simple_command(words[2])
    if "=" in words[0] and not words[0].startswith(("-", "=")) \
            and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0], flags=re.DOTALL):
        return None
    return text, [w for w in words if not STDERR_REDIRECT.fullmatch(w)]


def _plain(text: str) -> bool:
    """No shell operator outside quotes, except a redirection of stderr."""
    quote = ""
    i = 0
    while i < len(text):
        c = text[i]
        if quote == "'":
            quote = "" if c == "'" else quote
        elif c == "\\":
            i += 1
        elif quote == '"':
            if c == '"':
                quote = ""
            elif c == "`" or text.startswith("$(", i):
                return False
        elif c in "'\"":
            quote = c
        elif c in "|;&()`\n<" or text.startswith("$(", i):
            if c == "&" and text[i - 1:i] == ">":  # 2>&1
                i += 1
                continue
            return False
        elif c == ">" and text[i - 1:i] != "2":
            return False
        i += 1
    return not quote


def _value(args: list[str], *names: str) -> str | None:
    """The value of an option (``-o json``, ``-ojson``, ``-o=json``, ``--output json``,
    ``--output=json``), the last one given."""
    found = None
    for i, word in enumerate(args):
        for name in names:
            if word == name and i + 1 < len(args):
                found = args[i + 1]
            elif word.startswith(name + "="):
                found = word[len(name) + 1:]
            elif len(name) == 2 and word.startswith(name) and len(word) > 2 \
                    and not word.startswith("--"):
                found = word[2:]
    return found


def _has(args: list[str], *names: str) -> bool:
    return any(w == n or w.startswith(n + "=") or (len(n) == 2 and w.startswith(n) and
                                                   not w.startswith("--"))
               for w in args for n in names)


def _subcommand(args: list[str]) -> str | None:
    rest = iter(args)
    for word in rest:
        if word in VALUED_OPTIONS:
            next(rest, None)
            continue
        if not word.startswith("-"):
            return word
    return None


def builtin_reason(words: list[str], cwd: Path, cat_bytes: int) -> str | None:
    """Why ``words`` usually print a big output, by :data:`BUILTIN`'s rules, or None."""
    prog, args = os.path.basename(words[0]), words[1:]
    if prog in ("kubectl", "oc"):
        sub = _subcommand(args)
        fmt = (_value(args, "-o", "--output") or "").split("=")[0]
        if sub == "get" and fmt in STRUCTURED:
            return f"{prog} get -o {fmt} prints every object whole"
        if sub == "logs" and not _has(args, "--tail", "-f", "--follow", "--limit-bytes"):
            return f"{prog} logs prints the whole log"
        return None
    if prog == "journalctl":
        if not _has(args, "-n", "--lines", "-f", "--follow"):
            return "journalctl prints the whole journal"
        return None
    if prog == "aws":
        out = _value(args, "--output")
        if out in ("text", "table") or _has(args, "--query"):
            return None
        if any(w.startswith(("describe-", "list-")) or w in (
                "get-log-events", "filter-log-events", "scan", "query") for w in args):
            return "aws prints its JSON whole"
        return None
    if prog == "gcloud":
        fmt = (_value(args, "--format") or "").split("(")[0]
        if "logging" in args and "read" in args and fmt in ("", *STRUCTURED):
            return "gcloud logging read prints every entry"
        if any(w in ("list", "describe") for w in args) and fmt in STRUCTURED:
            return f"gcloud with --format {fmt} prints every resource whole"
        return None
    if prog == "az":
        out = _value(args, "-o", "--output")
        if out in ("table", "tsv", "none") or _has(args, "--query"):
            return None
        if any(w in ("list", "show") for w in args):
            return "az prints its JSON whole"
        return None
    if prog == "gh":
        if _has(args, "--jq", "-q", "--template", "-t"):
            return None
        if args[:1] == ["api"]:
            return "gh api prints the response's JSON whole"
        if _has(args, "--json"):
            return "gh --json prints every item"
        return None
    if prog == "cat":
        files = [a for a in args if not a.startswith("-")]
        if not files or len(files) != len(args):
            return None
        size = 0
        for name in files:
            try:
                size += os.stat(cwd / os.path.expanduser(name)).st_size
            except (OSError, ValueError):
                return None
        if size >= cat_bytes:
            return f"{'the files are' if len(files) > 1 else 'the file is'} {size:,} bytes"
    return None


def hint_text(command: str, words: list[str], why: str, who: HookIdentity,
              store: str | None, client_note: str) -> str:
    spelled = ["scratch"]
    if store is not None:
        spelled += ["--store", store]
    spelled += ["--agent", who.agent, "--session", who.budget_session, "run", "--"]
    line = " ".join(shlex.quote(w) for w in spelled) + " " + command
    return (f"scratch: this command's output is usually big ({why}); {client_note}. Run it "
            f"as\n{line}\ninstead: scratch stores the whole output and prints a short pointer "
            "with commands to explore it (an output below its threshold prints as usual; the "
            "exit status is the command's).")


def hint(payload: JSONObject, who: HookIdentity, config: Config, store: str | None,
         client_note: str) -> str | None:
    """The hint for one PreToolUse payload, or None (see the module's rule)."""
    tin = payload.get("tool_input")
    command = tin.get("command") if isinstance(tin, dict) else None
    if not isinstance(command, str):
        return None
    simple = simple_command(command)
    if simple is None:
        return None
    text, words = simple
    if not words or os.path.basename(words[0]) == "scratch" or words[1:3] == ["-m", "scratch"]:
        return None
    from scratch.thresholds import glob_matches, resolve_threshold
    tool = run_tool(words)
    thresholds: dict[str, int] = config["thresholds"]
    why = None
    if config["hooks.hint_builtin"]:
        cwd = Path(str(payload.get("cwd") or "."))
        cat_bytes = resolve_threshold(tool, thresholds).min_tokens * BYTES_PER_TOKEN
        why = builtin_reason(words, cwd, cat_bytes)
    if why is None:
        for pattern in thresholds:
            if pattern.strip("*") and glob_matches(pattern, tool):
                why = f"[thresholds] pattern {pattern!r} covers {tool}"
                break
    if why is None:
        return None
    return hint_text(text, words, why, who, store, client_note)


__all__ = ["BUILTIN", "builtin_reason", "hint", "hint_text", "run_tool", "simple_command"]
