"""Everything a command needs to know about where and as whom it runs.

Built once per invocation from flags and the environment; opening the store (and creating it on
first use) is deferred until a command asks for it, so ``--help`` and pure commands stay fast.

A worker of a run (:mod:`scratch.runs`) names the run (``--run``, ``$SCRATCH_RUN``) and may
name its iteration (``--iteration``, ``$SCRATCH_ITERATION``; else the run's latest): an
iteration the run has not started is refused here, before anything runs. A coordinator
(``--coordinator``, only in a run) has no scratchpad: :meth:`Context.store` refuses it, and
its answers are held to the per-call cap alone (:mod:`scratch.answers.kernel.prices`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from scratch.store.config import Config, load_config
from scratch.store.names import DEFAULT_AGENT, find_store_root, validate_agent

if TYPE_CHECKING:
    from scratch.store import Store
    from scratch.tokens import EncodingSpec

SESSION_RE_CHARS = "A-Za-z0-9_-"


class Context:
    """Where the store is, who is asking, with which settings; opens the store on first use."""

    __slots__ = ("root", "root_source", "agent", "session", "config", "interface", "named",
                 "person", "run", "iteration", "coordinator", "_store", "_spec", "__weakref__")

    def __init__(self, root: Path, root_source: str, agent: str, session: str,
                 config: Config, store: Store | None = None, interface: str = "cli",
                 named: frozenset[str] = frozenset(), run: str | None = None,
                 iteration: int | None = None, coordinator: bool = False) -> None:
        self.root = root
        # which of "agent" and "session" the caller named (a flag or SCRATCH_AGENT /
        # SCRATCH_SESSION) rather than took by default: a person at a terminal names no agent
        self.named = named
        # a person at a terminal, not an agent (the CLI decides: no agent named, stdout a
        # terminal, no --json): the budget is shown but never refuses (see kernel.prices)
        self.person = False
        # the interface the call came through, as the call ledger names it (scratch.store.ledger):
        # cli, mcp-stdio, mcp-http or proxy
        self.interface = interface
        self.root_source = root_source
        self.agent = agent
        self.session = session
        self.config = config
        # the run this call is a worker (or the coordinator) of, and its iteration (both None
        # outside a run); checked by build (or by the server that made the session)
        self.run = run
        self.iteration = iteration
        self.coordinator = coordinator
        self._store: Store | None = store  # given by a long-lived caller that keeps it open
        self._spec: EncodingSpec | None = None

    def __repr__(self) -> str:
        return f"Context(root={self.root!r}, agent={self.agent!r}, session={self.session!r})"

    @classmethod
    def build(cls, *, store: str | None = None, agent: str | None = None,
              session: str | None = None, model: str | None = None,
              encoding: str | None = None, run: str | None = None,
              iteration: int | str | None = None, coordinator: bool = False) -> Context:
        root, source = find_store_root(store)
        named = frozenset(k for k, given, env in (("agent", agent, "SCRATCH_AGENT"),
                                                  ("session", session, "SCRATCH_SESSION"))
                          if given or os.environ.get(env))
        agent = agent or os.environ.get("SCRATCH_AGENT") or DEFAULT_AGENT
        validate_agent(agent)
        session = session or os.environ.get("SCRATCH_SESSION") or "default"
        try:
            validate_agent(session)
        except Exception:
            from scratch.errors import InvalidName
            raise InvalidName(f"invalid session name {session!r}: use 1-128 characters from "
                              "A-Z a-z 0-9 _ -", code="invalid_session", session=session) from None
        config = load_config(root, agent=agent)
        config.set_override("model", model, "--model")
        config.set_override("encoding", encoding, "--encoding")
        run = run or os.environ.get("SCRATCH_RUN") or None
        if iteration is None:
            iteration = os.environ.get("SCRATCH_ITERATION") or None
        if iteration is not None:  # named, not the run's latest taken by default
            named = named | {"iteration"}
        ctx = cls(root=root, root_source=source, agent=agent, session=session, config=config,
                  named=named)
        if run is not None or iteration is not None or coordinator:  # a worker of a run
            from scratch.runs import join_run
            ctx.run, ctx.iteration, ctx.coordinator = join_run(root, run, iteration,
                                                               coordinator)
        return ctx

    def store(self, *, create: bool = True) -> Store:
        if self.coordinator:
            from scratch.runs import no_scratchpad
            raise no_scratchpad(self.agent, self.run)
        if self._store is None:
            from scratch.store import Store
            self._store = Store.open(self.root, self.agent, self.config, create=create)
        return self._store

    def opened_store(self) -> Store | None:
        """The store if it is open already (a long-lived caller hands it over open)."""
        return self._store

    def has_store(self) -> bool:
        """Whether a store is open or exists at the root (what a call leaves behind, its
        counters and its ledger record, needs one; a call never creates it for them)."""
        return self._store is not None or (self.root / ".git").exists()

    def model_warning(self) -> str | None:
        """The warning an unknown model (``--model``, ``SCRATCH_MODEL`` or config ``model``)
        deserves: it is priced with the default tokenizer and window, and says where it came
        from (see :func:`scratch.tokens.models.unknown_model`)."""
        from scratch.tokens.models import context_window, unknown_model
        cfg = self.config
        model = cfg["model"] or None
        window = context_window(model, cfg["budget.windows"], cfg["budget.context_window"])
        said = unknown_model(model, cfg["encoding"] or None, window)
        if said is None:
            return None
        return f"{said} (model from {self.config.sources.get('model', 'config')})"

    def encoding(self) -> EncodingSpec:
        if self._spec is None:
            from scratch.tokens import resolve_encoding
            self._spec = resolve_encoding(self.config["model"] or None,
                                          self.config["encoding"] or None,
                                          claude_factor=self.config["tokens.claude_factor"])
        return self._spec
