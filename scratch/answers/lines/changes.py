"""What changed in an entry between two versions, as a priced answer (``read`` with
since_version, ``diff``).

Invariants:
- A diff is priced on its text like any other answer; a refusal offers the same changes
  without context lines when that fits, else the newer version read page by page.
- Only text has line diffs: binary content (as stored, or not UTF-8 past the sniffed head) is
  refused by name.
- An unchanged pair answers with no text and a notice, never an empty hunk.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scratch.answers.kernel.candidate import Alternative, Candidate, Fixed
from scratch.answers.kernel.result import Result
from scratch.calls import Call, call
from scratch.declare import Arg
from scratch.errors import UsageError, argument
from scratch.query.diffing import CR_SYMBOL, compare, summarize_ops

if TYPE_CHECKING:
    from scratch.answers.kernel.context import Context
    from scratch.store import Store
    from scratch.store.reading import Version

CONTEXT = Arg("Lines of context around each change.", flags=("-U", "--unified"), metavar="N",
              minimum=0)


def since_version(ctx: Context, ref: str, since: int, context: int = 3
                  ) -> Result[dict[str, object]]:
    """REF (NAME or NAME@N) against version ``since`` of the same entry."""
    from scratch.answers.kernel.target import entry_name
    from scratch.store.names import split_ref
    name, version = split_ref(ref)
    store = ctx.store()
    name = entry_name(store, name, deleted=version is not None)
    new = store.resolve(name, version)
    old = store.resolve(name, since)
    return diff_result("read", store, name, old, new, context)


def between(ctx: Context, name: str, a: int, b: int, context: int = 3
            ) -> Result[dict[str, object]]:
    """Versions ``a`` and ``b`` of NAME."""
    from scratch.answers.kernel.target import entry_name
    store = ctx.store()
    name = entry_name(store, name, deleted=True)
    return diff_result("diff", store, name, store.resolve(name, a), store.resolve(name, b),
                       context)


def diff_result(command: str, store: Store, name: str, old: Version, new: Version,
                context: int) -> Result[dict[str, object]]:
    if context < 0:
        raise UsageError(f"{argument('context')} must be >= 0", code="invalid_argument",
                         argument="context")
    if old.info.get("binary") or new.info.get("binary"):
        raise _not_text(name)
    base = {"name": name, "from_version": old.version, "to_version": new.version}
    if old.info["blob"] == new.info["blob"]:
        data = dict(base, unchanged=True, ops=[], added=0, removed=0)
        return Result(command, data=data, text="",
                      notices=(f"{name}: unchanged between versions {old.version} and "
                               f"{new.version}",))
    try:
        diff = compare(store.read_bytes(old), store.read_bytes(new),
                       old_label=f"{name}@{old.version}", new_label=f"{name}@{new.version}",
                       context=context)
    except UnicodeDecodeError:  # not UTF-8 past the sniffed head: no exact line diff exists
        raise _not_text(name) from None
    data = dict(base, unchanged=False, ops=diff.ops, **summarize_ops(diff.ops))
    notices = ((f"{name}: {CR_SYMBOL} in this diff marks a carriage return and is also a "
                f"literal character of the content; the JSON answer shows the exact lines",)
               if diff.literal_cr_symbol else ())
    return Result(command, data=data, text=diff.text, style="diff", notices=notices)


def _not_text(name: str) -> UsageError:
    return UsageError(f"{name!r} holds binary content; line diffs need text",
                      code="binary_content", name=name)


def diff_candidate(result: Result[dict[str, object]], asked: Call, context: int, *,
                   code: str) -> Candidate:
    """A diff answer, priced and held to the cap like any other; refused, it offers the same
    changes without context lines, else the newer version paged by lines."""
    alternatives = [Alternative(call=asked.with_args(context=0))] if context else []
    data = result.data or {}
    if data.get("name") and data.get("to_version"):
        newer = call("read", ref=f"{data['name']}@{data['to_version']}", fit=True)
        alternatives.append(Alternative(call=newer, last_resort=True))
    return Fixed(asked, result, code=code, alternatives=alternatives)
