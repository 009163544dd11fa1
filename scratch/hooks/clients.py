"""What each client's hook payload holds, and the answer that replaces a tool's result there.

One :class:`HookClient` per client whose hooks can replace a tool's result (``hook_clients``):

- Claude Code (``PostToolUse``): ``tool_response`` has the tool's own shape (Bash
  ``{stdout, stderr, interrupted, isImage, ...}``; a Bash output over about 30,000 characters
  arrives cut, the whole of it in the file ``persistedOutputPath``; Read ``{type: "text",
  file: {content, ...}}``; WebFetch ``{result, ...}``; Grep ``{content, ...}`` in content
  mode; an MCP tool its content blocks). The answer is ``hookSpecificOutput.updatedToolOutput``
  in the same shape (v2.1.121 and later, every tool), and for an MCP tool also
  ``updatedMCPToolOutput`` (what older versions read). A call that failed never reaches
  ``PostToolUse`` (Claude Code sends it to ``PostToolUseFailure``), so an error cannot vanish.
- Gemini CLI (``AfterTool``): ``tool_response`` is ``{llmContent, returnDisplay, error}``; the
  only documented replacement is ``decision: "deny"`` with a ``reason`` that replaces the
  result the model reads (it reads it as a blocked call, so the reason says the call worked).
- Cursor (``postToolUse``): ``tool_output`` is the result as a JSON string; only an MCP tool's
  result can be replaced (``updated_mcp_tool_output``); a Shell result cannot.
- Codex (``PreToolUse``): no hook can replace a result (openai/codex#38135), so scratch answers
  before a Bash command instead: ``hookSpecificOutput.additionalContext`` (Codex 0.129 and
  later, openai/codex PR 20692) tells the model to run a usually big command under ``scratch
  run`` (:mod:`scratch.hooks.hint`); ``found`` is never asked.

Only the standard library: this runs on every tool call (see :mod:`scratch.hooks.run`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:  # not imported at run time: the pass-through path imports only what it runs
    from scratch.jsonvalues import Incoming

JSONObject: TypeAlias = "dict[str, Incoming]"  # a payload as the client sent it: checked where read

# what the model is told when a client can only show a replacement as a blocked call
GEMINI_LEAD = ("scratch stored this tool's output (the call succeeded; this is not an "
               "error). Explore it with the commands below.\n")


class Found:
    """The result a payload carries, as scratch stores it. (A plain class: importing
    dataclasses would cost every tool call more than the rest of the pass-through.)"""

    __slots__ = ("tool", "text", "path", "mcp", "partial", "stderr", "info")

    def __init__(self, tool: str, *, text: str | None = None, path: str | None = None,
                 mcp: JSONObject | None = None, partial: bool = False, stderr: str = "",
                 info: JSONObject | None = None) -> None:
        self.tool = tool  # the client's tool name (thresholds match on it)
        self.text = text  # the text to store, when the payload holds it
        self.path = path  # a file holding the whole of it (Claude Code's spill file)
        self.mcp = mcp  # an MCP tool result, read as the proxy reads one
        self.partial = partial  # the tool was interrupted: what came is stored, said partial
        self.stderr = stderr  # Bash: shown beside the pointer, never stored instead of it
        self.info = info or {}  # where it came from (command, file, URL)

    def size(self) -> int:
        """Bytes of UTF-8 the stored text has at least (exact for text and files; for an
        MCP result its text blocks, plus the JSON of ``structuredContent``)."""
        if self.path is not None:
            return os.stat(self.path).st_size
        if self.text is not None:
            return utf8_len(self.text)
        assert self.mcp is not None
        size = 0
        for block in self.mcp.get("content") or ():
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                size += utf8_len(block["text"])
            elif isinstance(block, dict) and isinstance(block.get("data"), str):
                size += len(block["data"]) // 4  # base64 handed to a model: ~4 a token
        structured = self.mcp.get("structuredContent")
        if structured is not None:
            import json
            size = max(size, len(json.dumps(structured)))
        return size


UTF8_STEP = 1 << 20  # characters encoded at a time when a length or a stream needs bytes


def utf8_len(text: str) -> int:
    """Bytes of ``text`` in UTF-8, without an encoded copy of the whole of it (an ASCII str,
    which the interpreter flags, is its own length; else it is encoded a slice at a time)."""
    if text.isascii():
        return len(text)
    return sum(len(text[i:i + UTF8_STEP].encode("utf-8", errors="surrogatepass"))
               for i in range(0, len(text), UTF8_STEP))


def _blocks(value: Incoming) -> list[Incoming] | None:
    """A list of MCP content blocks, or None when ``value`` is not one."""
    if isinstance(value, list) and all(isinstance(b, dict) and isinstance(b.get("type"), str)
                                       for b in value):
        return value
    return None


def mcp_result(value: Incoming) -> JSONObject | None:
    """An MCP tool result (``{"content": [...], ...}``) however a client hands one on: the
    result itself, its bare content blocks, or one string."""
    if isinstance(value, str):
        return {"content": [{"type": "text", "text": value}]}
    blocks = _blocks(value)
    if blocks is not None:
        return {"content": blocks}
    if isinstance(value, dict) and _blocks(value.get("content")) is not None:
        return value
    return None


def mcp_replacement(original: Incoming, pointer: str) -> Incoming:
    """An MCP result with its text replaced by ``pointer`` in the shape it came in: images,
    audio and resource links pass through; ``structuredContent`` goes (a pointer cannot
    conform to the tool's output schema); ``isError`` and ``_meta`` stay."""
    if isinstance(original, str):
        return pointer
    keep = [b for b in (original if isinstance(original, list) else original["content"])
            if b.get("type") in ("image", "audio", "resource_link")]
    blocks = [{"type": "text", "text": pointer}, *keep]
    if isinstance(original, list):
        return blocks
    out = {k: v for k, v in original.items() if k not in ("content", "structuredContent")}
    return {"content": blocks, **out}


class HookClient:
    """One client: its name, the hook event scratch answers, how to read its payload and how
    to answer with a replacement."""

    name = ""
    label = ""
    event = ""
    agent = ""  # the scratch agent its captures go to unless the hook names one
    hint = False  # answers before a tool runs with a hint (scratch.hooks.hint), stores nothing
    note = ""  # a hint's words on what the client does with a big output

    def found(self, payload: JSONObject) -> Found | None:
        """What the payload's tool returned, when it is a result scratch may store."""
        raise NotImplementedError

    def answer(self, payload: JSONObject, found: Found, pointer: str,
               stderr: str | None = None) -> JSONObject:
        """The JSON that makes the client show ``pointer`` instead of the result."""
        raise NotImplementedError


class ClaudeCode(HookClient):
    name = "claude-code"
    label = "Claude Code"
    event = "PostToolUse"
    agent = "claude-code"
    SHELLS = ("Bash", "PowerShell")

    def found(self, payload: JSONObject) -> Found | None:
        tool = payload.get("tool_name")
        resp = payload.get("tool_response")
        if not isinstance(tool, str) or payload.get("hook_event_name", self.event) != self.event:
            return None
        raw_input = payload.get("tool_input")
        tin: JSONObject = raw_input if isinstance(raw_input, dict) else {}
        if tool.startswith("mcp__"):
            result = mcp_result(resp)
            if result is None or result.get("isError") is True:
                return None
            return Found(tool, mcp=result)
        if not isinstance(resp, dict):
            return Found(tool, text=resp) if isinstance(resp, str) else None
        if tool in self.SHELLS:
            if resp.get("isImage") or resp.get("backgroundTaskId") \
                    or not isinstance(resp.get("stdout"), str):
                return None
            info = {"command": str(tin.get("command", ""))[:2000]}
            raw_err = resp.get("stderr")
            stderr = raw_err if isinstance(raw_err, str) else ""
            spilled = resp.get("persistedOutputPath")
            if isinstance(spilled, str) and os.path.isfile(spilled):
                return Found(tool, path=spilled, partial=resp.get("interrupted") is True,
                             stderr=stderr, info=info)
            return Found(tool, text=resp["stdout"], partial=resp.get("interrupted") is True,
                         stderr=stderr, info=info)
        if tool == "Read":
            file = resp.get("file")
            if resp.get("type") == "text" and isinstance(file, dict) \
                    and isinstance(file.get("content"), str):
                return Found(tool, text=file["content"],
                             info={"file": str(file.get("filePath", ""))[:2000]})
            return None
        if tool == "WebFetch" and isinstance(resp.get("result"), str):
            return Found(tool, text=resp["result"], info={"url": str(resp.get("url", ""))[:2000]})
        if tool == "Grep" and isinstance(resp.get("content"), str):
            return Found(tool, text=resp["content"])
        return None

    def answer(self, payload: JSONObject, found: Found, pointer: str,
               stderr: str | None = None) -> JSONObject:
        resp: Incoming = payload.get("tool_response")
        replaced: Incoming
        if found.mcp is not None:
            replaced = mcp_replacement(resp, pointer)
            return {"hookSpecificOutput": {"hookEventName": self.event,
                                           "updatedToolOutput": replaced,
                                           "updatedMCPToolOutput": replaced}}
        if isinstance(resp, str):
            replaced = pointer
        elif found.tool in self.SHELLS:
            # the tool's own shape, its other fields as they came; the spill file's fields go,
            # or Claude Code would show a preview of that file instead of the pointer
            replaced = {k: v for k, v in resp.items()
                        if k not in ("persistedOutputPath", "persistedOutputSize")}
            replaced["stdout"] = pointer
            replaced["stderr"] = resp.get("stderr", "") if stderr is None else stderr
        elif found.tool == "Read":
            replaced = {**resp, "file": {**resp["file"], "content": pointer}}
        elif found.tool == "WebFetch":
            replaced = {**resp, "result": pointer}
        else:
            replaced = {**resp, "content": pointer}
        return {"hookSpecificOutput": {"hookEventName": self.event,
                                       "updatedToolOutput": replaced}}


class GeminiCli(HookClient):
    name = "gemini-cli"
    label = "Gemini CLI"
    event = "AfterTool"
    agent = "gemini-cli"

    def found(self, payload: JSONObject) -> Found | None:
        tool = payload.get("tool_name")
        resp = payload.get("tool_response")
        if not isinstance(tool, str) or not isinstance(resp, dict) or resp.get("error"):
            return None
        content = resp.get("llmContent")
        if isinstance(content, dict):
            content = [content]
        if isinstance(content, str):
            return Found(tool, text=content)
        if isinstance(content, list) and content:
            texts = [p if isinstance(p, str) else p.get("text") if isinstance(p, dict) else None
                     for p in content]
            if all(isinstance(t, str) for t in texts):  # parts with data pass through
                return Found(tool, text="\n".join(t for t in texts if isinstance(t, str)))
        return None

    def answer(self, payload: JSONObject, found: Found, pointer: str,
               stderr: str | None = None) -> JSONObject:
        return {"decision": "deny", "reason": GEMINI_LEAD + pointer}


class Cursor(HookClient):
    name = "cursor"
    label = "Cursor"
    event = "postToolUse"
    agent = "cursor"

    def found(self, payload: JSONObject) -> Found | None:
        tool = payload.get("tool_name")
        if not isinstance(tool, str) or not tool.startswith("MCP:"):
            return None  # only an MCP tool's result can be replaced
        raw = payload.get("tool_output")
        if isinstance(raw, str):
            import json
            try:
                raw = json.loads(raw)
            except ValueError:
                pass
        result = mcp_result(raw)
        if result is None or result.get("isError") is True:
            return None
        return Found(tool, mcp=result)

    def answer(self, payload: JSONObject, found: Found, pointer: str,
               stderr: str | None = None) -> JSONObject:
        assert found.mcp is not None
        return {"updated_mcp_tool_output": mcp_replacement(found.mcp, pointer)}


class Codex(HookClient):
    name = "codex"
    label = "Codex"
    event = "PreToolUse"
    agent = "codex"
    hint = True
    note = "Codex keeps only about 10 KiB of a command's output, cut from the middle"

    def found(self, payload: JSONObject) -> Found | None:
        return None  # nothing to store before the command runs

    def answer(self, payload: JSONObject, found: Found, pointer: str,
               stderr: str | None = None) -> JSONObject:
        return self.hinted(pointer)

    def hinted(self, text: str) -> JSONObject:
        """The answer that adds ``text`` to what the model reads before the command runs;
        never a decision (the command is not blocked)."""
        return {"hookSpecificOutput": {"hookEventName": self.event, "additionalContext": text}}


HOOK_CLIENTS: dict[str, HookClient] = {c.name: c for c in (ClaudeCode(), GeminiCli(), Cursor(),
                                                            Codex())}


def hook_client(name: str) -> HookClient | None:
    return HOOK_CLIENTS.get(name)


__all__ = ["HOOK_CLIENTS", "UTF8_STEP", "Codex", "Found", "HookClient", "hook_client",
           "mcp_replacement", "mcp_result", "utf8_len"]
