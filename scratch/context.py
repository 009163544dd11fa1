"""Everything a command needs to know about where and as whom it runs.

Built once per invocation from flags and the environment; opening the store (and creating it on
first use) is deferred until a command asks for it, so ``--help`` and pure commands stay fast.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from scratch.config import Config, load_config
from scratch.names import DEFAULT_AGENT, find_store_root, validate_agent

if TYPE_CHECKING:
    from scratch.store import Store
    from scratch.tokens import EncodingSpec

SESSION_RE_CHARS = "A-Za-z0-9_-"


@dataclass
class Context:
    root: Path
    root_source: str
    agent: str
    session: str
    config: Config
    flags: dict[str, str] = field(default_factory=dict)
    json_mode: bool = False  # answers are priced on the JSON envelope the agent will read
    _store: Store | None = None

    @classmethod
    def build(cls, *, store: str | None = None, agent: str | None = None,
              session: str | None = None, model: str | None = None,
              encoding: str | None = None) -> Context:
        root, source = find_store_root(store)
        agent = agent or os.environ.get("SCRATCH_AGENT") or DEFAULT_AGENT
        validate_agent(agent)
        session = session or os.environ.get("SCRATCH_SESSION") or "default"
        try:
            validate_agent(session)
        except Exception:
            from scratch.errors import InvalidName
            raise InvalidName(f"invalid session name {session!r}: use 1-128 characters from "
                              "A-Z a-z 0-9 _ -", code="invalid_session", session=session) from None
        config = load_config(root)
        config.set_override("model", model, "--model")
        config.set_override("encoding", encoding, "--encoding")
        return cls(root=root, root_source=source, agent=agent, session=session, config=config)

    def store(self, *, create: bool = True) -> Store:
        if self._store is None:
            from scratch.store import Store
            self._store = Store.open(self.root, self.agent, self.config, create=create)
        return self._store

    def encoding(self) -> EncodingSpec:
        from scratch.tokens import resolve_encoding
        return resolve_encoding(self.config["model"] or None, self.config["encoding"] or None,
                                claude_factor=self.config["tokens.claude_factor"])
