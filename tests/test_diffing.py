"""The compact diff ops rebuild the new version exactly from the old one."""

from __future__ import annotations

import random

from scratch.diffing import apply_ops, diff_ops


def test_ops_applied_to_old_lines_give_the_new_lines() -> None:
    rng = random.Random(7)
    for _ in range(200):
        old = [rng.choice("abcde") for _ in range(rng.randrange(0, 30))]
        new = list(old)
        for _ in range(rng.randrange(0, 6)):
            at = rng.randrange(0, len(new) + 1)
            if new and rng.random() < 0.5:
                del new[min(at, len(new) - 1)]
            else:
                new.insert(at, rng.choice("xyz"))
        ops = diff_ops(old, new)
        assert apply_ops(old, ops) == new
        assert sum(o["count"] for o in ops if o["op"] == "equal") + sum(
            len(o["lines"]) for o in ops if o["op"] == "remove") == len(old)
