"""scratch.answers.kernel.result: a Result is a value; with_meta keeps every other field."""

from __future__ import annotations

import dataclasses

import pytest

from scratch.answers.kernel.result import Charge, Result
from scratch.calls import call


def test_with_meta_sets_meta_and_keeps_every_other_field() -> None:
    full = Result("head", data={"a": 1}, text="t\n", meta={"cached": True},
                  warnings=("w",), notices=("n",), exit_code=3, style="lines",
                  next=call("head", ref="x"), price=7, charge=Charge())
    shown = full.with_meta({"intercepted": 5})
    for f in dataclasses.fields(Result):
        if f.name != "meta":
            assert getattr(shown, f.name) is getattr(full, f.name), f.name
    assert shown.meta == {"cached": True, "intercepted": 5}
    assert full.meta == {"cached": True}  # the original is unchanged


def test_a_result_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        Result("x").text = "y"  # type: ignore[misc]
