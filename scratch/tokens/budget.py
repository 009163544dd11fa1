"""The context budget of one agent session: how many tokens its answers may still put into the
model's context.

State file (JSON object, one per session; the caller picks the path inside the store)::

    {"version": 1, "used": int, "extracted": int, "intercepted": int, "calls": int,
     "kinds": {kind: int}, "reported": int | null, "window": int | null,
     "created": iso8601, "updated": iso8601}

``used`` is the running estimate of tokens in the context: every charge adds to it, and
``report_used(n)`` (the model's own figure, ground truth) raises it to ``max(used, n)``.
``intercepted`` counts tokens kept *out* of the context (outputs stored instead of shown);
it never reduces what remains. ``window`` is a ``set-window`` override (null: the model's).

Invariants:
- ``usable = floor(window * (1 - margin))`` with the margin clamped to 0..0.95;
  ``remaining = max(0, usable - used)``.
- Every read-modify-write runs under an exclusive ``flock`` on the sibling ``<name>.lock``
  file, so concurrent callers cannot both spend the last tokens; :meth:`Budget.charge` checks
  and records in that one critical section and records nothing when it refuses.
- The state file is rewritten in place under the lock (:func:`scratch.store.locking.overwrite`):
  readers, who hold the lock too, see the old or the new state. A missing file is a fresh
  budget; an unreadable or corrupt one is reset and the result carries a warning -- never a
  crash. Directories 0700, files 0600.
- A long-lived process may keep the last state it read or wrote of each file
  (:func:`keep_states`), to size an answer before it takes the lock (:meth:`Budget.kept_view`).
  Such a state is only a guess: the charge that follows names it (``expect``) and, under the
  lock, finds the file holding exactly that state or raises :class:`StaleBudget` having
  recorded nothing, so the caller sizes the answer again on a state read under the lock. What
  another process charged or reset is therefore never missed, and no file times are trusted.
"""

from __future__ import annotations

import json
import math
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import NotRequired, TypedDict, cast

import orjson

from scratch.calls import Step, suggest
from scratch.errors import BudgetExceeded, LimitExceeded, UsageError
from scratch.store.locking import exclusive, overwrite

STATE_VERSION = 1
MAX_MARGIN = 0.95
DEFAULT_MARGIN = 0.20
_COUNTERS = ("used", "extracted", "intercepted", "calls")
KEPT_STATES = 256  # sessions whose last state a long-lived process keeps (keep_states)


class BudgetState(TypedDict):
    """A session's budget file (JSON, checked by :func:`_valid` when read)."""

    version: int
    used: int
    extracted: int
    intercepted: int
    calls: int
    kinds: dict[str, int]  # tokens charged per kind
    reported: int | None  # the last count the model reported (budget used)
    window: int | None  # a set-window override
    created: str
    updated: str


class StatusView(TypedDict):
    """The view of a state (the module's word): what :meth:`Budget.status` and the charges
    return, a state as the session sees it (not :class:`scratch.api.BudgetStatus`, the public
    API's object made from it)."""

    window: int
    window_source: str  # "set-window" or "model"
    margin: float
    usable: int
    used: int
    remaining: int
    intercepted: int
    extracted: int
    calls: int
    kinds: dict[str, int]
    reported: int | None
    max_extraction_tokens: int
    updated: str | None
    warnings: NotRequired[list[str]]
    stored: NotRequired[bool]  # peek: the session has a state file


# a change made under the lock: mutates the state, True to save it (or raises to refuse)
Change = Callable[[BudgetState, StatusView], bool]


class StaleBudget(Exception):
    """The state a charge expected is not the one under the lock: nothing was recorded."""


class _Kept:
    """The last state read or written of each budget file, by path (see the module)."""

    def __init__(self) -> None:
        self.on = False
        self.lock = threading.Lock()
        self.states: OrderedDict[str, BudgetState] = OrderedDict()

    def put(self, path: str, state: BudgetState) -> None:
        kept = _copy(state)
        with self.lock:
            self.states[path] = kept
            self.states.move_to_end(path)
            while len(self.states) > KEPT_STATES:
                self.states.popitem(last=False)

    def get(self, path: str) -> BudgetState | None:
        with self.lock:
            found = self.states.get(path)
        return _copy(found) if found is not None else None


_kept = _Kept()


def _dumps(state: BudgetState) -> bytes:
    """Compact JSON with sorted keys, as ``json.dumps(sort_keys=True, separators=(",", ":"))``
    writes it (the state is ASCII); orjson unless a number is past 64 bits."""
    try:
        return orjson.dumps(state, option=orjson.OPT_SORT_KEYS)
    except TypeError:
        return json.dumps(state, sort_keys=True, separators=(",", ":")).encode()


def _copy(state: BudgetState) -> BudgetState:
    """A copy a change may mutate: a state's values are numbers and strings, but ``kinds``."""
    out = cast(BudgetState, dict(state))
    out["kinds"] = dict(state["kinds"])
    return out


def keep_states(on: bool = True) -> None:
    """Keep (or stop keeping) the last state of each budget file this process saw."""
    with _kept.lock:
        _kept.on = on
        _kept.states.clear()


def clamp_margin(margin: float) -> float:
    """The safety margin clamped to 0..0.95 (a non-number becomes the default 0.20)."""
    try:
        m = float(margin)
    except (TypeError, ValueError):
        return DEFAULT_MARGIN
    if math.isnan(m):
        return DEFAULT_MARGIN
    return min(max(m, 0.0), MAX_MARGIN)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _fresh() -> BudgetState:
    now = _now()
    return {"version": STATE_VERSION, "used": 0, "extracted": 0, "intercepted": 0, "calls": 0,
            "kinds": {}, "reported": None, "window": None, "created": now, "updated": now}


def _valid(state: object) -> bool:
    if not isinstance(state, dict) or state.get("version") != STATE_VERSION:
        return False
    for key in _COUNTERS:
        value = state.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            return False
    kinds = state.get("kinds")
    if not isinstance(kinds, dict) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in kinds.values()):
        return False
    for key in ("reported", "window"):
        value = state.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)
                                  or value < 0):
            return False
    return True


def _tokens(value: int, what: str = "tokens") -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise UsageError(f"{what} must be a whole number >= 0, not {value!r}",
                         code="invalid_argument", value=str(value))
    return value


class Budget:
    """One session's budget, stored in ``state_file``.

    ``window`` is the model's context window (``context_window(model, ...)``), used unless the
    session has a ``set_window`` override; ``max_extraction_tokens`` is the per-call cap
    checked by :meth:`check_cap` (0 or less: no cap).
    """

    def __init__(self, state_file: Path, *, window: int, safety_margin: float = DEFAULT_MARGIN,
                 max_extraction_tokens: int = 10_000, root: Path | None = None) -> None:
        self.state_file = state_file if isinstance(state_file, Path) else Path(state_file)
        # the store root: no directory between it and the state file may be a symlink
        self.root = root if root is None or isinstance(root, Path) else Path(root)
        self.lock_file = self.state_file.with_name(self.state_file.name + ".lock")
        self.model_window = int(window)
        self.margin = clamp_margin(safety_margin)
        self.max_extraction_tokens = int(max_extraction_tokens)

    # -- state I/O (callers hold the lock) -------------------------------------------------

    def _load(self, warnings: list[str]) -> tuple[BudgetState, bool]:
        """The state and whether it must be written back (it was corrupt)."""
        try:
            # never through a symlink placed there (a link makes it unreadable: reset)
            fd = os.open(self.state_file, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            try:
                raw = os.read(fd, os.fstat(fd).st_size)  # a small file: one read of its size
            finally:
                os.close(fd)
        except FileNotFoundError:
            return _fresh(), False
        except OSError as exc:
            warnings.append(f"budget state {self.state_file.name} was unreadable "
                            f"({exc.strerror or exc}); the budget was reset")
            return _fresh(), True
        try:
            state = orjson.loads(raw)  # it runs on every answer
        except orjson.JSONDecodeError:
            state = None
        if not _valid(state):  # orjson reads an integer past 64 bits as a float: ask json
            try:
                state = json.loads(raw)
            except (ValueError, UnicodeDecodeError):
                state = None
        if not _valid(state):
            warnings.append(f"budget state {self.state_file.name} was corrupt; "
                            "the budget was reset")
            return _fresh(), True
        return state, False

    def _save(self, state: BudgetState, warnings: list[str]) -> None:
        state["updated"] = _now()
        data = _dumps(state) + b"\n"
        # Rewritten in place (every reader holds the lock): no fsync, no rename. Losing the
        # very last charge in a power cut is harmless, and a torn file is reset with a warning
        # on the next read.
        try:
            overwrite(self.state_file, data)
        except OSError as exc:
            # The budget is advisory bookkeeping: failing to save it must not stop the answer.
            warnings.append(f"budget state {self.state_file.name} could not be saved "
                            f"({exc.strerror or exc}); this change was not recorded")

    def _view(self, state: BudgetState, warnings: list[str]) -> StatusView:
        window = cast(int, state["window"] if state.get("window") is not None
                      else self.model_window)
        usable = math.floor(window * (1 - self.margin))
        used = state["used"]
        out: StatusView = {
            "window": window,
            "window_source": "set-window" if state.get("window") is not None else "model",
            "margin": self.margin,
            "usable": usable,
            "used": used,
            "remaining": max(0, usable - used),
            "intercepted": state["intercepted"],
            "extracted": state["extracted"],
            "calls": state["calls"],
            "kinds": dict(state["kinds"]),
            "reported": state.get("reported"),
            "max_extraction_tokens": self.max_extraction_tokens,
            "updated": state.get("updated"),
        }
        if warnings:
            out["warnings"] = list(warnings)
        return out

    def _update(self, change: Change, expect: Mapping[str, object] | None = None) -> StatusView:
        """Run ``change(state, view)`` under the lock; it mutates ``state`` and returns True to
        save it (or raises to refuse). Returns the view after the change. With ``expect`` (a
        state from :meth:`kept_view`), a file holding any other state raises
        :class:`StaleBudget` before ``change`` runs."""
        warnings: list[str] = []
        if self.root is not None:
            from scratch.safefs import check_dirs
            check_dirs(self.root, self.state_file)  # unsafe_path: a symlink would write outside
        with exclusive(self.lock_file):
            state, dirty = self._load(warnings)
            keep = _kept.on and not warnings
            if keep:
                _kept.put(str(self.state_file), state)
            if expect is not None and (state != expect or dirty):
                raise StaleBudget(str(self.state_file))
            if change(state, self._view(state, warnings)) or dirty:
                self._save(state, warnings)
                if keep and not warnings:
                    _kept.put(str(self.state_file), state)
            return self._view(state, warnings)

    def kept_view(self) -> tuple[StatusView, BudgetState] | None:
        """The view of the last state this process saw of the file, and that state (to pass
        as ``expect``), without reading it; None when none is kept (see the module)."""
        if not _kept.on:
            return None
        state = _kept.get(str(self.state_file))
        if state is None:
            return None
        return self._view(state, []), state

    # -- public operations ------------------------------------------------------------------

    def status(self) -> StatusView:
        """window, window_source, margin, usable, used, remaining, intercepted, extracted,
        calls, kinds, reported, max_extraction_tokens, updated (+ warnings)."""
        return self._update(lambda state, view: False)

    def peek(self) -> StatusView:
        """The view of the state as the file holds it, for a reader that changes nothing (the
        web page): read under a shared lock, never written (a corrupt file shows as fresh, with
        its warning, and stays as it is). ``stored`` says whether the session has a state
        file at all (without one: a fresh budget's view)."""
        warnings: list[str] = []
        stored = os.path.isfile(self.state_file) and not os.path.islink(self.state_file)
        if not stored:
            state = _fresh()
        else:
            from scratch.errors import UnsafePath
            from scratch.store.locking import shared
            try:
                with shared(self.lock_file):  # a writer rewrites the file in place
                    state, _ = self._load(warnings)
            except (OSError, UnsafePath):  # a lock this reader may not take: read as it is
                state, _ = self._load(warnings)
        return {**self._view(state, warnings), "stored": stored}

    def _refusal(self, tokens: int, view: StatusView) -> BudgetExceeded:
        return BudgetExceeded(
            f"this answer needs about {tokens} tokens but only {view['remaining']} of the "
            f"{view['usable']}-token budget remain",
            estimated_tokens=tokens, remaining=view["remaining"], usable=view["usable"],
            used=view["used"], window=view["window"],
            suggestions=[suggest(Step.SHOW_BUDGET),
                         suggest(Step.SET_BUDGET_USED, tokens=view["used"]),
                         suggest(Step.RESET_BUDGET),
                         suggest(Step.SET_BUDGET_WINDOW, tokens=view["window"])])

    def check(self, tokens: int, *, expect: Mapping[str, object] | None = None) -> StatusView:
        """Raise :class:`BudgetExceeded` if ``tokens`` do not fit; record nothing. (With
        ``expect``: :class:`StaleBudget` when the state is another, as :meth:`charge`.)"""
        _tokens(tokens)

        def change(state: BudgetState, view: StatusView) -> bool:
            if tokens > view["remaining"]:
                raise self._refusal(tokens, view)
            return False

        return self._update(change, expect)

    def charge(self, tokens: int, *, kind: str = "extracted", enforce: bool = True,
               expect: Mapping[str, object] | None = None) -> StatusView:
        """Check and record ``tokens`` entering the context, atomically.

        ``kind`` labels the spend (``extracted`` for answers; e.g. ``passthrough`` for small
        outputs let through); all kinds add to ``used``. With ``enforce`` a charge that does not
        fit raises :class:`BudgetExceeded` and records nothing; without it, it is recorded anyway
        (the tokens are already in the context). With ``expect`` (the state the answer was
        sized on, from :meth:`kept_view`) any other state under the lock raises
        :class:`StaleBudget` and records nothing.
        """
        _tokens(tokens)
        if not kind or not isinstance(kind, str):
            raise UsageError("a budget charge needs a kind", code="invalid_argument")

        def change(state: BudgetState, view: StatusView) -> bool:
            if enforce and tokens > view["remaining"]:
                raise self._refusal(tokens, view)
            state["used"] += tokens
            if kind == "extracted":
                state["extracted"] += tokens
            state["kinds"][kind] = state["kinds"].get(kind, 0) + tokens
            state["calls"] += 1
            return True

        return self._update(change, expect)

    def record_intercepted(self, tokens: int) -> StatusView:
        """Record tokens kept out of the context (a tool output stored instead of shown)."""
        _tokens(tokens)

        def change(state: BudgetState, view: StatusView) -> bool:
            state["intercepted"] += tokens
            return True

        return self._update(change)

    def report_used(self, n: int) -> StatusView:
        """The model reported ``n`` tokens in its context: the estimate becomes max(used, n)."""
        _tokens(n)

        def change(state: BudgetState, view: StatusView) -> bool:
            state["used"] = max(state["used"], n)
            state["reported"] = n
            return True

        return self._update(change)

    def reset(self) -> StatusView:
        """Forget all usage (after the context was cleared); a set-window override is kept."""

        def change(state: BudgetState, view: StatusView) -> bool:
            window = state.get("window")
            cast("dict[str, object]", state).clear()  # keys a newer version wrote too
            state.update(_fresh())
            state["window"] = window
            return True

        return self._update(change)

    def set_window(self, n: int | None) -> StatusView:
        """Override this session's context window (None: back to the model's)."""
        if n is not None:
            _tokens(n, "the context window")
            if n < 1:
                raise UsageError("the context window must be at least 1 token",
                                 code="invalid_argument", value=str(n))

        def change(state: BudgetState, view: StatusView) -> bool:
            state["window"] = n
            return True

        return self._update(change)

    def check_cap(self, tokens: int, code: str = "extraction_too_large",
                  suggestions: list[str] | None = None) -> None:
        """Raise :class:`LimitExceeded` (with ``code``) when one answer exceeds the per-call cap."""
        cap = self.max_extraction_tokens
        if cap > 0 and tokens > cap:
            raise LimitExceeded(
                f"this answer would be about {tokens} tokens, over the per-call cap of {cap} "
                "(budget.max_extraction_tokens)",
                code=code, estimated_tokens=tokens, limit=cap,
                suggestions=suggestions or [])
