"""The MCP tools, declared once: what ``tools/list`` shows, how arguments are checked, and how a
core call (a suggestion, a ``next``) is spelled as a tool call.

Each :class:`ToolSpec` names the core command it runs (the CLI's spelling, as in the core
contract) and maps every MCP argument to a core argument. Invariants:

- Every input schema is ``{"type": "object", ..., "additionalProperties": false}``; an argument
  is checked against its own schema by :func:`to_core_args` before anything runs, and the
  core gets every argument explicitly (the MCP default where one was left out), so a tool's
  documented default is the one that applies even where the core's differs (``grep``'s
  ``context`` is 3 here, as agents know it from Aura's scratchpad, and 0 in the CLI).
- :func:`to_tool_call` is the inverse: core arguments -> the tool that spells the command
  (its ``primary`` tool, or the one whose ``fixed`` arguments match) with MCP argument names,
  leaving out what equals the tool's default and spelling out a core default the tool's
  default differs from. A call round-trips: ``to_core_args(tool, to_tool_call(c, a))``
  gives ``a`` back, defaults filled in.
- Names follow Mezmo Aura's scratchpad for exploration (``file``, ``lines``, ``max_depth``,
  comma-separated ``fields``) and scratchpad-mcp for files and logs (``path``, ``entry``).
- Every argument a core command takes has a parameter in one of its tools, except what the
  session decides or a file on disk (tests/test_mcp_specs.py lists them): a suggestion or
  ``next`` that sets it is always a tool call. A list of names in the core (``fields``,
  ``count_by``, ``sql``'s tables) is one comma-separated string here, like Aura's ``fields``.

Nothing here imports the MCP SDK: the table also serves tests and documentation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Final, NamedTuple, cast

from scratch.declare import TOOLSETS, Arg, Tool, params
from scratch.declare import Param as DeclaredParam
from scratch.errors import UsageError
from scratch.mcp.wire import JSON, JSONObject

if TYPE_CHECKING:
    from scratch.calls import ArgValue

# core arguments by name, as a Call holds them
CoreArgs = dict[str, "ArgValue"]


class _Missing:
    """The type of :data:`MISSING`: no default (None is a default)."""

    __slots__ = ()


MISSING: Final = _Missing()


class ArgumentError(UsageError):
    """A tool call whose arguments do not match the tool's input schema."""

    code = "invalid_arguments"


class Param(NamedTuple):
    """One MCP argument: its name, the core argument it feeds, its JSON Schema.

    ``default``: what applies when the argument is left out (MISSING: nothing is passed).
    ``core_default``: the core's own default where it differs (used by :func:`to_tool_call`).
    ``default_unless``: core arguments that, when set, leave ``default`` out (grep's context
    of 3 is for showing matches; a count has no lines to show around, so none is passed).
    ``to_core`` / ``from_core``: value conversions between the two spellings.
    """

    name: str
    core: str
    schema: JSONObject  # a JSON Schema, sent as it is in tools/list
    required: bool = False
    default: ArgValue | _Missing = MISSING
    core_default: ArgValue | _Missing = MISSING
    to_core: Callable[[str], ArgValue] | None = None  # from a string argument
    from_core: Callable[[ArgValue], str] | None = None  # to a string argument
    default_unless: tuple[str, ...] = ()

    def default_applies(self, core: Mapping[str, ArgValue]) -> bool:
        return self.default is not MISSING and not any(
            core.get(k) not in (None, False) for k in self.default_unless)


class ToolSpec(NamedTuple):
    name: str
    command: str
    description: str
    params: tuple[Param, ...]
    read_only: bool = True
    destructive: bool = False
    idempotent: bool = False
    primary: bool = True  # the tool that spells ``command`` in suggestions
    fixed: CoreArgs = {}  # core arguments this tool always passes (grep_all: all=True)

    def annotations(self) -> JSONObject:
        """Wire-form annotations: readOnlyHint on every reader, destructiveHint on deletes,
        idempotentHint where calling twice leaves things as calling once (only meaningful,
        and so only given, for tools that change something). No title: the name says as much,
        and tools/list costs every conversation each token of it."""
        out: JSONObject = {"readOnlyHint": self.read_only, "openWorldHint": False}
        if not self.read_only:
            out["destructiveHint"] = self.destructive
            out["idempotentHint"] = self.idempotent
        return out

    def input_schema(self) -> JSONObject:
        """The schema tools/list shows: each argument's without the limits only the server
        checks (:data:`CHECKED_ONLY`)."""
        props: JSONObject = {}
        for p in self.params:
            schema = {k: v for k, v in p.schema.items() if k not in CHECKED_ONLY}
            # a flag left out is off: "default": false would say nothing a model needs, on
            # every flag of every tool in every conversation
            if p.default is not MISSING and p.default is not None and p.default is not False:
                schema["default"] = p.default
            props[p.name] = schema
        out: JSONObject = {"type": "object", "properties": props,
                               "additionalProperties": False}
        required = [p.name for p in self.params if p.required]
        if required:
            out["required"] = required
        return out


# Keywords of an argument's schema that the server checks (to_core_args) and tools/list leaves
# out: a model never writes a 1,024-character entry name, and every conversation pays each
# token of the list (they were a tenth of the proxy's). A call over one is refused by name.
CHECKED_ONLY = frozenset({"maxLength", "minLength"})


# -- argument schemas, declared once -----------------------------------------------------------

def _str(description: str, max_length: int = 4096, min_length: int = 0) -> JSONObject:
    out: JSONObject = {"type": "string", "description": description, "maxLength": max_length}
    if min_length:
        out["minLength"] = min_length
    return out


def _int(description: str, minimum: int | None = 0) -> JSONObject:
    out: JSONObject = {"type": "integer", "description": description}
    if minimum is not None:
        out["minimum"] = minimum
    return out


def _bool(description: str) -> JSONObject:
    return {"type": "boolean", "description": description}


REF_TEXT = "Entry: NAME, NAME@VERSION or a prefix of its hash."
FIT_TEXT = "Return what fits the cap, plus 'next' to continue."

FILE = Param("file", "ref", _str(REF_TEXT, 1024, 1), required=True)
PATH_REF = Param("path", "ref", _str(REF_TEXT, 1024, 1), required=True)
NUMBERS = Param("numbers", "numbers", _bool("Prefix lines with 'N:'."),
                default=True)
FIT = Param("fit", "fit", _bool(FIT_TEXT), default=False)


def _utf8(value: str) -> bytes:
    """A JSON string as UTF-8 bytes; a lone surrogate (valid JSON, not Unicode text) is refused
    by name rather than stored changed."""
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ArgumentError(f"the text has a lone surrogate (U+{ord(value[exc.start]):04X}) at "
                            f"character {exc.start:,}: it is not Unicode text",
                            position=exc.start) from None


def _fields_to_core(value: str) -> list[str]:
    return [f.strip() for f in value.split(",") if f.strip()]


def _fields_from_core(value: ArgValue) -> str:
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


# a tool's conversions when its arguments are not one-to-one with the core's (Tool.reshape)
Shape = tuple[Callable[[CoreArgs], CoreArgs], Callable[[CoreArgs], CoreArgs]]


def _schema(p: DeclaredParam, help_text: str) -> JSONObject:
    a = p.arg
    if p.kind in ("str", "names"):
        out = _str(help_text, a.max_length, 1 if (p.required or p.kind == "names") else 0)
        if a.choices:
            out["enum"] = list(a.choices)
        return out
    if p.kind == "int":
        out = _int(help_text, a.minimum)
        if a.maximum is not None:
            out["maximum"] = a.maximum
        return out
    if p.kind == "bool":
        return _bool(help_text)
    out = {"type": "string", "description": help_text}  # bytes: UTF-8 text
    if a.max_length != Arg._field_defaults["max_length"]:  # no limit unless one is declared
        out["maxLength"] = a.max_length
    return out


def _declared_param(tool: Tool, p: DeclaredParam) -> Param:
    """One MCP argument of ``tool``, from the core argument ``p`` it feeds."""
    declared = cast("ArgValue", p.default)  # the signature's default: a value of its kind
    default: ArgValue | _Missing = MISSING if p.required or declared is None else declared
    core_default: ArgValue | _Missing = MISSING
    if p.name in tool.defaults:
        default, core_default = tool.defaults[p.name], (MISSING if declared is None
                                                         else declared)
    to_core: Callable[[str], ArgValue] | None = None
    from_core: Callable[[ArgValue], str] | None = None
    if p.kind == "names":
        to_core, from_core = _fields_to_core, _fields_from_core
    elif p.kind == "bytes":
        to_core = _utf8
    required = p.required or p.name in tool.required
    schema = _schema(p._replace(required=required), tool.helps.get(p.name, p.arg.help))
    return Param(tool.names.get(p.name, p.name), p.name, schema, required=required,
                 default=default, core_default=core_default,
                 default_unless=tuple(tool.default_unless.get(p.name, ())),
                 to_core=to_core, from_core=from_core)


class Declared:
    """Every tool the command declarations declare, read from them once (on first use):
    the tools in toolset order, by name, each one's toolset (None: it joins none, and is
    offered only by ``all`` or by name) and its reshaping."""

    def __init__(self) -> None:
        from scratch.answers.kernel.catalogue import every_command

        out: list[tuple[int, ToolSpec]] = []
        self.toolset: dict[str, str | None] = {}
        self.shape: dict[str, Shape] = {}
        for cmd in every_command():
            declared = {p.name: p for p in params(cmd) if p.arg.mcp}
            for tool in cmd.tools:
                own = {**declared, **{p.name: p for p in tool.own}}
                names = tool.args if tool.args is not None else tuple(
                    n for n in own if n not in tool.fixed)
                spec = ToolSpec(tool.name, cmd.name, tool.description,
                                tuple(_declared_param(tool, own[n]) for n in names),
                                read_only=tool.read_only, destructive=tool.destructive,
                                idempotent=tool.idempotent, primary=tool.primary,
                                fixed=dict(tool.fixed))
                rank = TOOLSETS.index(tool.toolset) if tool.toolset else len(TOOLSETS)
                out.append((rank, spec))
                self.toolset[tool.name] = tool.toolset
                if tool.reshape is not None:
                    self.shape[tool.name] = tool.reshape
        self.tools = tuple(spec for _, spec in sorted(out, key=lambda o: o[0]))
        self.by_name = {t.name: t for t in self.tools}


_DECLARED: list[Declared] = []  # the one Declared of this process, once built


def declared() -> Declared:
    """The declared tools (built from the command declarations on first use)."""
    if not _DECLARED:
        _DECLARED.append(Declared())
    return _DECLARED[0]


def tools() -> tuple[ToolSpec, ...]:
    """Every tool, in toolset order (a tool of no toolset last)."""
    return declared().tools


def by_name() -> dict[str, ToolSpec]:
    return declared().by_name


if TYPE_CHECKING:  # module attributes built when first read (__getattr__)
    TOOLS: tuple[ToolSpec, ...]
    BY_NAME: dict[str, ToolSpec]


def __getattr__(name: str) -> object:  # TOOLS and BY_NAME, built when first read
    if name == "TOOLS":
        return tools()
    if name == "BY_NAME":
        return by_name()
    raise AttributeError(name)


# -- the tools a server offers -----------------------------------------------------------------

# What ``--tools`` takes: a toolset of the declarations (Tool.toolset), ``all``, or ``proxy``:
# the few tools that explore a stored output, which ``scratch mcp proxy`` offers beside its
# upstreams' by default (each tool costs every conversation its share of tools/list).
CHOICES = ("explore", "files", "run", "all", "proxy")
PROXY_TOOLS = ("head", "slice", "grep", "schema", "get_in", "iterate_over")
# what scratch's own tool is offered as when an upstream of the proxy has the name
RENAMED_PREFIX = "scratch_"


def toolset(choice: str) -> tuple[ToolSpec, ...]:
    """The tools of one ``--tools`` choice, in tools/list order; choices joined by commas
    (``explore,run``) offer the tools of each."""
    if "," in choice:
        wanted = {t.name for part in choice.split(",") for t in toolset(part.strip())}
        return tuple(t for t in tools() if t.name in wanted)
    if choice == "all":
        return tools()
    if choice == "proxy":
        return tuple(t for t in tools() if t.name in PROXY_TOOLS)
    if choice not in TOOLSETS:
        raise UsageError(f"no toolset {choice!r}; one of {', '.join(CHOICES)}",
                         code="invalid_argument", argument="tools", choices=list(CHOICES))
    return tuple(t for t in tools() if declared().toolset[t.name] == choice)


class Serving:
    """What this process serves (one process serves one server, ``mcp serve`` or ``mcp
    proxy``, which sets it once; a test sets its own with :func:`serving`): ``offered``, tool
    name -> the name offered (empty: every tool as named), ``exposed`` the reverse, and the
    proxy's ``upstream`` tools (empty: not a proxy)."""

    def __init__(self, offered: Mapping[str, str] | None = None,
                 upstream: Sequence[UpstreamTool] = ()) -> None:
        self.offered: dict[str, str] = dict(offered or {})
        self.exposed = {v: k for k, v in self.offered.items()}
        self.upstream = list(upstream)


_SERVING: list[Serving] = []  # the one Serving of this process (none set: every tool)


def current() -> Serving:
    """What this process serves now."""
    if not _SERVING:
        _SERVING.append(Serving())
    return _SERVING[0]


def serve(offered: Mapping[str, str] | None) -> None:
    """Offer only these tools (tool name -> the name offered), from now on, in every tools/list,
    pointer, suggestion and ``next`` of this process; None: every tool under its own name."""
    _SERVING[:] = [Serving(offered, current().upstream)]


@contextmanager
def serving(offered: Mapping[str, str] | None = None, upstream: Sequence[UpstreamTool] = ()
            ) -> Iterator[Serving]:
    """Serve ``offered`` (and ``upstream``) inside the block, what was served before after it."""
    before = current()
    _SERVING[:] = [Serving(offered, upstream)]
    try:
        yield _SERVING[0]
    finally:
        _SERVING[:] = [before]


def offer(choice: str, taken: frozenset[str] | set[str] = frozenset()) -> dict[str, str]:
    """The tools of ``choice`` as offered: each under its own name, but a name in ``taken`` (an
    upstream's tool: it always keeps its name) gets :data:`RENAMED_PREFIX`."""
    out = {}
    for t in toolset(choice):
        name = t.name
        while name in taken:
            name = RENAMED_PREFIX + name
        out[t.name] = name
    return out


class UpstreamTool(NamedTuple):
    """A tool of an upstream server of ``scratch mcp proxy``, whose big results are stored."""

    server: str
    name: str  # as the proxy offers it
    read_only: bool  # its readOnlyHint: a reading tool is the likely maker of a big result


def serve_upstream(tools: list[UpstreamTool]) -> None:
    """The upstream tools this process (``scratch mcp proxy``) offers beside its own, from
    now on: what a hint says makes an entry."""
    _SERVING[:] = [Serving(current().offered, tools)]


def upstream_tools() -> list[UpstreamTool]:
    """The proxy's upstream tools, the reading ones first (each kept in listed order)."""
    return sorted(current().upstream, key=lambda t: not t.read_only)


def served() -> list[tuple[str, ToolSpec]]:
    """(the name offered, the tool) of every tool this process serves, in tools/list order."""
    offered = current().offered
    if not offered:
        return [(t.name, t) for t in tools()]
    return [(offered[t.name], t) for t in tools() if t.name in offered]


def offered_name(name: str) -> str | None:
    """The name tool ``name`` is offered as (None: it is not offered)."""
    offered = current().offered
    if not offered:
        return name if name in by_name() else None
    return offered.get(name)


def spec_of(exposed: str) -> ToolSpec | None:
    """The tool offered as ``exposed`` (None: no tool this process offers has the name)."""
    now = current()
    if not now.offered:
        return by_name().get(exposed)
    name = now.exposed.get(exposed)
    return by_name()[name] if name is not None else None


def tool_for(command: str, args: Mapping[str, ArgValue]) -> ToolSpec | None:
    """The offered tool that spells ``command`` with ``args``: the one whose fixed arguments all
    match (most of them first), else the command's primary tool."""
    candidates = [t for t in tools() if t.command == command and offered_name(t.name)
                  and all(args.get(k) == v for k, v in t.fixed.items())]
    if not candidates:
        return None
    candidates.sort(key=lambda t: (-len(t.fixed), not t.primary))
    return candidates[0]


def argument_name(command: str | None, name: str) -> str:
    """How MCP writes core argument ``name`` of ``command`` in a message: the parameter name of
    the command's primary tool that feeds it (``ref`` is ``file``), quoted."""
    for tool in tools():
        if tool.command == command and tool.primary:
            for p in tool.params:
                if p.core == name:
                    return f"'{p.name}'"
    return f"'{name}'"


# -- checking arguments ------------------------------------------------------------------------

def _type_error(tool: str, name: str, want: str, value: JSON) -> ArgumentError:
    got = "null" if value is None else type(value).__name__
    return ArgumentError(f"{tool}: argument {name!r} must be {want}, not {got}",
                         tool=tool, argument=name)


def _check(tool: str, p: Param, value: JSON) -> None:
    kind = p.schema.get("type")
    if kind == "string":
        if not isinstance(value, str):
            raise _type_error(tool, p.name, "a string", value)
        if len(value) > p.schema.get("maxLength", len(value)):
            raise ArgumentError(f"{tool}: argument {p.name!r} is {len(value):,} characters, over "
                                f"its limit of {p.schema['maxLength']:,}", tool=tool,
                                argument=p.name, limit=p.schema["maxLength"])
        if len(value) < p.schema.get("minLength", 0):
            raise ArgumentError(f"{tool}: argument {p.name!r} must not be empty", tool=tool,
                                argument=p.name)
        if "enum" in p.schema and value not in p.schema["enum"]:
            raise ArgumentError(f"{tool}: argument {p.name!r} must be one of "
                                f"{', '.join(p.schema['enum'])}, not {value!r}", tool=tool,
                                argument=p.name, choices=p.schema["enum"])
    elif kind == "integer":
        if isinstance(value, bool) or not isinstance(value, int):
            raise _type_error(tool, p.name, "an integer", value)
        if "minimum" in p.schema and value < p.schema["minimum"]:
            raise ArgumentError(f"{tool}: argument {p.name!r} must be >= {p.schema['minimum']}, "
                                f"not {value}", tool=tool, argument=p.name)
    elif kind == "boolean" and not isinstance(value, bool):
        raise _type_error(tool, p.name, "true or false", value)


def to_core_args(tool: ToolSpec, arguments: JSON) -> CoreArgs:
    """The core arguments of a call to ``tool``, every default filled in; raises
    :class:`ArgumentError` naming the first argument that does not fit the schema."""
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise ArgumentError(f"{tool.name}: arguments must be an object", tool=tool.name)
    known = {p.name: p for p in tool.params}
    unknown = sorted(set(arguments) - set(known))
    if unknown:
        raise ArgumentError(f"{tool.name}: unknown argument {unknown[0]!r}; it takes "
                            f"{', '.join(known) or 'no arguments'}", tool=tool.name,
                            argument=unknown[0], known=list(known))
    out: CoreArgs = dict(tool.fixed)
    left_out = []
    for p in tool.params:
        if p.name in arguments and not (arguments[p.name] is None and not p.required):
            value = arguments[p.name]
            _check(tool.name, p, value)
            out[p.core] = p.to_core(value) if p.to_core else value
        elif p.required:
            raise ArgumentError(f"{tool.name}: missing required argument {p.name!r}",
                                tool=tool.name, argument=p.name)
        else:
            left_out.append(p)
    given = dict(out)  # a default may depend on what else was given (default_unless)
    for p in left_out:
        if not isinstance(p.default, _Missing) and p.default_applies(given):
            out[p.core] = p.default
    shape = declared().shape.get(tool.name)
    return shape[0](out) if shape else out


def not_offered(command: str, args: Mapping[str, ArgValue]) -> bool:
    """Whether a tool spells the call but this process does not offer it (a suggestion of it
    is left out: it would name a tool the client cannot call)."""
    if not current().offered or tool_for(command, args) is not None:
        return False
    return any(t.command == command for t in tools())


# commands whose RUN (the command line's) is the session's over MCP: scratch.mcp.dispatch
# supplies it, and a call of one is spelled without it
RUN_COMMANDS = frozenset({"artifact put", "artifact ls", "artifact read"})


def to_tool_call(command: str, args: CoreArgs) -> JSONObject | None:
    """A core call as an MCP tool call ``{"name", "arguments"}`` under the name the tool is
    offered as (None: no offered tool spells it, or the call sets an argument the tool has no
    parameter for)."""
    tool = tool_for(command, args)
    if tool is None:
        return None
    if command in RUN_COMMANDS:  # the session's run, never a tool argument
        args = {k: v for k, v in args.items() if k != "run"}
    shape = declared().shape.get(tool.name)
    core = shape[1](dict(args)) if shape else args
    if set(core) - {p.core for p in tool.params} - set(tool.fixed):
        return None  # an argument no parameter of the tool carries (write from a file)
    out: JSONObject = {}
    for p in tool.params:
        applies = p.default_applies(core)
        if p.core in core:
            value = p.from_core(core[p.core]) if p.from_core else core[p.core]
            if (not applies or value != p.default) and (value is not None or p.required):
                out[p.name] = value
        elif applies and p.core_default is not MISSING and p.core_default != p.default:
            out[p.name] = p.core_default
    return {"name": offered_name(tool.name) or tool.name, "arguments": out}
