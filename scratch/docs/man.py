"""Man pages in roff (man(7) macros) generated from the command tree.

One page per visible command: ``scratch.1`` for the root, ``scratch-<path>.1`` for the others
(``scratch-log-append.1``). Each page has NAME, SYNOPSIS, DESCRIPTION, OPTIONS, EXIT STATUS,
ENVIRONMENT, FILES, EXAMPLES and SEE ALSO.

Reference prose that no command's help holds comes from ``scratch/docs/manual/<page>.txt``
(shipped with the package), written in the small markup :func:`manual` reads (described there
and in ``scratch/docs/manual/README``). Its sections go after OPTIONS, in the file's order; a
section named like a generated one (DESCRIPTION, EXIT STATUS, ENVIRONMENT, FILES, EXAMPLES)
is added at the end of that section instead. A page without a manual file is what the command
tree alone gives.

Invariants:
- Output depends only on the command tree, ``scratch.errors.EXIT_CODE_HELP``, the config
  settings table, the store layout in the docstring of ``scratch.store`` and the package version:
  no dates, no paths of this machine, sorted wherever order is not given by the source.
- Pages are pure ASCII: every ``-`` is written ``\\-`` (so options copy-paste as typed), every
  backslash ``\\e``, every non-ASCII character ``\\[uXXXX]``, and a text line never starts with
  ``.`` or ``'``. ``groff -man -ww`` renders them without warnings (a test checks).
"""

from __future__ import annotations

import re
from importlib import resources

from scratch import __distribution__
from scratch.docs.tree import CommandDoc, ParamDoc

MANUAL = "scratch manual"
_UPPER = re.compile(r"[A-Z][A-Z0-9_]*")

# What each variable does; kept here because no code declares them in one place.
ENVIRONMENT: list[tuple[str, str]] = [
    ("SCRATCH_HOME", ("The store directory when --store is not given (see FILES for the order "
                      "in which the store is found).")),
    ("SCRATCH_AGENT", "The agent namespace when --agent is not given; default 'default'."),
    ("SCRATCH_SESSION", "The budget session when --session is not given; default 'default'."),
    ("SCRATCH_RUN", "The run the agent works in when --run is not given (see RUNS AND "
                    "ARTIFACTS in scratch(1))."),
    ("SCRATCH_ITERATION", "The run's iteration when --iteration is not given; default the "
                          "run's latest."),
    ("SCRATCH_MODEL", ("The model whose tokenizer prices every answer (config key 'model') "
                       "when --model is not given.")),
    ("SCRATCH_DEBUG", ("Set to 1 to let unexpected errors end with a Python traceback instead "
                       "of an internal_error message.")),
    ("SCRATCH_<SECTION>_<KEY>", ("Overrides the scalar setting <section>.<key> of "
                                 "scratch.toml, e.g. SCRATCH_BUDGET_SAFETY_MARGIN=0.1; tables "
                                 "(thresholds, budget.windows) come only from the file. "
                                 "'scratch config' shows every effective value and where it "
                                 "came from.")),
    ("NO_COLOR", ("When set and not empty, output has no colour or rich formatting, even on a "
                  "terminal.")),
    ("XDG_DATA_HOME", ("The last place the store is looked for: $XDG_DATA_HOME/scratch "
                       "(~/.local/share/scratch when unset).")),
    ("XDG_CACHE_HOME", ("Where the compact tokenizer tables are cached: "
                        "$XDG_CACHE_HOME/scratch/tokens (~/.cache/scratch/tokens when unset); "
                        "safe to delete.")),
]

STORE_ORDER = ("The store is the directory given by --store, else $SCRATCH_HOME, else the "
               "nearest .scratch/ directory in the current directory or above it (created by "
               "'scratch init'), else $XDG_DATA_HOME/scratch. It is a git repository: every "
               "change is one commit, and 'scratch git ARGS' runs git on it. Its layout:")


def _esc_chars(text: str) -> str:
    out = []
    for ch in text.replace("\\", "\\e").replace("-", "\\-"):
        out.append(ch if ord(ch) < 128 else f"\\[u{ord(ch):04X}]")
    return "".join(out)


# What a page shows for a character a device has no glyph for (man under LANG=C renders with
# -Tascii): groff warns and drops it otherwise.
ASCII_FALLBACK = {"\u00ab": "<<", "\u00bb": ">>", "\u00b7": ".", "\u240d": "<CR>",
                  "\u2014": "--", "\u2013": "-", "\u2026": "...", "\u2192": "->",
                  "\u2190": "<-", "\u00d7": "x", "\u2264": "<=", "\u2265": ">=",
                  "\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"',
                  "\u2248": "~", "\u2022": "*", "\u00a0": " "}


def with_fallbacks(source: str) -> str:
    """``source`` (a page) with a ``.char`` fallback, after its ``.TH`` line, for each
    non-ASCII character it uses, defined only where the device lacks the glyph."""
    used = sorted({int(m, 16) for m in re.findall(r"\\\[u([0-9A-F]{4,5})\]", source)})
    if not used:
        return source
    defs = []
    for code in used:
        ch = chr(code)
        plain = ASCII_FALLBACK.get(ch)
        if plain is None:
            import unicodedata
            plain = unicodedata.normalize("NFKD", ch).encode("ascii", "ignore").decode() or "?"
        defs.append(f".if !c\\[u{code:04X}] .char \\[u{code:04X}] {_esc_chars(plain)}")
    head, th, rest = source.partition("\n.TH ")
    line, nl, body = rest.partition("\n")
    return head + th + line + nl + "\n".join(defs) + "\n" + body


def _guard(lines: str) -> str:
    """``\\&`` before a line that would start with a control character (``.`` or ``'``)."""
    return "\n".join("\\&" + line if line[:1] in (".", "'") else line
                     for line in lines.split("\n"))


def esc(text: str) -> str:
    """Escape running text for roff (see the module docstring)."""
    return _guard(_esc_chars(text))


def _italic_words(text: str) -> str:
    """Metavars in italics: NAME@N -> \\fINAME\\fR@\\fIN\\fR."""
    parts = []
    last = 0
    for m in _UPPER.finditer(text):
        parts.append(esc(text[last:m.start()]))
        parts.append(f"\\fI{esc(m.group())}\\fR")
        last = m.end()
    parts.append(esc(text[last:]))
    return "".join(parts)


def _para(text: str) -> list[str]:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return [".PP"] + [esc(line) for line in lines]


def synopsis(doc: CommandDoc) -> list[str]:
    pieces: list[str] = []
    if any(p.kind == "option" for p in doc.params):
        pieces.append("[\\fIOPTIONS\\fR]")
    for p in doc.params:
        if p.kind == "argument":
            mv = p.metavar
            if not p.required and not mv.startswith("["):
                mv = f"[{mv}]"
            pieces.append(_italic_words(mv))
    if doc.is_group and doc.runs_alone:
        pieces.append("[\\fICOMMAND\\fR [\\fIARGS\\fR]...]")
    elif doc.is_group:
        pieces.append("\\fICOMMAND\\fR [\\fIARGS\\fR]...")
    elif doc.takes_extra_args:
        pieces.append("[\\fIARGS\\fR]...")
    return [".SH SYNOPSIS", f".B {esc(doc.name)}", " ".join(pieces)] if pieces else \
        [".SH SYNOPSIS", f".B {esc(doc.name)}"]


def _param_item(p: ParamDoc) -> list[str]:
    if p.kind == "argument":
        tag = _italic_words(p.metavar)
    else:
        tag = ", ".join(f"\\fB{esc(o)}\\fR" for o in p.opts)
        if p.metavar:
            tag += " " + _italic_words(p.metavar)
    body = esc(p.help) if p.help else ""
    if p.default is not None and p.default != "":
        body += f" [default: {esc(p.default)}]"
    return [".TP", tag, body.strip() or "\\&"]


def options(doc: CommandDoc) -> list[str]:
    args = [p for p in doc.params if p.kind == "argument" and not p.hidden]
    own = [p for p in doc.params if p.kind == "option" and not p.common and not p.hidden]
    common = [p for p in doc.params if p.kind == "option" and p.common and not p.hidden]
    if not (args or own or common):
        if doc.takes_extra_args:
            return [".SH OPTIONS", ".PP",
                    "None: every argument after the command is passed on as it is."]
        return [".SH OPTIONS", ".PP", "None."]
    out = [".SH OPTIONS"]
    for p in args + own:
        out += _param_item(p)
    if common:
        out += [".SS Common options", ".PP",
                "Accepted by most commands, before or after the command name."]
        for p in common:
            out += _param_item(p)
    return out


def exit_status() -> list[str]:
    from scratch.errors import EXIT_CODE_HELP
    out = [".SH EXIT STATUS"]
    for code, text in EXIT_CODE_HELP.items():
        out += [".TP", f".B {int(code)}", esc(text[:1].upper() + text[1:]) + "."]
    out += [".PP", "Errors carry a stable code (e.g. " + esc("entry_not_found, head_too_large, "
            "budget_exceeded") + "); with \\fB\\-\\-json\\fR it is in error.code."]
    return out


def environment(full: bool) -> list[str]:
    out = [".SH ENVIRONMENT"]
    for name, text in ENVIRONMENT:
        out += [".TP", f".B {esc(name)}", esc(text)]
        if name == "SCRATCH_<SECTION>_<KEY>" and full:
            out += _settings()
        elif name == "SCRATCH_<SECTION>_<KEY>":
            out += [".IP", "The variables and their defaults are listed in \\fBscratch\\fR(1)."]
    return out


def _settings() -> list[str]:
    from scratch.store.config import SETTINGS, env_name
    out = [".RS"]
    for key in sorted(SETTINGS):
        s = SETTINGS[key]
        if s.type is dict:
            continue
        default = f" Default: {s.default!r}." if s.default not in ("",) else ""
        out += [".TP", f".B {esc(env_name(key))}",
                esc(f"{key}: {s.help}.{default}")]
    return out + [".RE"]


def store_layout() -> list[tuple[str, str]]:
    """(path, what it is) pairs from the layout block of ``scratch.store``'s docstring."""
    import scratch.store

    doc = scratch.store.__doc__ or ""
    block = doc.split("::", 1)[1] if "::" in doc else ""
    pairs: list[tuple[str, str]] = []
    for line in block.splitlines():
        if not line.strip():
            if pairs:
                break
            continue
        if not line.startswith(" "):
            break
        path, _, what = line.strip().partition("  ")
        pairs.append((path.strip(), what.strip()))
    return pairs


def files() -> list[str]:
    out = [".SH FILES", ".PP", esc(STORE_ORDER)]
    for path, what in store_layout():
        out += [".TP", f".I {esc(path)}", esc(what[:1].upper() + what[1:]) + "."]
    out += [".TP", ".I $XDG_CACHE_HOME/scratch/tokens",
            "Cached tokenizer tables (rebuilt when missing)."]
    return out


def examples(lines: list[str]) -> list[str]:
    if not lines:
        return []
    out = [".SH EXAMPLES", ".PP", ".RS 4", ".nf"]
    out += [esc(line) for line in lines]
    return out + [".fi", ".RE"]


def see_also(pages: list[str]) -> list[str]:
    refs = [f".BR {esc(p)} (1)" for p in pages]
    refs = [r + "," for r in refs[:-1]] + refs[-1:]
    return [".SH SEE ALSO"] + refs


# -- reference prose from scratch/docs/manual/<page>.txt -----------------------------------------

MANUAL_DIR = "manual"  # beside this module: scratch/docs/manual/
# generated sections a manual section may add to; the others it may not name
APPENDABLE = ("DESCRIPTION", "EXIT STATUS", "ENVIRONMENT", "FILES", "EXAMPLES")
GENERATED = ("NAME", "SYNOPSIS", "OPTIONS", "SEE ALSO") + APPENDABLE
_INLINE = re.compile(r"`([^`]+)`|\*\*(.+?)\*\*|\b([a-z][a-z0-9.-]*[a-z0-9])\(([1-9])\)")
_SEPARATOR = re.compile(r"\s*:?-+:?\s*")


def manual_text(page_name: str) -> str | None:
    """The manual file of ``page_name`` (``scratch-sync``), or None when it has none."""
    path = resources.files("scratch.docs").joinpath(MANUAL_DIR, f"{page_name}.txt")
    return path.read_text(encoding="utf-8") if path.is_file() else None


def inline(text: str) -> str:
    """Running text with its inline markup: ```code``` and ``**bold**`` bold, ``name(1)``
    cross references with the name bold; everything else escaped."""
    return _guard(_inline(text))


def _inline(text: str) -> str:
    parts = []
    last = 0
    for m in _INLINE.finditer(text):
        parts.append(_esc_chars(text[last:m.start()]))
        code, bold, ref, section = m.groups()
        if ref:
            parts.append(f"\\fB{_esc_chars(ref)}\\fR({section})")
        else:
            parts.append(f"\\fB{_esc_chars(code or bold)}\\fR")
        last = m.end()
    parts.append(_esc_chars(text[last:]))
    return "".join(parts)


def _cells(row: str) -> list[str]:
    body = row.strip()
    body = body[1:] if body.startswith("|") else body
    body = body[:-1] if body.endswith("|") and not body.endswith("\\|") else body
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", body)]


def _visible(cell: str) -> str:
    return _INLINE.sub(lambda m: m.group(1) or m.group(2) or f"{m.group(3)}({m.group(4)})",
                       cell)


def _table(rows: list[str]) -> list[str]:
    """Markdown-style rows as aligned preformatted text; a ``---`` row becomes a rule and a
    ``---:`` cell right-aligns its column."""
    table = [_cells(r) for r in rows]
    width = max(len(r) for r in table)
    table = [r + [""] * (width - len(r)) for r in table]
    rules = [i for i, r in enumerate(table) if all(_SEPARATOR.fullmatch(c) for c in r if c)]
    right = [False] * width
    for i in rules[:1]:
        right = [c.endswith(":") for c in table[i]]
    sizes = [max((len(_visible(r[k])) for i, r in enumerate(table) if i not in rules),
                 default=0) for k in range(width)]
    out = []
    for i, r in enumerate(table):
        if i in rules:
            out.append(_esc_chars("  ".join("-" * n for n in sizes)))
            continue
        cells = []
        for k, cell in enumerate(r):
            pad = " " * (sizes[k] - len(_visible(cell)))
            shown = _inline(cell)
            cells.append(pad + shown if right[k] else shown + pad)
        out.append(_guard("  ".join(cells).rstrip()))
    return out


def _preformatted(lines: list[str]) -> list[str]:
    return [_guard(_esc_chars(line)) if line else "" for line in lines]


def manual(text: str) -> list[tuple[str, list[str]]]:
    r"""``(section name, roff lines)`` for each section of a manual file, in order.

    The markup, line by line (blocks are separated by blank lines):

    - ``## NAME`` starts a section (``.SH``; names are upper case, as man pages spell them);
      ``### Name`` a subsection (``.SS``). Text before the first ``##`` is an error.
    - Lines of plain text form a paragraph (``.PP``); lines are kept as written.
    - ``- text`` starts a bullet item (``.IP \(bu 2``); the lines after it, indented or not,
      continue it up to a blank line, the next item or another block.
    - ``+ TERM`` starts a tagged item (``.TP``: TERM on its own line, bold unless it has
      inline markup of its own), its body on the following lines.
    - A block of lines indented 4 spaces or more, after a blank line or a heading, is
      preformatted (``.nf``/``.fi``), shown as written; blank lines inside it are kept. After
      an item it stays at the item's indent (and so does a table).
    - Lines starting with ``|`` form a table (``| a | b |``), rendered as aligned preformatted
      text: a ``| --- | ---: |`` row becomes a rule, ``---:`` right-aligns that column, and
      ``\|`` is a ``|`` inside a cell.
    - In running text, items and table cells: ```code``` and ``**text**`` are bold, and
      ``scratch-sync(1)`` is a cross reference (the name in bold).

    Everything is escaped for roff: ``\`` is ``\e``, ``-`` is ``\-``, a line starting with
    ``.`` or ``'`` gets ``\&``, non-ASCII characters become ``\[uXXXX]``.
    """
    sections: list[tuple[str, list[str]]] = []
    kind = ""  # the open block: "para", "item", "pre", "table" or ""
    block: list[str] = []
    blanks = 0  # blank lines seen inside a preformatted block
    last = ""  # the kind of the block before, "" at the top of a (sub)section

    def flush() -> None:
        nonlocal kind, block, last
        if not kind:
            return
        if not sections:
            raise ValueError("manual text before the first '## SECTION' line")
        body = sections[-1][1]
        if kind == "para":
            body += [".PP"] + [inline(line) for line in block]
        elif kind == "item":
            body += [".IP \\(bu 2"] + [inline(line) for line in block]
        elif kind == "tag":
            term = block[0] if _INLINE.search(block[0]) else f"**{block[0]}**"
            body += [".TP", inline(term)] + [inline(line) for line in block[1:]]
        else:
            shown = _preformatted(block) if kind == "pre" else _table(block)
            if last in ("item", "tag"):  # in a list: at the item's indent
                body += [".IP", ".nf"] + shown + [".fi"]
            else:
                body += [".PP", ".RS 4", ".nf"] + shown + [".fi", ".RE"]
        last = "item" if kind in ("pre", "table") and last in ("item", "tag") else kind
        kind, block = "", []

    for raw in text.splitlines():
        line = raw.rstrip()
        if not line:
            if kind == "pre":
                blanks += 1
            else:
                flush()
            continue
        if kind == "pre" and line.startswith("    "):
            block += [""] * blanks + [line[4:]]
            blanks = 0
            continue
        blanks = 0
        if kind == "pre":
            flush()
        if line.startswith(("## ", "### ")):
            flush()
            level, _, name = line.partition(" ")
            name = name.strip()
            if level == "##":
                if name != name.upper():
                    raise ValueError(f"section names are upper case: {name!r}")
                if name in GENERATED and name not in APPENDABLE:
                    raise ValueError(f"section {name} is generated and cannot be added to")
                sections.append((name, []))
                last = ""
            elif not sections:
                raise ValueError("manual text before the first '## SECTION' line")
            else:
                sections[-1][1].append(f".SS {esc(name)}")
                last = ""
        elif line.startswith("    ") and not kind:
            kind, block = "pre", [line[4:]]
        elif line.startswith("|"):
            if kind != "table":
                flush()
                kind = "table"
            block.append(line)
        elif line.startswith(("- ", "+ ")):
            flush()
            kind, block = ("item" if line[0] == "-" else "tag"), [line[2:].strip()]
        elif kind in ("para", "item", "tag"):
            block.append(line.strip())
        else:
            flush()
            kind, block = "para", [line.strip()]
    flush()
    return sections



def _command_list(docs: list[CommandDoc]) -> list[str]:
    out: list[str] = []
    for d in docs:
        out += [".TP", f"\\fB{esc(d.name)}\\fR", esc(d.summary) + f" See \\fB{esc(d.page)}\\fR(1)."]
    return out


def page(doc: CommandDoc, all_docs: list[CommandDoc], version: str) -> str:
    """The roff source of ``doc``'s page."""
    text = manual_text(doc.page)
    extra = dict(manual(text)) if text is not None else {}
    title = esc(doc.page.upper())
    out = [
        '.\\" Generated by "python -m scratch.docs" from the scratch command tree. Do not edit.',
        f'.TH {title} 1 "" "{esc(__distribution__)} {esc(version)}" "{MANUAL}"',
        ".nh",  # no hyphenation: names and codes must copy-paste as they are
        ".ad l",
        ".SH NAME",
        f"{esc(doc.page)} \\- {esc(doc.summary)}",
    ]
    out += synopsis(doc)
    out.append(".SH DESCRIPTION")
    out += _para(doc.summary)
    for para in doc.description:
        out += _para(para)
    if doc.aliases:
        names = ", ".join(f"\\fB{esc(a)}\\fR" for a in doc.aliases)
        out += [".PP", f"Also accepted under the name {names}."]
    out += extra.pop("DESCRIPTION", [])
    children = [d for d in all_docs if d.path[:len(doc.path)] == doc.path
                and len(d.path) > len(doc.path)]
    if children:
        out += [".SS Commands"] + _command_list(children)
    out += options(doc)
    for name, lines in extra.items():
        if name not in APPENDABLE:
            out += [f".SH {esc(name)}"] + lines
    out += exit_status() + extra.get("EXIT STATUS", [])
    out += environment(full=not doc.path) + extra.get("ENVIRONMENT", [])
    out += files() + extra.get("FILES", [])
    if doc.path:
        example_lines = examples(list(doc.examples))
    else:
        example_lines = examples([e for d in all_docs for e in d.examples])
    if extra.get("EXAMPLES"):
        example_lines = (example_lines or [".SH EXAMPLES"]) + extra["EXAMPLES"]
    out += example_lines
    if doc.path:
        related = ["scratch"] + ["-".join(("scratch",) + doc.path[:i])
                                 for i in range(1, len(doc.path))]
        related += [d.page for d in children]
    else:
        related = [d.page for d in all_docs if d.path] + list(TOPICS) + ["git"]
    out += see_also(related)
    return with_fallbacks("\n".join(out) + "\n")


# Pages of no command: a topic's page is its manual file's sections (page name -> summary)
TOPICS = {"scratch-api": "the Python API for agent runtimes (from scratch import Scratchpad)"}


def topic_page(name: str, summary: str, version: str) -> str:
    """The roff source of topic page ``name``: its manual file, under a NAME section."""
    text = manual_text(name)
    if text is None:
        raise ValueError(f"topic page {name} has no manual file")
    out = [
        '.\\" Generated by "python -m scratch.docs" from scratch/docs/manual. Do not edit.',
        f'.TH {esc(name.upper())} 1 "" "{esc(__distribution__)} {esc(version)}" "{MANUAL}"',
        ".nh", ".ad l", ".SH NAME", f"{esc(name)} \\- {esc(summary)}",
    ]
    for section, lines in manual(text):
        out += [f".SH {esc(section)}"] + lines
    out += see_also(["scratch"])
    return with_fallbacks("\n".join(out) + "\n")


def pages(docs: list[CommandDoc], version: str) -> dict[str, str]:
    """File name (``scratch-log-append.1``) -> page source, for every visible command and
    every topic."""
    out = {f"{d.page}.1": page(d, docs, version) for d in docs if not d.hidden}
    for name, summary in TOPICS.items():
        out[f"{name}.1"] = topic_page(name, summary, version)
    return out
