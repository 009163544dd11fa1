"""``python -m scratch.docs [--check] [--root DIR]``: regenerate completions/ and man/.

The root defaults to the checkout this package lives in (the directory holding
pyproject.toml); pass --root when running from an installed copy.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def default_root() -> Path | None:
    here = Path(__file__).resolve().parents[2]
    return here if (here / "pyproject.toml").is_file() else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m scratch.docs",
                                     description="Regenerate completions/ and man/ from the "
                                     "command tree.")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 and list the files that differ")
    parser.add_argument("--root", type=Path, default=None,
                        help="repository root (default: the checkout of this package)")
    args = parser.parse_args(argv)
    root = args.root or default_root()
    if root is None:
        parser.error("not running from a checkout: pass --root DIR")
    from scratch import docs
    if args.check:
        drift = docs.check(root)
        for rel in drift:
            print(f"out of date: {rel}", file=sys.stderr)
        if drift:
            print("run: python -m scratch.docs", file=sys.stderr)
        return 1 if drift else 0
    for rel in docs.write(root):
        print(f"wrote {rel}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
