"""Template quality: the grouping accuracy of scratch's line templates on Loghub's samples.

Not collected by pytest (tests/test_logtemplates.py pins its figures). Run::

    python tests/bench/template_accuracy.py [--corpus DIR] [--json]

For each of the 16 Loghub datasets of the corpus (``logs/loghub/NAME_2k.log``, 2,000 lines
each; the corpus is ``--corpus``, else ``$SCRATCH_CORPUS``, else ../shared/corpus) against
Loghub's ground truth (the ``EventId`` column of ``NAME_2k.log_structured.csv`` in the public
Loghub repository, kept in tests/data/loghub_2k_events/, one id a line), it prints the
grouping accuracy (GA, Zhu et al., "Tools and Benchmarks for Automated Log Parsing",
ICSE-SEIP 2019: the share of lines whose template groups exactly the lines their
ground-truth event groups) of:

- ``published``: Drain's figure in that paper (Table III; also logpai/logparser's
  ``logparser/Drain/README.md``), with Loghub's per-dataset settings: a header format that
  cuts each line down to its message, regexes masked first, a similarity and a depth;
- ``drain3+settings``: drain3's ``Drain`` with those same settings (the header, the regexes
  replaced by ``<*>``, the similarity and depth): a check that the data and the metric here
  are the paper's;
- ``scratch content``: scratch's miner (:mod:`scratch.index.logtemplates`: its masks, its
  Drain settings, nothing per dataset) on the same messages (the header cut by Loghub's
  format);
- ``scratch lines``: scratch's miner on the whole lines, as ``scratch ingest`` mines a log
  in no known format (only the timestamp is cut). The ``known`` column names the format
  scratch parses a dataset with instead, when it has one: such a log is never mined.

The per-dataset settings are facts from logpai/logparser's ``logparser/Drain/benchmark.py``
(Apache-2.0), restated here.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
EVENTS = ROOT / "tests" / "data" / "loghub_2k_events"

DATASETS = ("HDFS", "Hadoop", "Spark", "Zookeeper", "BGL", "HPC", "Thunderbird", "Windows",
            "Linux", "Android", "HealthApp", "Apache", "Proxifier", "OpenSSH", "OpenStack",
            "Mac")

# Drain's grouping accuracy as published (Zhu et al. 2019, Table III)
PUBLISHED = {"HDFS": 0.9975, "Hadoop": 0.9475, "Spark": 0.92, "Zookeeper": 0.9665,
             "BGL": 0.9625, "HPC": 0.887, "Thunderbird": 0.955, "Windows": 0.997,
             "Linux": 0.69, "Android": 0.911, "HealthApp": 0.78, "Apache": 1.0,
             "Proxifier": 0.5265, "OpenSSH": 0.7875, "OpenStack": 0.7325, "Mac": 0.7865}

# Loghub's settings for Drain: (header format, regexes masked first, similarity, depth)
SETTINGS: dict[str, tuple[str, tuple[str, ...], float, int]] = {
    "HDFS": ("<Date> <Time> <Pid> <Level> <Component>: <Content>",
             (r"blk_-?\d+", r"(\d+\.){3}\d+(:\d+)?"), 0.5, 4),
    "Hadoop": (r"<Date> <Time> <Level> \[<Process>\] <Component>: <Content>",
               (r"(\d+\.){3}\d+",), 0.5, 4),
    "Spark": ("<Date> <Time> <Level> <Component>: <Content>",
              (r"(\d+\.){3}\d+", r"\b[KGTM]?B\b", r"([\w-]+\.){2,}[\w-]+"), 0.5, 4),
    "Zookeeper": (r"<Date> <Time> - <Level>  \[<Node>:<Component>@<Id>\] - <Content>",
                  (r"(/|)(\d+\.){3}\d+(:\d+)?",), 0.5, 4),
    "BGL": ("<Label> <Timestamp> <Date> <Node> <Time> <NodeRepeat> <Type> <Component> "
            "<Level> <Content>", (r"core\.\d+",), 0.5, 4),
    "HPC": ("<LogId> <Node> <Component> <State> <Time> <Flag> <Content>", (r"=\d+",), 0.5, 4),
    "Thunderbird": (r"<Label> <Timestamp> <Date> <User> <Month> <Day> <Time> <Location> "
                    r"<Component>(\[<PID>\])?: <Content>", (r"(\d+\.){3}\d+",), 0.5, 4),
    "Windows": ("<Date> <Time>, <Level>                  <Component>    <Content>",
                (r"0x.*?\s",), 0.7, 5),
    "Linux": (r"<Month> <Date> <Time> <Level> <Component>(\[<PID>\])?: <Content>",
              (r"(\d+\.){3}\d+", r"\d{2}:\d{2}:\d{2}"), 0.39, 6),
    "Android": ("<Date> <Time>  <Pid>  <Tid> <Level> <Component>: <Content>",
                (r"(/[\w-]+)+", r"([\w-]+\.){2,}[\w-]+",
                 r"\b(\-?\+?\d+)\b|\b0[Xx][a-fA-F\d]+\b|\b[a-fA-F\d]{4,}\b"), 0.2, 6),
    "HealthApp": (r"<Time>\|<Component>\|<Pid>\|<Content>", (), 0.2, 4),
    "Apache": (r"\[<Time>\] \[<Level>\] <Content>", (r"(\d+\.){3}\d+",), 0.5, 4),
    "Proxifier": (r"\[<Time>\] <Program> - <Content>",
                  (r"<\d+\ssec", r"([\w-]+\.)+[\w-]+(:\d+)?", r"\d{2}:\d{2}(:\d{2})*",
                   r"[KGTM]B"), 0.6, 3),
    "OpenSSH": (r"<Date> <Day> <Time> <Component> sshd\[<Pid>\]: <Content>",
                (r"(\d+\.){3}\d+", r"([\w-]+\.){2,}[\w-]+"), 0.6, 5),
    "OpenStack": (r"<Logrecord> <Date> <Time> <Pid> <Level> <Component> \[<ADDR>\] <Content>",
                  (r"((\d+\.){3}\d+,?)+", r"/.+?\s", r"\d+"), 0.5, 5),
    "Mac": (r"<Month>  <Date> <Time> <User> <Component>\[<PID>\]( \(<Address>\))?: <Content>",
            (r"([\w-]+\.){2,}[\w-]+",), 0.7, 6),
}


def corpus_dir(given: str | None = None) -> Path:
    return Path(given or os.environ.get("SCRATCH_CORPUS") or ROOT.parent / "shared" / "corpus")


def grouping_accuracy(truth: Sequence[str], parsed: Sequence[Any]) -> float:
    """The share of lines whose parsed group holds exactly the lines of their true group."""
    if len(truth) != len(parsed):
        raise ValueError(f"{len(truth)} true events for {len(parsed)} parsed lines")
    groups: dict[Any, list[int]] = defaultdict(list)
    for i, p in enumerate(parsed):
        groups[p].append(i)
    sizes = Counter(truth)
    right = 0
    for members in groups.values():
        events = {truth[i] for i in members}
        if len(events) == 1 and sizes[next(iter(events))] == len(members):
            right += len(members)
    return right / len(truth)


def events(name: str) -> list[str]:
    return (EVENTS / f"{name}.txt").read_text(encoding="ascii").split()


def log_lines(corpus: Path, name: str) -> list[str]:
    """The sample's lines as scratch reads them (UTF-8 with replacement, ``\\r\\n`` cut)."""
    text = (corpus / "logs" / "loghub" / f"{name}_2k.log").read_bytes().decode("utf-8",
                                                                              "replace")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


def _header_regex(log_format: str) -> re.Pattern[str]:
    """Loghub's header format as a regex: each ``<Name>`` a lazy group, spaces any run."""
    out = ""
    for k, part in enumerate(re.split(r"(<[^<>]+>)", log_format)):
        out += re.sub(" +", r"\\s+", part) if k % 2 == 0 else f"(?P<{part[1:-1]}>.*?)"
    return re.compile("^" + out + "$")


def messages(name: str, lines: Sequence[str]) -> list[str]:
    """Each line's message as Loghub's header format cuts it (the whole line if it fails)."""
    rx = _header_regex(SETTINGS[name][0])
    out = []
    for line in lines:
        m = rx.match(line.strip())
        out.append(m.group("Content") if m else line)
    return out


def drain3_with_settings(name: str, lines: Sequence[str]) -> list[int]:
    """drain3's Drain as Loghub's benchmark runs Drain: messages, regexes masked, its
    similarity and depth. The cluster id of each line."""
    from drain3.drain import Drain

    _, regexes, sim, depth = SETTINGS[name]
    compiled = [re.compile(r) for r in regexes]
    drain = Drain(depth=depth, sim_th=sim, max_children=100)
    out = []
    for text in messages(name, lines):
        for rx in compiled:
            text = rx.sub("<*>", text)
        cluster, _ = drain.add_log_message(text)
        out.append(cluster.cluster_id)
    return out


def scratch_ids(lines: Sequence[str], *, cut_timestamp: bool = True) -> list[int]:
    """scratch's template id of each line (0: none), as ``scratch ingest`` mines them."""
    from scratch.index.logtemplates import mine, timestamp_format_of

    ts = timestamp_format_of(list(lines[:5000])) if cut_timestamp else None
    found = mine(lines, ts)
    if found.structure is not None:
        return [0] * len(lines)
    return list(found.ids)


def known_format(lines: Sequence[str]) -> str | None:
    """The known line format scratch would parse the sample with (then it mines nothing)."""
    from scratch.formats.logformats import detect

    fmt, _, _ = detect(lines)
    return fmt.name if fmt is not None else None


def measure(corpus: Path) -> list[dict[str, Any]]:
    rows = []
    for name in DATASETS:
        lines = log_lines(corpus, name)
        truth = events(name)
        rows.append({
            "dataset": name, "known": known_format(lines), "published": PUBLISHED[name],
            "drain3_settings": round(grouping_accuracy(truth, drain3_with_settings(name, lines)),
                                     4),
            "scratch_content": round(grouping_accuracy(
                truth, scratch_ids(messages(name, lines), cut_timestamp=False)), 4),
            "scratch_lines": round(grouping_accuracy(truth, scratch_ids(lines)), 4)})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", help="the corpus folder (default: $SCRATCH_CORPUS or "
                    "../shared/corpus)")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = ap.parse_args()
    corpus = corpus_dir(args.corpus)
    if not (corpus / "logs" / "loghub").is_dir():
        raise SystemExit(f"no Loghub samples under {corpus}/logs/loghub")
    rows = measure(corpus)
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    cols = ("published", "drain3_settings", "scratch_content", "scratch_lines")
    print("| dataset | Drain, published | drain3 + Loghub settings | scratch, messages | "
          "scratch, whole lines | scratch parses it as |")
    print("| --- | ---: | ---: | ---: | ---: | --- |")
    for r in rows:
        print(f"| {r['dataset']} | " + " | ".join(f"{r[c]:.4f}" for c in cols)
              + f" | {r['known'] or '(mined)'} |")
    avg = {c: sum(r[c] for r in rows) / len(rows) for c in cols}
    print("| **average** | " + " | ".join(f"**{avg[c]:.4f}**" for c in cols) + " | |")


if __name__ == "__main__":
    main()
