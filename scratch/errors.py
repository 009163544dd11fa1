"""The one exception tree of scratch, and the exit-code table.

Invariants:
- Every error an agent can see has a stable snake_case ``code`` (the same string in JSON output,
  in human output and in the documentation) and an exit code from :class:`ExitCode`.
- ``details`` holds extra JSON-serialisable fields that travel with the error in ``--json``
  output (``estimated_tokens``, ``suggestions``, ``valid_prefix`` ...). Keys never collide with
  ``code`` or ``message``.
- This module imports nothing beyond the standard library: the core must stay importable
  without the CLI stack.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from enum import IntEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scratch.meta import Meta

_MARK = "\x1f"
_MARKED = re.compile(_MARK + "([a-z_]+)" + _MARK)


def argument(name: str) -> str:
    """An argument named in an error message, by its core name (``count_by``): each interface
    writes it in its own spelling (the CLI ``--count-by``, MCP ``count_by``; see
    :meth:`ScratchError.spelled`), so the core never speaks one interface's language to
    another's users."""
    return f"{_MARK}{name}{_MARK}"


def spell_arguments(text: str, spell: Callable[[str], str]) -> str:
    """``text`` with every :func:`argument` written by ``spell``."""
    if _MARK not in text:
        return text
    return _MARKED.sub(lambda m: spell(m.group(1)), text)


def _quoted(name: str) -> str:
    return f"'{name}'"


class ExitCode(IntEnum):
    """Exit statuses, documented in ``scratch --help`` and the man page (EXIT STATUS)."""

    OK = 0
    ERROR = 1  # anything else that went wrong
    USAGE = 2  # bad arguments, invalid names or patterns
    LIMIT = 3  # over a per-call cap, size limit or the context budget
    NOT_FOUND = 4  # entry, version, path or key not found
    QUOTA = 5  # an agent quota would be exceeded


EXIT_CODE_HELP: dict[ExitCode, str] = {
    ExitCode.OK: "success",
    ExitCode.ERROR: "error (I/O, git, corrupt data, a failed command)",
    ExitCode.USAGE: "usage error: bad arguments, names, patterns or configuration",
    ExitCode.LIMIT: "refused: over a size limit, the per-call token cap or the context budget",
    ExitCode.NOT_FOUND: "not found: entry, version, path or key",
    ExitCode.QUOTA: "refused: an agent quota (files, log entries, bytes) would be exceeded",
}


class ScratchError(Exception):
    """Base of every error scratch reports on purpose.

    ``code`` is the stable machine-readable name; ``message`` the human sentence; ``details``
    extra fields for the JSON error object.
    """

    code: str = "error"
    exit_code: ExitCode = ExitCode.ERROR
    # a refusal's own price once charged ({"tokens", "budget"}), for a footer; not in to_dict
    charged: Meta | None = None
    # the command whose arguments the message names (set by the answers pipeline), so each
    # interface spells them as that command takes them; not in to_dict
    command: str | None = None

    def __init__(self, message: str, *, code: str | None = None, **details: object) -> None:
        plain = spell_arguments(message, _quoted)
        super().__init__(plain)
        self.template = message  # the message with its arguments marked (see argument())
        self.message = plain
        if code is not None:
            self.code = code
        self.details: dict[str, object] = details

    def detail_list(self, key: str) -> list[object]:
        """The detail ``key`` when it is a list (``suggestions``, ``close_names``, ...), as a
        new list; [] when it is absent or none."""
        value = self.details.get(key)
        return list(value) if isinstance(value, (list, tuple)) else []

    def extend(self, text: str) -> None:
        """Add ``text`` (its arguments marked as in a message) to the end of the message."""
        self.template += text
        self.message = spell_arguments(self.template, _quoted)
        self.args = (self.message,)

    def spelled(self, spell: Callable[[str], str]) -> str:
        """The message with the arguments it names written by ``spell``."""
        return spell_arguments(self.template, spell)

    def to_dict(self, spell: Callable[[str], str] | None = None) -> dict[str, object]:
        message = self.message if spell is None else self.spelled(spell)
        out: dict[str, object] = {"code": self.code, "message": message}
        for key, value in self.details.items():
            if key not in out and value is not None:
                out[key] = value
        return out

    def __str__(self) -> str:  # shown in human mode as "Error: <code>: <message>"
        return f"{self.code}: {self.message}"


class UsageError(ScratchError):
    """Bad arguments: exit 2."""

    code = "invalid_argument"
    exit_code = ExitCode.USAGE


class InvalidName(UsageError):
    code = "invalid_name"


class InvalidPattern(UsageError):
    code = "invalid_pattern"


class ConfigError(UsageError):
    code = "config_error"


class NotFound(ScratchError):
    code = "not_found"
    exit_code = ExitCode.NOT_FOUND


class EntryNotFound(NotFound):
    code = "entry_not_found"
    # where nothing else helps (no close name, not a short hash prefix) the interface ends the
    # message with how its caller makes an entry (Rendering.entries_made, from the tools it
    # offers): "path" when the name is a file on disk, "name" otherwise; not in to_dict
    unmade: str | None = None


class StoreNotFound(NotFound):
    code = "store_missing"


class VersionNotFound(NotFound):
    code = "version_not_found"


class KeyPathNotFound(NotFound):
    code = "key_path_not_found"


class OutOfRange(NotFound):
    code = "offset_out_of_range"


class LimitExceeded(ScratchError):
    """A size limit, a per-call token cap or the budget: exit 3."""

    code = "limit_exceeded"
    exit_code = ExitCode.LIMIT


class BudgetExceeded(LimitExceeded):
    code = "budget_exceeded"


class QuotaExceeded(ScratchError):
    code = "quota_exceeded"
    exit_code = ExitCode.QUOTA


class StoreError(ScratchError):
    """The store itself is unusable (read-only, not a scratch store, git failed)."""

    code = "store_error"


class UnsafePath(StoreError):
    """A symlink, hard link or other non-regular file where scratch keeps its own files
    (``details``: ``path`` relative to the store, ``reason``: symlink, hard_link, not_a_file)."""

    code = "unsafe_path"


class TokenizerError(ScratchError):
    code = "tokenizer_error"


class FormatError(ScratchError):
    code = "format_error"


class LineNotJson(FormatError):
    """One NDJSON line that is not JSON, met on the way to a path inside it.

    ``details``: ``line`` (entry line), ``item`` (array index), ``column`` (when known) and
    ``reason``. Answers over many items catch it and leave the line out instead.
    """


class IndexInvalid(ScratchError):
    """A stored version's index is missing, from an older format, incomplete or corrupt.

    Never shown to agents as a failure: the caller rebuilds the index from the content.
    ``details["reason"]`` says what was wrong.
    """

    code = "index_invalid"


class JsonError(ValueError):
    """A JSON text that does not parse; position fields are 1-based line/column, 0-based offset.

    Not a :class:`ScratchError` and never shown as it is: the JSON parsers raise it, and the
    caller that knows what the text was turns it into a :class:`FormatError`, a warning or a
    fallback (a document stored as text)."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None,
                 offset: int | None = None) -> None:
        where = f" at line {line}, column {column}" if line is not None else ""
        super().__init__(message + where)
        self.reason = message
        self.line = line
        self.column = column
        self.offset = offset


class MissingDependency(ScratchError):
    """A module scratch depends on cannot be imported: a broken or partial install, never a
    bug. ``details``: ``module`` (the missing one) and ``install`` (the command that mends it)."""

    code = "missing_dependency"


def missing_dependency(exc: ImportError, what: str = "scratch") -> MissingDependency:
    """The error for ``exc`` (an import that failed), naming the module and what to install.

    Every module scratch imports is a dependency of its one distribution, so the cure is
    always the same: reinstall it, which brings the missing module back.
    """
    from scratch import __distribution__

    module = exc.name or str(exc)
    install = f"pip install --force-reinstall {__distribution__}"
    return MissingDependency(
        f"{what} needs the Python module {module!r}, which this install lacks; reinstall "
        f"{__distribution__} (e.g. {install}, or pipx reinstall {__distribution__})",
        module=module, install=install)


class SyncError(ScratchError):
    """A sync could not finish (fetch or push failed, the remote was refused). Nothing is left
    half-merged: ``details`` says what happened (``remote``, ``stage``) and what to run next."""

    code = "sync_failed"
