"""Validation of agent and entry names, and where the store lives.

Invariants:
- An agent name matches ``[A-Za-z0-9_-]{1,128}``.
- An entry name matches ``[A-Za-z0-9/_.-]+``, is at most 255 characters, has no leading ``/``,
  no empty, ``.`` or ``..`` segment, no segment longer than 200 characters, and no segment
  starting with ``.git`` (git would act on it) or ``.tmp-`` (scratch's temporary files).
  Such a name can only ever map to a path inside its
  agent's directory; the store additionally refuses symlinks on the way (see ``scratch.store``).
- A reference ``NAME@N`` names version N (N >= 1) of entry NAME.
- A run id matches ``[A-Za-z0-9_-]{1,128}`` (so never ``..``, ``/`` or a control character:
  it is one directory, ``runs/<run>``); an iteration is an integer >= 1.
- ``artifact:RUN/NAME`` (and ``artifact:RUN/NAME@N``) names artifact NAME of run RUN: the
  one form every read command takes for an artifact (:func:`split_artifact`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from scratch.errors import InvalidName, UsageError

AGENT_RE = re.compile(r"[A-Za-z0-9_-]{1,128}")
NAME_CHARS_RE = re.compile(r"[A-Za-z0-9/_.-]+")
MAX_NAME = 255
MAX_SEGMENT = 200  # file systems allow 255 bytes; metadata adds ".json", temp files a prefix
DEFAULT_AGENT = "default"
STORE_DIR_NAME = ".scratch"


def validate_agent(agent: str) -> str:
    if not AGENT_RE.fullmatch(agent or ""):
        raise InvalidName(
            f"invalid agent name {agent!r}: use 1-128 characters from A-Z a-z 0-9 _ -",
            code="invalid_agent", agent=agent,
        )
    return agent


RUN_RE = AGENT_RE  # one directory name, as an agent's
MAX_ITERATION = 1 << 31
ARTIFACT_PREFIX = "artifact:"


def validate_run(run: str) -> str:
    """Return ``run`` if it is a valid run id, else raise ``invalid_run`` naming the rule."""
    if isinstance(run, str) and RUN_RE.fullmatch(run):
        return run
    text = run if isinstance(run, str) else ""
    if not text:
        rule = "the run id is empty"
    elif ".." in text:
        rule = "'..' is not allowed"
    elif "/" in text or "\\" in text:
        rule = "'/' is not allowed: a run id is one name, not a path"
    elif any(ord(c) < 32 or ord(c) == 127 for c in text):
        rule = "control characters are not allowed"
    elif len(text) > 128:
        rule = f"run ids are at most 128 characters, this one has {len(text)}"
    else:
        odd = next(c for c in text if not RUN_RE.fullmatch(c))
        rule = f"character {odd!r} is not allowed"
    raise InvalidName(f"invalid run id {text[:140]!r}: {rule}; use 1-128 characters from "
                      "A-Z a-z 0-9 _ -", code="invalid_run", run=text[:140], rule=rule)


def validate_iteration(value: object) -> int:
    """An iteration number (an int, or its decimal text as an environment gives it) >= 1;
    else ``invalid_iteration``."""
    number: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str) and value.strip().isdigit():
        number = int(value.strip())
    if number is None or not 1 <= number <= MAX_ITERATION:
        raise UsageError(f"invalid iteration {value!r}: iterations are numbered from 1",
                         code="invalid_iteration", iteration=str(value)[:40])
    return number


def split_artifact(name: str) -> tuple[str, str] | None:
    """``artifact:RUN/NAME`` -> (run, name), both validated; None for anything else (an entry
    of the agent's own). The version (``@N``) is split off before, by :func:`split_ref`."""
    if not name.startswith(ARTIFACT_PREFIX):
        return None
    run, sep, rest = name[len(ARTIFACT_PREFIX):].partition("/")
    if not sep:
        raise UsageError(f"{name!r} names no artifact: use artifact:RUN/NAME",
                         code="invalid_ref", ref=name)
    return validate_run(run), validate_name(rest)


def artifact_ref(run: str, name: str, version: int | None = None) -> str:
    """The reference read commands take for artifact ``name`` of ``run``."""
    return f"{ARTIFACT_PREFIX}{run}/{name}" + (f"@{version}" if version is not None else "")


def validate_name(name: str) -> str:
    """Return ``name`` if it is a valid entry name, else raise ``invalid_name`` naming the rule."""
    def bad(rule: str) -> InvalidName:
        return InvalidName(f"{rule} (name {name!r})", name=name, rule=rule)

    if not name:
        raise bad("the name is empty")
    if len(name) > MAX_NAME:
        raise bad(f"names are at most {MAX_NAME} characters, this one has {len(name)}")
    if name.startswith("/"):
        raise bad("a leading '/' is not allowed")
    if not NAME_CHARS_RE.fullmatch(name):
        odd = next(c for c in name if not NAME_CHARS_RE.fullmatch(c))
        raise bad(f"character {odd!r} is not allowed; use A-Z a-z 0-9 / _ . -")
    for segment in name.split("/"):
        if segment == "":
            raise bad("empty segments ('//' or a trailing '/') are not allowed")
        if segment == "..":
            raise bad("'..' segments are not allowed")
        if segment == ".":
            raise bad("'.' segments are not allowed")
        if segment.casefold().startswith(".git"):
            # .git, .gitignore, .gitattributes ... would steer git itself, not be stored
            raise bad(f"segments starting with '.git' are reserved for git ({segment!r})")
        if segment.startswith(".tmp-"):
            raise bad(f"segments starting with '.tmp-' are reserved for scratch's temporary "
                      f"files ({segment!r})")
        if len(segment) > MAX_SEGMENT:
            raise bad(f"each segment is at most {MAX_SEGMENT} characters, "
                      f"{segment[:20]!r}... has {len(segment)}")
    return name


def split_ref(ref: str) -> tuple[str, int | None]:
    """``NAME`` or ``NAME@N`` -> (name, version or None). The name is not validated here."""
    if "@" in ref:
        name, _, version = ref.rpartition("@")
        if not version.isdigit() or int(version) < 1:
            raise UsageError(f"invalid version {version!r} in {ref!r}: use NAME@N with N >= 1",
                             code="invalid_ref", ref=ref)
        return name, int(version)
    return ref, None


# How the store of each root found in this process was chosen (the latest choice for that
# root): errors that depend on the store name it with this, see :func:`where`.
_STORE_SOURCES: dict[str, str] = {}


def find_store_root(
    store: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> tuple[Path, str]:
    """Where the store is, and why: --store > SCRATCH_HOME > nearest .scratch/ > XDG data dir."""
    root, source = _find_store_root(store, os.environ if environ is None else environ, cwd)
    _STORE_SOURCES[str(root)] = source
    return root, source


def _find_store_root(store: str | os.PathLike[str] | None, environ: Mapping[str, str],
                     cwd: Path | None) -> tuple[Path, str]:
    if store:
        return Path(store).expanduser().absolute(), "--store"
    if environ.get("SCRATCH_HOME"):
        return Path(environ["SCRATCH_HOME"]).expanduser().absolute(), "env SCRATCH_HOME"
    here = (cwd or Path.cwd()).absolute()
    for directory in (here, *here.parents):
        candidate = directory / STORE_DIR_NAME
        if candidate.is_dir():
            return candidate, f"nearest {STORE_DIR_NAME}/ above the current directory"
    xdg = environ.get("XDG_DATA_HOME")
    base = Path(xdg) if xdg else Path(environ.get("HOME", str(Path.home()))) / ".local" / "share"
    return (base / "scratch").absolute(), "XDG data directory"


def find_agent(flag: str | None = None, environ: Mapping[str, str] | None = None
               ) -> tuple[str, str]:
    """The agent, and why: --agent > SCRATCH_AGENT > 'default' (as Context.build chooses)."""
    environ = os.environ if environ is None else environ
    if flag:
        return flag, "--agent"
    if environ.get("SCRATCH_AGENT"):
        return environ["SCRATCH_AGENT"], "env SCRATCH_AGENT"
    return DEFAULT_AGENT, "default"


def how_chosen(source: str) -> str:
    """A store's or agent's source (as find_store_root/find_agent give it) for a person: what
    was given, or what was not set and so what was used instead."""
    return {
        "env SCRATCH_HOME": "from $SCRATCH_HOME",
        "XDG data directory": "SCRATCH_HOME unset: default",
        "env SCRATCH_AGENT": "from $SCRATCH_AGENT",
        "default": "SCRATCH_AGENT unset: default",
    }.get(source, f"from {source}" if source.startswith("--") else f"SCRATCH_HOME unset: {source}")


def where(root: Path | str, agent: str) -> str:
    """``for agent 'a' in store /path (how the store was chosen)``, for errors that depend on
    the store: the one a server uses may not be the one its user's shell would pick."""
    source = _STORE_SOURCES.get(str(root))
    how = f" ({how_chosen(source)})" if source else ""
    return f"for agent {agent!r} in store {root}{how}"
