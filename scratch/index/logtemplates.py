"""Line templates of a log in no known line format: mined once when the index is built, read
back as records.

A log that none of :mod:`scratch.formats.logformats` parses is mined with Drain (He et al.,
"Drain: An Online Log Parsing Approach with Fixed Depth Tree", ICWS 2017), through the
``Drain`` class of drain3, its maintained implementation. Each line then is a record::

    {"_line": 12, "timestamp": "2015-02-18 19:33:20",
     "_template": {"id": 3, "text": "install <*> <none> <*>"},
     "p1": "base-passwd:amd64", "p2": "3.5.33"}

``timestamp`` is the line's timestamp text as written (absent when the line has none),
``_template`` the template its line belongs to, ``p1``, ``p2``... the text of the template's
variable parts (each ``<*>``, in order), as written: strings, like the values of any field a
format does not declare a type for. A line that is in no kept template (blank, longer than
:data:`MAX_LINE` characters, or of a rare template beyond :data:`MAX_TEMPLATES`) is
``{"_line": n, "_raw": text}``, as an unparsed line of a known format is.

How a line is mined (steps 1 and 2 run again at read time, on the lines read):

1. the timestamp (the file's timestamp format, :mod:`scratch.formats.logs`, when it matches
   at least half the sampled lines) is cut out of the line; the rest is the *content*;
2. the content's tokens are its whitespace-separated words (``str.split``);
3. for Drain, a token with two runs of ASCII digits or more (a time, ``3.5.33``,
   ``1:2.20.1-5ubuntu1``, ``dn228/dn228``, an address with its port) is masked whole as
   ``<*>``, then the one run of digits of any other token (``uid=1000,``, ``blk_-16``,
   ``dn228``, ``22``) is masked as ``<*>``: Drain then groups lines by their words and the
   shape of their numbers. The masks depend only on where digits are, not on their values;
4. after the pass, a masked token that was the same in every line of its template is shown
   as written again (``HTTP/1.1`` stays ``HTTP/1.1``).

So a template's token is either a word, ``<*>`` (a variable token) or a word with one
``<*>`` inside (``uid=<*>``, ``blk_<*>``): a variable part is the whole token, or the token
less the word's text before and after the ``<*>``. Reading a record finds its timestamp again
and splits its line: no mask, no Drain, no template matching.

Invariants:
- Deterministic: the same bytes give the same templates, ids and records (no hashing of
  Python objects, no clock; drain3's ``Drain`` assigns cluster ids in order of creation; a
  line whose masked content, or digit positions, were seen before joins the template the
  first such line joined, without asking Drain). drain3 is pinned (pyproject.toml); its
  version and the settings are kept in the index (``miner``).
- Template ids count from 1 in the order of each template's first line; templates whose
  text came out the same are one template. The index keeps at most :data:`MAX_TEMPLATES`
  (the most frequent; ids stay those of the first-line order among the kept).
- Bounded: lines longer than :data:`MAX_LINE` are not mined; Drain matches against at most
  :data:`MAX_LIVE` clusters (least recently used ones retire); past :data:`MAX_CLUSTERS`
  clusters the miner stops making new ones (lines that match none stay raw). A log whose
  first lines give more templates than :data:`NO_STRUCTURE` of their number (random text,
  prose) is found to have no template structure after at most :data:`CHECK_EVERY` lines
  more: it stays lines, and ``info["records"]["templates"]`` says why.
- drain3 is imported only here, inside :func:`mine`: only the index build of such a log
  loads it; reading records never does.

What the index keeps: ``info["records"]`` as :mod:`scratch.index.logrecords` describes, with
``format: "templates"``, ``timestamp_format``, ``miner`` and ``templates``
(``[[id, text, lines], ...]`` by id), and the u32 section :data:`SECTION` (each line's
template id, 0 for none).
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol, cast

from scratch.formats.logbase import Record
from scratch.formats.logs import TS_WINDOW, detect_timestamp_format, timestamp_pattern
from scratch.jsonvalues import JSON

FORMAT = "templates"
TITLE = "line templates mined with Drain (a log in no known line format)"
DOC = "https://github.com/logpai/Drain3"
SECTION = "records:templates"
WILD = "<*>"

# Drain's settings: drain3's defaults (depth 4, similarity 0.4, 100 children). Over the
# Loghub samples (tests/bench/template_accuracy.py) a similarity of 0.5 groups a little
# better on average but splits Thunderbird's 2,000 lines into 638 templates (148 here), and
# counting masked tokens as parameters splits more; these keep dpkg.log's states apart.
DEPTH = 4
SIM_TH = 0.4
MAX_CHILDREN = 100
MAX_LIVE = 1000  # clusters Drain matches a line against; older ones retire (LRU)
MAX_CLUSTERS = 20_000  # clusters made at most; then lines that match none stay raw
MAX_TEMPLATES = 2_000  # templates the index keeps (the most frequent)
MAX_LINE = 16_384  # characters: a longer line is not mined (it stays raw)
MEMO_MAX = 200_000  # contents remembered (each way) with their cluster: repeats skip Drain
CHECK_EVERY = 1_000  # mined lines between two checks for no template structure
NO_STRUCTURE = 0.5  # more templates than this share of the mined lines: no structure
TS_MIN_SHARE = 0.5  # a timestamp format is cut only when it matches this share of a sample

_ZEROS = str.maketrans("123456789", "000000000")
_BLANK = 0xFFFFFFFF  # a blank line's id during the pass (0 in what the index keeps)
_DIGITS = re.compile(r"[0-9]+")
# a token with two runs of digits or more, anywhere in it (a time, a host like dn228/dn228,
# 1:2.20.1-5ubuntu1): anchored at the token's start, so each token is tried once
_RUNS = re.compile(r"(?<!\S)[^\s0-9]*[0-9]\S*?[^\s0-9][0-9]\S*")


def mask(content: str) -> str:
    """The content as Drain sees it (step 3 of the module docstring): two regex passes, the
    costliest step of the miner."""
    return _DIGITS.sub(WILD, _RUNS.sub(WILD, content))


def timestamp_format_of(lines: Sequence[str]) -> str | None:
    """The timestamp format cut from each line: the one matching the most of ``lines`` (the
    record lines of a sample), if it matches at least :data:`TS_MIN_SHARE` of them."""
    picked = [ln for ln in lines if ln.strip() and not ln[0].isspace()]
    name, hits = detect_timestamp_format(picked)
    if name is None or hits < len(picked) * TS_MIN_SHARE:
        return None
    return name


def split_timestamp(line: str, pattern: re.Pattern[str] | None) -> tuple[str | None, str]:
    """(the line's timestamp text or None, the line without it)."""
    if pattern is None:
        return None, line
    m = pattern.search(line, 0, TS_WINDOW + 40)
    if m is None or m.start() > TS_WINDOW:
        return None, line
    return m.group(0), line[:m.start()] + " " + line[m.end():]


# ------------------------------------------------------------------------------- templates


@dataclass(frozen=True)
class Template:
    """One kept template: its id, text, tokens and, per variable part, ``(token position,
    text before the <*>, text after it)``."""

    id: int
    text: str
    width: int  # tokens
    slots: tuple[tuple[int, int, int], ...]  # (position, chars before, chars after)

    @classmethod
    def of(cls, tid: int, text: str) -> Template:
        tokens = text.split(" ") if text else []
        slots = []
        for i, tok in enumerate(tokens):
            at = tok.find(WILD)
            if at >= 0:
                slots.append((i, at, len(tok) - at - len(WILD)))
        return cls(tid, text, len(tokens), tuple(slots))

    def parts(self, tokens: Sequence[str]) -> list[str] | None:
        """The variable parts of a line's tokens, or None when they do not fit."""
        if len(tokens) != self.width:
            return None
        out = []
        for i, before, after in self.slots:
            tok = tokens[i]
            out.append(tok[before:len(tok) - after] if len(tok) >= before + after else tok)
        return out


Kept = tuple[int, str, int]  # a kept template: id, text, lines


@dataclass
class Mined:
    """What :func:`mine` found: each line's template id (0: none), the templates kept
    (``(id, text, lines)`` by id), and the counts the index reports."""

    ids: array[int]
    templates: list[Kept]
    lines: int
    blank: int
    unparsed: array[int]  # the non-blank lines in no kept template (1-based): longer than
    # MAX_LINE, in a rare template past MAX_TEMPLATES, or matching none after MAX_CLUSTERS
    clusters: int  # Drain clusters made
    with_timestamp: int  # lines in a kept template with a timestamp
    structure: str | None  # None, or why the log has no template structure
    drained: int = 0  # lines Drain looked at (the others repeat a masked content seen)


class _DrainCluster(Protocol):
    """What the miner reads of a drain3 cluster."""

    cluster_id: int
    log_template_tokens: Sequence[str]


class _Drain(Protocol):
    """The drain3 miner's calls used here."""

    def add_log_message(self, content: str) -> tuple[_DrainCluster, str]: ...

    def match(self, content: str) -> _DrainCluster | None: ...


class _Cluster:
    """What the miner keeps of one Drain cluster beside it: the first line's tokens, the
    masked positions still the same in every line so far, the lines in it."""

    __slots__ = ("cluster", "first", "lines", "same", "stamped")

    def __init__(self, cluster: _DrainCluster, tokens: list[str]) -> None:
        self.cluster = cluster
        self.first = tokens
        self.same = [i for i, t in enumerate(cluster.log_template_tokens) if WILD in t]
        self.lines = 0
        self.stamped = 0  # lines with a timestamp

    def final_tokens(self) -> list[str]:
        tokens = list(self.cluster.log_template_tokens)
        for i in self.same:  # the same in every line: Drain never made it <*>
            tokens[i] = self.first[i]
        # a token with two masks or more (masking leaves none; a line may hold "<*>" itself)
        return [WILD if t.count(WILD) > 1 else t for t in tokens]


def drain_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("drain3")
    except PackageNotFoundError:  # pragma: no cover - drain3 imports but has no metadata
        return "unknown"


def settings() -> dict[str, JSON]:
    """The miner's name, version and settings, as the index keeps them."""
    return {"name": "drain3", "version": drain_version(), "depth": DEPTH, "sim_th": SIM_TH,
            "max_children": MAX_CHILDREN, "max_live": MAX_LIVE, "max_clusters": MAX_CLUSTERS,
            "max_templates": MAX_TEMPLATES, "max_line": MAX_LINE, "masks": "digits"}


def _drain() -> _Drain:
    from drain3.drain import Drain  # here only: its import costs ~0.2 s (jsonpickle)

    drain: _Drain = Drain(depth=DEPTH, sim_th=SIM_TH, max_children=MAX_CHILDREN,
                 max_clusters=MAX_LIVE)
    return drain


def mine(lines: Iterable[str], timestamp_format: str | None, *,
         max_templates: int = MAX_TEMPLATES) -> Mined:
    """Mine the templates of ``lines`` (each without its terminator), one pass."""
    from scratch.formats.jsontext import no_gc

    drain = _drain()
    pattern = timestamp_pattern(timestamp_format) if timestamp_format else None
    ids = array("I")
    kept: dict[int, _Cluster] = {}
    memo: dict[str, _Cluster] = {}  # masked content -> its cluster
    shapes: dict[str, _Cluster] = {}  # content with 0 for every digit -> its cluster
    blank = mined = drained = 0
    frozen = False
    structure: str | None = None
    next_check = CHECK_EVERY
    with no_gc():
        for line in lines:
            if not line or line.isspace():
                ids.append(_BLANK)
                blank += 1
                continue
            if len(line) > MAX_LINE:
                ids.append(0)
                continue
            ts, content = split_timestamp(line, pattern)
            # the masks depend only on where the digits are: a content with its digits made
            # 0 is a key that skips masking (the costliest step) for a shape seen before
            shape = content.translate(_ZEROS)
            c = shapes.get(shape)
            if c is None:
                masked = mask(content)
                c = memo.get(masked)
                if c is None:
                    drained += 1
                    if frozen:  # only a template that covers the line as it is (drain3's)
                        found = drain.match(masked)
                        c = kept.get(found.cluster_id) if found is not None else None
                        if c is None:
                            ids.append(0)
                            continue
                    else:
                        cluster, _ = drain.add_log_message(masked)
                        c = kept.get(cluster.cluster_id)
                        if c is None:
                            c = kept[cluster.cluster_id] = _Cluster(cluster, content.split())
                            if len(kept) >= MAX_CLUSTERS:
                                frozen = True
                    if len(memo) < MEMO_MAX:
                        memo[masked] = c
                if len(shapes) < MEMO_MAX:
                    shapes[shape] = c
            if c.same:
                tokens = content.split()
                first = c.first
                c.same = [i for i in c.same if tokens[i] == first[i]]
            c.lines += 1
            ids.append(c.cluster.cluster_id)
            if ts is not None:
                c.stamped += 1
            mined += 1
            if mined >= next_check:
                next_check += CHECK_EVERY
                if not frozen and len(kept) > mined * NO_STRUCTURE:
                    structure = (f"{len(kept):,} templates in the first {mined:,} lines "
                                 "mined: no template structure")
                    break
    if structure is None and mined and len(kept) > mined * NO_STRUCTURE:
        structure = f"{len(kept):,} templates in {mined:,} lines: no template structure"
    if structure is not None or not mined:
        return Mined(array("I"), [], len(ids), blank, array("I"), len(kept), 0,
                     structure or "no line to mine", drained)
    templates, remap = _number(kept, max_templates)
    remap[0] = 0
    remap[_BLANK] = _BLANK
    ids = array("I", map(remap.__getitem__, ids))
    unparsed = array("I", (k for k, tid in enumerate(ids, 1) if not tid))
    with_ts = sum(c.stamped for cid, c in kept.items() if remap[cid])
    if blank:
        ids = array("I", (0 if tid == _BLANK else tid for tid in ids))
    return Mined(ids, templates, len(ids), blank, unparsed, len(kept), with_ts, None, drained)


def _number(kept: dict[int, _Cluster], max_templates: int
            ) -> tuple[list[Kept], dict[int, int]]:
    """Templates numbered by first line (cluster ids are in creation order, and a cluster is
    made at its first line), equal texts merged, the ``max_templates`` biggest kept:
    ``([(id, text, lines), ...], {cluster id: template id or 0})``."""
    by_text: dict[str, list[int]] = {}  # text -> [first cluster id, lines]
    cids_of: dict[str, list[int]] = {}  # text -> its cluster ids
    for cid in sorted(kept):
        c = kept[cid]
        text = " ".join(c.final_tokens())
        entry = by_text.get(text)
        if entry is None:
            by_text[text] = [cid, c.lines]
            cids_of[text] = [cid]
        else:
            entry[1] += c.lines
            cids_of[text].append(cid)
    groups = sorted(by_text.items(), key=lambda kv: kv[1][0])
    if len(groups) > max_templates:
        biggest = sorted(groups, key=lambda kv: (-kv[1][1], kv[1][0]))[:max_templates]
        keep = {text for text, _ in biggest}
        groups = [g for g in groups if g[0] in keep]
    templates: list[Kept] = []
    remap: dict[int, int] = dict.fromkeys(kept, 0)
    for tid, (text, (_, lines)) in enumerate(groups, 1):
        templates.append((tid, text, lines))
        for cid in cids_of[text]:
            remap[cid] = tid
    return templates, remap


# --------------------------------------------------------------------------------- records


def records(lines: Iterable[str], ids: Sequence[int], templates: dict[int, Template],
            timestamp_format: str | None, *, first_line: int = 1) -> Iterator[Record]:
    """One record per line (see the module docstring): ``ids`` are the lines' template ids
    as the index keeps them, ``templates`` the kept templates by id."""
    pattern = timestamp_pattern(timestamp_format) if timestamp_format else None
    names: list[str] = []
    for n, (line, tid) in enumerate(zip(lines, ids, strict=True), first_line):
        t = templates.get(tid) if tid else None
        if t is None:
            yield {"_line": n, "_raw": line}
            continue
        ts, content = split_timestamp(line, pattern)
        parts = t.parts(content.split())
        if parts is None:  # not the bytes it was mined from: say so rather than guess
            yield {"_line": n, "_raw": line}
            continue
        rec: Record = {"_line": n}
        if ts is not None:
            rec["timestamp"] = ts
        rec["_template"] = {"id": t.id, "text": t.text}
        while len(names) < len(parts):
            names.append(f"p{len(names) + 1}")
        rec.update(zip(names, parts, strict=False))  # names may be longer
        yield rec


def kept_templates(rec: dict[str, JSON]) -> dict[int, Template]:
    """The templates of ``info["records"]`` by id."""
    out: dict[int, Template] = {}
    for entry in cast("list[JSON]", rec.get("templates") or []):
        if isinstance(entry, list) and len(entry) >= 2:
            out[int(entry[0])] = Template.of(int(entry[0]), str(entry[1]))
    return out


def template_value(tid: int, text: str) -> dict[str, JSON]:
    """A record's ``_template`` value."""
    return {"id": tid, "text": text}
