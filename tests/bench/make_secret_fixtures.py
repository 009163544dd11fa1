"""Build tests/data/secrets/labelled.jsonl from two secret detectors' own test fixtures.

A script run once by hand (not collected by pytest); the file it writes is committed with its
provenance in tests/data/MANIFEST.md. It reads two git repositories (bare or not) at a given
commit, so the output is reproducible:

- gitleaks (MIT): the literal strings of each rule's ``tps`` (true positives) and ``fps``
  (false positives) lists in ``cmd/generate/config/rules/*.go``. Samples built by Go calls
  (``utils.GenerateSampleSecret(...)``, random secrets) are skipped: they need Go to produce.
- detect-secrets (Apache-2.0): each ``(payload, should_flag)`` pair of the
  ``pytest.mark.parametrize`` tables in ``tests/plugins/*_test.py`` whose payload is a literal
  string (the detectors for public IPs and generic high-entropy strings are left out: neither
  is one kind of credential).

Each line: ``{"source": "gitleaks"|"detect-secrets", "kind": rule or plugin, "secret": bool,
"text": sample}``; samples over 2,000 characters are left out. Usage::

    python tests/bench/make_secret_fixtures.py GITLEAKS_GIT COMMIT DETECT_SECRETS_GIT COMMIT
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "data" / "secrets" / "labelled.jsonl"
MAX_CHARS = 2000
SKIP_PLUGINS = {"base", "high_entropy_strings", "ip_public"}
GO_LIST = re.compile(r"\b(tps|fps)\s*:?=\s*(?:append\(\s*\w+\s*,\s*)?\[\]string\{(.*?)\n\s*\}",
                     re.S)
GO_ITEM = re.compile(r'^\s*(`[^`]*`|"(?:[^"\\\n]|\\.)*")\s*,?\s*(?://.*)?$')


def git_show(repo: str, commit: str, path: str) -> str:
    return subprocess.run(["git", "--git-dir", repo, "show", f"{commit}:{path}"], check=True,
                          capture_output=True).stdout.decode("utf-8")


def git_files(repo: str, commit: str, folder: str) -> list[str]:
    out = subprocess.run(["git", "--git-dir", repo, "ls-tree", "-r", "--name-only", commit,
                          folder], check=True, capture_output=True).stdout.decode()
    return sorted(out.split())


def go_string(literal: str) -> str:
    if literal.startswith("`"):
        return literal[1:-1]
    return str(json.loads(literal))


def gitleaks(repo: str, commit: str) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for path in git_files(repo, commit, "cmd/generate/config/rules"):
        if not path.endswith(".go") or path.endswith("_test.go"):
            continue
        source = git_show(repo, commit, path)
        # the rule a list belongs to: the last RuleID before it
        ids = [(m.start(), m.group(1)) for m in re.finditer(r'RuleID:\s*"([^"]+)"', source)]
        for m in GO_LIST.finditer(source):
            rule = next((rid for pos, rid in reversed(ids) if pos < m.start()), None)
            if rule is None:
                continue
            for line in m.group(2).split("\n"):
                item = GO_ITEM.match(line)
                if not item:
                    continue
                try:
                    text = go_string(item.group(1))
                except ValueError:
                    continue
                if text.strip() and len(text) <= MAX_CHARS:
                    rows.append({"source": "gitleaks", "kind": rule,
                                 "secret": m.group(1) == "tps", "text": text})
    return rows


def detect_secrets(repo: str, commit: str) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for path in git_files(repo, commit, "tests/plugins"):
        plugin = Path(path).name.removesuffix("_test.py")
        if not path.endswith("_test.py") or plugin in SKIP_PLUGINS:
            continue
        tree = ast.parse(git_show(repo, commit, path))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "parametrize"
                    and len(node.args) >= 2 and isinstance(node.args[0], ast.Constant)):
                continue
            names = [n.strip() for n in str(node.args[0].value).split(",")]
            if "payload" not in names or "should_flag" not in names:
                continue
            at, flag = names.index("payload"), names.index("should_flag")
            if not isinstance(node.args[1], (ast.List, ast.Tuple)):
                continue
            for case in node.args[1].elts:
                if not isinstance(case, ast.Tuple) or len(case.elts) != len(names):
                    continue
                text, should = case.elts[at], case.elts[flag]
                if (isinstance(text, ast.Constant) and isinstance(text.value, str)
                        and isinstance(should, ast.Constant) and isinstance(should.value, bool)
                        and text.value.strip() and len(text.value) <= MAX_CHARS):
                    rows.append({"source": "detect-secrets", "kind": plugin,
                                 "secret": should.value, "text": text.value})
    return rows


def main(argv: list[str]) -> None:
    if len(argv) != 4:
        sys.exit(__doc__)
    rows = gitleaks(argv[0], argv[1]) + detect_secrets(argv[2], argv[3])
    seen: set[tuple[str, bool, str]] = set()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with open(OUT, "w", encoding="utf-8") as out:
        for row in rows:
            key = (str(row["source"]), bool(row["secret"]), str(row["text"]))
            if key in seen:
                continue
            seen.add(key)
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{len(seen)} samples -> {OUT}")


if __name__ == "__main__":
    main(sys.argv[1:])
