"""Who is asking, and what a warm server keeps between calls.

Invariants:
- A :class:`Session` is one MCP client connection's view: its agent (fixed when the session is
  made: ``--agent``/``SCRATCH_AGENT`` on stdio, the bearer token over HTTP; never a tool
  argument), its budget session, and the model that prices its answers; likewise its run
  (:mod:`scratch.runs`): the server's ``--run``/``--iteration``/``--coordinator`` on stdio, the
  token's over HTTP, the run's latest iteration when none is named, fixed when it is made.
- Budget sessions: every connection gets its own (``mcp-<16 hex>``) unless the server was
  started with ``--session NAME`` (or ``SCRATCH_SESSION``), which all its connections share.
- The model: ``--model`` > ``SCRATCH_MODEL`` > ``scratch.toml`` > the family of the client's
  declared name (``claude-code`` prices as Claude) > none (o200k_base).
- What is kept warm never hides a write by another process: the configuration is re-read when
  ``scratch.toml`` changes (one ``stat`` per call); entries and versions are read from the
  store on every call, so a version the CLI wrote a moment ago is the one answered; an index
  or an open content file is used only for the blob (or unchanged file) it was opened for; a
  budget is sized on the last state this process saw of it, which its charge, under the lock,
  finds unchanged or the answer is sized again (:mod:`scratch.tokens.budget`); tokenizers are
  process-wide and loaded once.
"""

from __future__ import annotations

import os
import secrets
import threading
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeAlias

from scratch.answers.kernel.context import Context
from scratch.mcp.rendering import ToolJson, ToolText
from scratch.mcp.serve.resources import ingest_link
from scratch.store.config import CONFIG_FILE, Config, load_config
from scratch.store.names import DEFAULT_AGENT, find_store_root, validate_agent

if TYPE_CHECKING:
    from scratch.runs import UsageEvent
    from scratch.store import Store

# A client's declared name -> the model family that prices it (substring, lower case). Only
# families whose tokenizer differs from the default are worth naming.
# content files a session's store keeps open between calls (the entries read last), so a
# call on one of them does not open it (and re-read its metadata under the swap lock) again
KEPT_PINS = 16
# A client connection: ("stdio",), or ("http", the token's id, the Mcp-Session-Id)
ConnectionKey: TypeAlias = tuple[str | None, ...]
CLIENT_FAMILIES = (("claude", "claude"), ("gemini", "gemini"), ("codex", "gpt-5"),
                   ("chatgpt", "gpt-5"), ("openai", "gpt-5"))


def model_for_client(name: str | None) -> str | None:
    """The model whose tokenizer prices answers for a client that calls itself ``name``."""
    if not name:
        return None
    low = name.lower()
    for needle, model in CLIENT_FAMILIES:
        if needle in low:
            return model
    return None


class ConfigCache:
    """The effective configuration of one store, re-read only when ``scratch.toml`` changes
    (its size, mtime and inode), handed out as copies so a session's overrides stay its own."""

    def __init__(self, root: Path, overrides: dict[str, str | None]) -> None:
        self.root = root
        self.overrides = overrides  # flags of `scratch mcp serve` (--model, --encoding)
        self._file = os.fspath(root / CONFIG_FILE)  # stat'ed on every call
        self._lock = threading.Lock()
        self._stamp: tuple[int, int, int] | None = None
        self._config: Config | None = None
        self.generation = 0  # incremented each time the file is read anew

    def _file_stamp(self) -> tuple[int, int, int]:
        try:
            st = os.stat(self._file)
        except OSError:
            return (0, 0, 0)
        return (st.st_size, st.st_mtime_ns, st.st_ino)

    def get(self) -> Config:
        stamp = self._file_stamp()
        with self._lock:
            if self._config is None or stamp != self._stamp:
                config = load_config(self.root)
                for key, value in self.overrides.items():
                    config.set_override(key, value, f"--{key}")
                self._config, self._stamp = config, stamp
                self.generation += 1
            base = self._config
        return Config(dict(base.values), dict(base.sources), base.path)


class Session:
    """One client connection: agent, budget session, client name; builds a Context per call."""

    __slots__ = ("server", "agent", "session", "client_name", "label", "interface", "run",
                 "iteration", "coordinator", "mcp_session", "log_level", "calls", "_store",
                 "_busy", "_busy_lock", "sampled_model")

    def __init__(self, server: ServerState, agent: str, session: str,
                 client_name: str | None = None, label: str = "",
                 interface: str = "mcp-stdio", run: str | None = None,
                 iteration: int | None = None, coordinator: bool = False) -> None:
        validate_agent(agent)
        self.server = server
        self.run = run  # the run this connection works in (checked by whoever made it)
        self.iteration = iteration
        self.coordinator = coordinator
        # the SDK's session object of its latest request, whose standalone channel carries
        # notifications that belong to no request (scratch.mcp.serve.events)
        self.mcp_session: object | None = None
        self.log_level = "debug"  # the least severe level the client asked to be sent
        self.calls = 0  # tool calls made: a session that made none has nothing to finish
        # the model the client last answered a sampling request with (scratch.mcp.serve.sampling)
        self.sampled_model: str | None = None
        self.interface = interface  # as the call ledger names it: mcp-stdio, mcp-http, proxy
        self.agent = agent
        self.session = session
        self.client_name = client_name
        self.label = label  # for the request log: "stdio", or the token's id
        self._store: tuple[int, Store] | None = None  # (config generation, the agent's store)
        # calls in flight (Contexts handed out and still alive): the kept store's pinned
        # content files are trimmed (to the KEPT_PINS most recently read) only when none is,
        # so a warm server does not keep one descriptor per entry ever read
        self._busy = 0
        self._busy_lock = threading.Lock()

    def context(self) -> Context:
        configs = self.server.configs
        config = configs.get()
        if config.sources.get("model") == "default":
            model = model_for_client(self.client_name)
            if model:
                config.set_override("model", model, f"client {self.client_name}")
        # a coordinator has no scratchpad: no store of its agent's is opened for it
        store = None if self.coordinator else self._opened(configs.generation, config)
        ctx = Context(root=self.server.root, root_source=self.server.root_source,
                      agent=self.agent, session=self.session, config=config, store=store,
                      interface=self.interface, run=self.run, iteration=self.iteration,
                      coordinator=self.coordinator)
        with self._busy_lock:
            if self._busy == 0 and store is not None:
                store.trim_pins(KEPT_PINS)
            self._busy += 1
        weakref.finalize(ctx, self._call_ended)
        self.server.warm(ctx)
        return ctx

    def _call_ended(self) -> None:
        with self._busy_lock:
            self._busy -= 1

    def _opened(self, generation: int, config: Config) -> Store | None:
        """The agent's store, opened once per configuration (a Store holds no state of its
        own); a change another process left half done is still undone before each call."""
        kept = self._store
        if kept is not None and kept[0] == generation:
            kept[1].recover_if_interrupted()
            return kept[1]
        from scratch.store import Store
        if not (self.server.root / ".git").exists():
            return None  # the call decides whether to create the store
        store = Store.open(self.server.root, self.agent, config)
        self._store = (generation, store)
        return store

    def rendering(self) -> ToolText:
        """How this session's tool results show answers (and so how they are priced)."""
        agent = self.agent
        kind = ToolJson if self.server.structured else ToolText
        return kind(link=lambda result: ingest_link(agent, result))


class UsageHub(Protocol):
    """What the state holds of the usage events sent to clients: the server makes it
    (:class:`scratch.mcp.serve.events.EventHub`, which reads the state and its sessions)."""

    def finish(self, session: Session, reason: str) -> UsageEvent | None: ...

    async def deliver(self, origin: Session | None = None, request: object | None = None
                      ) -> None: ...

    def finish_all(self, reason: str) -> None: ...


class ServerState:
    """What one ``scratch mcp serve`` process holds: the store, its settings, the sessions."""

    def __init__(self, *, store: str | None = None, agent: str | None = None,
                 session: str | None = None, model: str | None = None,
                 encoding: str | None = None, structured: bool = False,
                 run: str | None = None, iteration: int | None = None,
                 coordinator: bool = False) -> None:
        self.root, self.root_source = find_store_root(store)
        # the run of the stdio connection, and of HTTP ones whose token names none (checked
        # by the command that starts the server); its iteration None: the latest, per session
        self.run, self.iteration, self.coordinator = run, iteration, coordinator
        self.structured = structured  # answers as structuredContent too (see mcp.rendering)
        self.agent = agent or os.environ.get("SCRATCH_AGENT") or DEFAULT_AGENT
        validate_agent(self.agent)
        self.shared_session = session or os.environ.get("SCRATCH_SESSION") or None
        if self.shared_session:
            validate_agent(self.shared_session)
        self.configs = ConfigCache(self.root, {"model": model, "encoding": encoding})
        from scratch.tokens.budget import keep_states
        keep_states(True)  # budgets sized on the state last seen, checked at the charge
        self.proxy = False  # serving `scratch mcp proxy`: its calls are the ledger's "proxy"
        self.hub: UsageHub | None = None  # usage events to clients (made by the server)
        self._sessions: dict[tuple[str, ConnectionKey], Session] = {}
        self._lock = threading.Lock()
        self._warm: set[str] = set()

    def session_name(self) -> str:
        return self.shared_session or f"mcp-{secrets.token_hex(8)}"

    def session_for(self, key: ConnectionKey, agent: str, client_name: str | None,
                    label: str, run: tuple[str | None, int | None, bool] | None = None
                    ) -> Session:
        """The session of connection ``key`` (made on first use). ``key`` includes the agent,
        so no two agents ever share one. ``run``: (run, iteration, coordinator) of the
        connection (None: the server's)."""
        full = (agent, key)
        with self._lock:
            found = self._sessions.get(full)
            if found is None:
                interface = ("proxy" if self.proxy else
                             "mcp-http" if key[:1] == ("http",) else "mcp-stdio")
                in_run, iteration, coordinator = run or (self.run, self.iteration,
                                                         self.coordinator)
                if in_run is not None and iteration is None:  # the run's latest, now
                    from scratch.runs import latest_iteration
                    iteration = latest_iteration(self.root, in_run)
                found = Session(self, agent, self.session_name(), client_name, label,
                                interface, in_run, iteration, coordinator)
                self._sessions[full] = found
            elif client_name and not found.client_name:
                found.client_name = client_name
            return found

    def forget(self, key: ConnectionKey, agent: str) -> Session | None:
        with self._lock:
            return self._sessions.pop((agent, key), None)

    def sessions(self) -> list[tuple[ConnectionKey, Session]]:
        """Every session open now, with its connection's key."""
        with self._lock:
            return [(key, found) for (_agent, key), found in self._sessions.items()]

    def forget_all(self) -> list[Session]:
        with self._lock:
            gone = list(self._sessions.values())
            self._sessions.clear()
        return gone

    def warm(self, ctx: Context) -> None:
        """Load the tokenizer that prices ``ctx``'s answers with its native counter, once.

        A cold command counts small answers in pure Python, because loading the native
        counter costs more than the count; a warm server pays that load once, and from then on
        every count (the envelope of each answer, counted twice) takes microseconds.
        """
        try:
            base = ctx.encoding().base
        except Exception:  # a bad setting: the call itself reports it, with its message
            return
        if base in self._warm:
            return
        from scratch.tokens import get_tokenizer
        tokenizer = get_tokenizer(base)
        fast = getattr(tokenizer, "fast_counter", None)
        if fast is not None:
            fast()
        tokenizer.count("warm")
        self._warm.add(base)

    def warm_up(self) -> None:
        """Load the configured model's tokenizer now, not on the first call."""
        Session(self, self.agent, "warmup").context()
