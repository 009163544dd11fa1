"""Validation of agent and entry names, and where the store lives.

Invariants:
- An agent name matches ``[A-Za-z0-9_-]{1,128}``.
- An entry name matches ``[A-Za-z0-9/_.-]+``, is at most 255 characters, has no leading ``/``,
  no empty, ``.`` or ``..`` segment, no segment longer than 200 characters, and no segment
  starting with ``.git`` (git would act on it) or ``.tmp-`` (scratch's temporary files).
  Such a name can only ever map to a path inside its
  agent's directory; the store additionally refuses symlinks on the way (see ``scratch.store``).
- A reference ``NAME@N`` names version N (N >= 1) of entry NAME.
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


def find_store_root(
    store: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> tuple[Path, str]:
    """Where the store is, and why: --store > SCRATCH_HOME > nearest .scratch/ > XDG data dir."""
    environ = os.environ if environ is None else environ
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
