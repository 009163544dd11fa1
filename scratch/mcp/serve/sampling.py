"""The client's own model, asked through MCP sampling, for ``summarize`` with ``by_model``.

Invariants:
- The client is asked only when it declared the ``sampling`` capability (checked on each
  call, from what the connection declared: no list of clients), and only for a
  ``summarize`` call with ``by_model``; otherwise :func:`offered_model` says why not and the
  summary comes from elsewhere (llm, or the local one).
- A connection that began with ``initialize`` (protocol 2025-11-25 and older) is asked over
  its back-channel (:class:`BackChannelModel`): the tool call's worker thread waits while the
  event loop sends ``sampling/createMessage`` requests, all parts at once, each held to
  ``summarize.sampling_timeout`` seconds. The client's refusal is ``sampling_refused`` and no
  answer in time ``sampling_timeout``; nothing is cached then.
- A 2026-07-28 connection has no back-channel: the call answers ``InputRequiredResult`` with
  the requests it needs (:class:`RoundModel`) and the client calls again with the answers,
  which come back in ``requestState`` (a string the client returns as it was given; only
  answers of the client's model are kept in it, so one it altered is no worse than a model
  that answered so). A part round, then a combining round: a summary takes at most three
  calls of the tool. A client that refuses or never answers there ends the exchange on its
  own side (its SDK reports the refusal to its caller); the server keeps nothing of it.
- The model a client reports is remembered per session: the cache is looked up under it
  next time (first time: under the ``model`` setting, which is also sent as the hint).
"""

from __future__ import annotations

import asyncio
import hashlib
import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import mcp_types as types
from mcp.shared.exceptions import MCPError

from scratch.answers.model_summary import Prompt, Unavailable, Written
from scratch.errors import ScratchError
from scratch.mcp.wire import JSON

if TYPE_CHECKING:
    from scratch.mcp.serve.session import Session
    from scratch.mcp.wire import Ctx

MAX_STATE_BYTES = 1 << 20  # the answers a client may hand back in requestState
NO_SAMPLING = "no_summary_model"


def asks_model(command: str, arguments: JSON) -> bool:
    """Whether a tool call asks for a model's summary."""
    return (command == "summarize" and isinstance(arguments, dict)
            and arguments.get("by_model") is True)


def _hint(session: Session) -> str | None:
    model = session.server.configs.get()["model"]
    return str(model) if model else None


class _Model:
    source = "sampling"

    def __init__(self, session: Session) -> None:
        self.session = session
        self.hint = _hint(session)

    def expected_model(self) -> str | None:
        return self.session.sampled_model or self.hint

    def _request(self, prompt: Prompt) -> types.CreateMessageRequestParams:
        hints = ([types.ModelHint(name=self.hint)] if self.hint else None)
        return types.CreateMessageRequestParams(
            messages=[types.SamplingMessage(role="user", content=types.TextContent(
                type="text", text=prompt.text))],
            system_prompt=prompt.system, max_tokens=prompt.max_tokens,
            include_context="none", temperature=0.0,
            model_preferences=types.ModelPreferences(hints=hints, intelligence_priority=0.5,
                                                     speed_priority=0.5,
                                                     cost_priority=0.5))

    def _written(self, result: object) -> Written:
        content = getattr(result, "content", None)
        model = getattr(result, "model", None)
        if not isinstance(content, types.TextContent) or not isinstance(model, str):
            raise ScratchError("the client's model answered with no text "
                               f"({type(content).__name__})", code="sampling_failed")
        self.session.sampled_model = model
        return Written(content.text, model)


def _key(prompt: Prompt) -> str:
    text = f"{prompt.max_tokens}\0{prompt.system}\0{prompt.text}"
    return hashlib.sha256(text.encode()).hexdigest()[:24]


class BackChannelModel(_Model):
    """Asks over the connection's back-channel (a connection that began with initialize)."""

    def __init__(self, ctx: Ctx, session: Session, loop: asyncio.AbstractEventLoop,
                 timeout: float) -> None:
        super().__init__(session)
        self.sdk_session = ctx.session
        self.request_id = ctx.request_id
        self.loop = loop
        self.timeout = timeout

    def __repr__(self) -> str:
        return "BackChannelModel()"

    def write(self, prompts: Sequence[Prompt]) -> list[Written]:
        """Every prompt asked at once; this (worker) thread waits for all of them."""
        done = asyncio.run_coroutine_threadsafe(self._all(prompts), self.loop)
        return done.result()

    async def _all(self, prompts: Sequence[Prompt]) -> list[Written]:
        tasks = [asyncio.ensure_future(self._one(p)) for p in prompts]
        try:
            return list(await asyncio.gather(*tasks))
        finally:
            for task in tasks:  # the first failure ends the others: nothing of them is kept
                task.cancel()

    async def _one(self, prompt: Prompt) -> Written:
        from mcp.shared.exceptions import NoBackChannelError
        params = self._request(prompt)
        try:
            with warnings.catch_warnings():  # deprecated by 2026-07-28, which asks otherwise
                warnings.simplefilter("ignore")
                asked = self.sdk_session.create_message(
                    params.messages, max_tokens=params.max_tokens,
                    system_prompt=params.system_prompt, include_context=params.include_context,
                    temperature=params.temperature, model_preferences=params.model_preferences,
                    related_request_id=self.request_id)
            async with asyncio.timeout(self.timeout):
                result = await asked
        except TimeoutError:
            raise ScratchError(
                f"the client's model did not answer within {self.timeout:g} s "
                "(summarize.sampling_timeout)", code="sampling_timeout",
                timeout=self.timeout) from None
        except NoBackChannelError:
            raise ScratchError("this connection cannot carry the server's sampling requests",
                               code="sampling_unavailable") from None
        except MCPError as exc:
            raise ScratchError(f"the client refused to sample: {exc.message}",
                               code="sampling_refused", client_code=exc.code) from None
        return self._written(result)


class InputRequired(ScratchError):
    """The answers a 2026-07-28 call still needs from the client's model."""

    code = "input_required"


class RoundModel(_Model):
    """Asks a 2026-07-28 client: answers from its retries, requests for the rest."""

    def __init__(self, session: Session, params: types.CallToolRequestParams) -> None:
        super().__init__(session)
        self.answers: dict[str, Written] = _state(params.request_state)
        for key, response in (params.input_responses or {}).items():
            if isinstance(response, types.CreateMessageResult):
                self.answers[key] = self._written(response)
        self.pending: dict[str, Prompt] = {}

    def __repr__(self) -> str:
        return "RoundModel()"

    def write(self, prompts: Sequence[Prompt]) -> list[Written]:
        missing = {_key(p): p for p in prompts if _key(p) not in self.answers}
        if missing:
            self.pending = missing
            raise InputRequired(f"{len(missing)} answers of the client's model are needed",
                                asked=len(missing))
        return [self.answers[_key(p)] for p in prompts]

    def input_required(self) -> types.InputRequiredResult:
        """The requests still to be answered, with the answers so far as the state."""
        import orjson
        state = orjson.dumps({k: [w.text, w.model] for k, w in self.answers.items()})
        return types.InputRequiredResult(
            input_requests={k: types.CreateMessageRequest(params=self._request(p))
                            for k, p in self.pending.items()},
            request_state=state.decode(), result_type="input_required")


def _state(state: str | None) -> dict[str, Written]:
    """The answers a client handed back in ``requestState`` (anything else: none)."""
    if not state or len(state) > MAX_STATE_BYTES:
        return {}
    import orjson
    try:
        found = orjson.loads(state)
    except orjson.JSONDecodeError:
        return {}
    out = {}
    if isinstance(found, Mapping):
        for key, value in found.items():
            if (isinstance(key, str) and isinstance(value, list) and len(value) == 2
                    and all(isinstance(v, str) for v in value)):
                out[key] = Written(value[0], value[1])
    return out


def offered_model(ctx: Ctx, session: Session, params: types.CallToolRequestParams
                  ) -> BackChannelModel | RoundModel | Unavailable:
    """The client's model for this call, or why there is none."""
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS
    declared = ctx.session.check_client_capability(
        types.ClientCapabilities(sampling=types.SamplingCapability()))
    if not declared:
        name = session.client_name or "the client"
        return Unavailable(NO_SAMPLING, f"{name} did not declare the sampling capability, so "
                           "scratch cannot ask its model",
                           "use a client that supports MCP sampling, or configure a model for "
                           "the server's llm library (summarize.llm_model)")
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return RoundModel(session, params)
    timeout = float(session.server.configs.get()["summarize.sampling_timeout"])
    return BackChannelModel(ctx, session, asyncio.get_running_loop(), timeout)
