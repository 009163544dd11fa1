"""tail: the last lines of an entry, read from one opening of it (its lines counted and read
through the same index)."""

from __future__ import annotations

from pathlib import Path

import pytest

from scratch import Scratchpad
from scratch.answers.kernel import target as targets


def test_tail_opens_its_entry_once(scratch_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = "".join(f"line {i}\n" for i in range(1, 201))
    opened: list[str] = []
    real = targets.open_target

    def counted(*args: object, **kwargs: object) -> targets.Target:
        found = real(*args, **kwargs)  # type: ignore[arg-type]
        opened.append(found.name)
        return found

    with Scratchpad() as sp:
        name = sp.intercept("notes", text, name="notes", store_always=True).name
        assert name is not None
        for module in ("scratch.answers.commands.tail", "scratch.answers.lines.ranges"):
            monkeypatch.setattr(f"{module}.open_target", counted)
        answer = sp.tail(name, 3)
    assert (answer.data["start"], answer.data["lines"]) == (
        198, ["line 198", "line 199", "line 200"])
    assert opened == [name]
