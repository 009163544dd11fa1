"""item-schema: the union of the keys across the items of one array (or the records of a map of
records, or nested arrays flattened: :func:`scratch.answers.rows.arrays.rows_at`), as a
candidate answer.

Invariants:
- Nested keys are dotted (``format_path`` spelling, so they can be passed to ``get-in`` and
  as ``fields``), each with the JSON types seen (with counts) and its presence ``k/n``, and
  how many of those values are null (``home_score: integer|null 6508/6508, 4 null``: present
  in every item, null in 4).
- With a window (offset/limit; a negative offset counts from the end) only the windowed items
  are read; CSV/TSV rows and parsed log records are streamed from their stored lines.
- An NDJSON line that is not JSON keeps its place but counts nowhere; the answer warns with
  its line.
- A refused item-schema offers shallower depths (2, then 1) and a smaller window that fit.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Annotated

from scratch.answers.commands._args import KEY_FIELD, LIMIT, OFFSET, PATH, REF, ROWS_PATH_HELP
from scratch.answers.kernel.candidate import SHRINK, Alternative, Candidate
from scratch.answers.kernel.context import Context
from scratch.answers.kernel.result import Result
from scratch.answers.kernel.target import Target, open_target
from scratch.answers.rows.arrays import window_end
from scratch.answers.rows.base import table_of
from scratch.answers.rows.items import JsonItems
from scratch.calls import Call, call
from scratch.declare import Arg, Command, Tool
from scratch.errors import UsageError, argument

if TYPE_CHECKING:
    from scratch.answers.kernel.candidate import Step
    from scratch.answers.rows.items import Item
    from scratch.query.items import ItemSchema as Union

    class ItemSchemaData(Union):
        """``--json``'s data: the union schema of the window, and where it was read."""

        name: str
        version: int | None
        path: str
        length: int


class ItemSchema(Candidate):
    """The union schema of the items ``offset..`` (at most ``limit``) of the array at PATH."""

    command = "item-schema"
    code = "item_schema_too_large"

    def __init__(self, target: Target, path: str, *, offset: int = 0, limit: int | None = None,
                 depth: int | None = None, asked: Call | None = None,
                 owner: bool = True, key_field: str | None = None) -> None:
        if depth is not None and depth < 1:
            raise UsageError(f"{argument('depth')} must be >= 1, not {depth}",
                             code="invalid_argument", argument="depth")
        self.target = target
        self.path = path
        self.offset = offset
        self.limit = limit
        self.depth = depth
        self.key_field = key_field
        self._owner = owner
        super().__init__(asked or call("item-schema", ref=target.ref, path=path,
                                       offset=offset or None, limit=limit, depth=depth,
                                       key_field=key_field))
        self._result = self._compute()
        self.shrink_units = self.window  # a smaller window (limit k) for k < the window

    def _compute(self) -> Result[ItemSchemaData]:
        from scratch.query.items import item_schema as union
        target, offset, limit = self.target, self.offset, self.limit
        table = table_of(target, self.path)
        items: Iterable[Item]
        source: JsonItems | None = None
        if table is None:  # an array, a map of records, or nested arrays flattened
            source = JsonItems(target, self.path, self.key_field)
            total = source.total
            if offset < 0:  # from the end: --offset -20 is the last 20 items
                offset = self.offset = max(0, total + offset)
            items = source.read(offset, window_end(total, offset, limit))
            bad = dict(source.bad)
        else:  # CSV/TSV rows and log records, streamed from their stored lines
            total = table.total
            if offset < 0:
                offset = self.offset = max(0, total + offset)
            items, bad = table.iter_rows(offset, window_end(total, offset, limit)), {}
        self.total = total
        self.window = window_end(total, offset, limit) - offset
        result = union(items, offset=offset, limit=limit, total=total, pre_windowed=True,
                       depth=self.depth, not_json=bad.keys())
        n = result["items"]
        lines = []
        window = result.get("window")
        if window and (offset or (limit is not None and offset + n < total)):
            lines.append(f"window: items {offset}..{offset + n - 1} of {total}")
        kinds = [f"{t} {c}" for t, c in result["item_types"].items()]
        if result["not_json"]:
            kinds.append(f"not JSON {result['not_json']}")
        lines.append("item types: " + (", ".join(kinds) or "none"))
        for f in result["fields"]:
            types = "|".join(f["types"])
            elems = (" of " + "|".join(f["element_types"])) if f.get("element_types") else ""
            nulls = f["types"].get("null") or 0
            lines.append(f"{f['path']}: {types}{elems} {f['presence']}"
                         + (f", {nulls:,} null" if nulls else ""))
        data: ItemSchemaData = {"name": target.name, "version": target.version,
                                "path": self.path, "length": total, **result}
        warnings = (*(source.warnings if source is not None else ()),
                    *(table.warnings if table is not None else ()))
        return Result("item-schema", data=data, text="\n".join(lines) + "\n",
                      warnings=warnings)

    def page(self, k: int) -> Result[ItemSchemaData]:
        return self._result

    def shrunk(self, k: int) -> Candidate | None:
        return ItemSchema(self.target, self.path, offset=self.offset, limit=k,
                          depth=self.depth, owner=False, key_field=self.key_field)

    def plan(self) -> list[Step]:
        from functools import partial
        depths = [Alternative(candidate=partial(self._at_depth, d)) for d in (2, 1)
                  if self.depth is None or d < self.depth]
        return [*depths, SHRINK]

    def _at_depth(self, depth: int, cap: int) -> Candidate:
        return ItemSchema(self.target, self.path, offset=self.offset, limit=self.limit,
                          depth=depth, owner=False, key_field=self.key_field)

    def close(self) -> None:
        if self._owner:
            self.target.index.close()


def item_schema_candidate(target: Target, path: str, *, depth: int | None = None
                          ) -> ItemSchema:
    """The item-schema of the array at PATH of an open target (kept open), for suggestions."""
    return ItemSchema(target, path, depth=depth, owner=False)


DEPTH = Arg("List keys down to this depth.", flags=("--depth",),
            metavar="N", minimum=1)


def item_schema(ctx: Context, ref: Annotated[str, REF], path: Annotated[str, PATH],
                offset: Annotated[int, OFFSET] = 0, limit: Annotated[int | None, LIMIT] = None,
                depth: Annotated[int | None, DEPTH] = None,
                key_field: Annotated[str | None, KEY_FIELD] = None, *, asked: Call
                ) -> Candidate:
    from scratch.answers.rows.arrays import suggest_key_field
    target = open_target(ctx, ref)
    try:
        return ItemSchema(target, path, offset=offset, limit=limit, depth=depth, asked=asked,
                          key_field=key_field)
    except UsageError as exc:
        target.index.close()
        suggest_key_field(exc, asked)
        raise
    except BaseException:
        target.index.close()
        raise


COMMAND = Command(
    "item-schema", "Union of the keys across the items of the array at PATH (nested keys "
    "dotted), with types, presence k/n and null counts; --offset/--limit look at a "
    "window.\n\n"
    "A map of records (an object whose values are objects) is rows too, each with its key "
    "(_key); items[*].spec.containers flattens nested arrays across items (each row with "
    "_parent).\n\n"
    "On a CSV/TSV entry PATH . is its rows.\n\n"
    "Example: scratch item-schema 1a2b items",
    item_schema,
    tools=(Tool("item_schema", "The keys of the items of the array at path, with types and "
                "presence.",
                names={"ref": "file", "depth": "max_depth"},
                helps={"path": ROWS_PATH_HELP}, toolset="explore"),),
    aliases=("item_schema",))
