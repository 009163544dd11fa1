"""summarize --by-model: a summary written by a model, cached per version and model.

Through the real llm library with its own debug model plugin (llm-echo: the model ``echo``
answers with the prompt it was given, as JSON; ``echo-needs-key`` needs a key), and through
MCP sampling with the SDK client's real sampling callback, over a connection that began with
initialize (the back-channel) and over a 2026-07-28 one (InputRequiredResult rounds). Nothing
is sent to a model without the option; no model, a refusal and a timeout each say so.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import cli

SAMPLE = Path(__file__).resolve().parents[1] / "scratch" / "samples" / "pods.json"


def five_pods() -> bytes:
    """The sample's first five pods (5,227 o200k_base tokens and a newline, 730 lines)."""
    doc = json.loads(SAMPLE.read_text())
    doc["items"] = doc["items"][:5]
    return (json.dumps(doc, indent=2) + "\n").encode()


@pytest.fixture
def llm_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """llm's own settings in a temporary folder: no key, no default model of the user's."""
    pytest.importorskip("llm_echo", reason="llm and llm-echo are test extras")
    home = tmp_path / "llm"
    home.mkdir()
    monkeypatch.setenv("LLM_USER_PATH", str(home))
    for var in ("OPENAI_API_KEY", "LLM_ECHO_NEEDS_KEY_KEY", "LLM_MODEL"):
        monkeypatch.delenv(var, raising=False)
    return home


def model_caches(home: Path) -> list[str]:
    folder = home / "cache" / "summaries"
    return sorted(p.name for p in folder.iterdir() if "-model-" in p.name) \
        if folder.is_dir() else []


# -- llm ------------------------------------------------------------------------------------


def test_llm_echo_summarizes_in_parts_then_combines(scratch_home: Path, llm_home: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    assert cli("write", "pods", input=five_pods()).code == 0
    # echo's window, as the budget's table gives it: 3,000 tokens hold (3000-1000-400)*0.85
    # = 1,360 tokens of content a call, so 5,227 tokens are four parts and one combining call
    (scratch_home / "scratch.toml").write_text("[budget.windows]\necho = 3000\n")
    monkeypatch.setenv("SCRATCH_SUMMARIZE_LLM_MODEL", "echo")
    r = cli("summarize", "pods", "--by-model", "--json")
    assert r.code == 0, r.out
    data = r.json["data"]
    assert {k: data[k] for k in ("mode", "model", "source", "model_calls", "parts",
                                 "lines_read", "lines", "complete", "cached")} == {
        "mode": "model", "model": "echo", "source": "llm", "model_calls": 5, "parts": 4,
        "lines_read": [1, 730], "lines": 730, "complete": True, "cached": False}
    echoed = json.loads(data["summary"])  # echo answers with the prompt it got: the last one
    assert echoed["prompt"].startswith(
        "Stored output 'pods': json, 730 lines, 5,227 tokens.\nBelow are summaries of its "
        "parts (lines 1-730). Combine them into one summary of at most 750 words.")
    heads = [line for line in echoed["prompt"].splitlines() if line.startswith("[part ")]
    assert len(heads) == 4 and heads[0].startswith("[part 1, lines 1-")
    assert heads[-1].endswith("-730]")
    assert echoed["system"].startswith("You summarize a stored tool output")
    assert r.json["meta"]["tokens"]["count"] > 0  # priced like every answer
    assert len(model_caches(scratch_home)) == 1
    again = cli("summarize", "pods", "--by-model", "--json").json["data"]
    assert again["cached"] is True and again["summary"] == data["summary"]
    # a new version is summarized anew; the old one is still cached under its REF
    assert cli("write", "pods", input=five_pods().replace(b"Running", b"Runnin")).code == 0
    assert cli("summarize", "pods", "--by-model", "--json").json["data"]["cached"] is False
    assert cli("summarize", "pods@1", "--by-model", "--json").json["data"]["cached"] is True
    # the deterministic summary is its own, never the model's
    local = cli("summarize", "pods@1", "--json").json["data"]
    assert local["mode"] == "local" and "status.phase:" in local["summary"]


def test_llm_one_call_when_it_fits_and_partial_when_calls_run_out(
        scratch_home: Path, llm_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert cli("write", "pods", input=five_pods()).code == 0
    monkeypatch.setenv("SCRATCH_SUMMARIZE_LLM_MODEL", "echo")
    whole = cli("summarize", "pods", "--by-model", "--json").json["data"]
    assert (whole["model_calls"], whole["parts"], whole["complete"]) == (1, 1, True)
    assert json.loads(whole["summary"])["prompt"].startswith(
        "Stored output 'pods': json, 730 lines, 5,227 tokens.\nSummarize it in at most 750 "
        "words.\n\n{\n  \"apiVersion\": \"v1\",")
    # three calls at most: two parts and their combination, and the answer says what was read
    (scratch_home / "scratch.toml").write_text(
        "[budget.windows]\necho = 3000\n[summarize]\nmax_model_calls = 3\n")
    r = cli("summarize", "pods", "--by-model", "--json")
    data = r.json["data"]
    assert (data["model_calls"], data["parts"], data["complete"]) == (3, 2, False)
    last = data["lines_read"][1]
    assert data["lines_read"][0] == 1 and 1 < last < 730
    assert r.json["meta"]["warnings"] == [
        f"the model read lines 1-{last:,} of 730: summarize.max_model_calls allows no more "
        "parts"]
    human = cli("summarize", "pods", "--by-model")
    assert human.text.startswith(
        f"pods: summary by echo (llm, 3 model calls; read lines 1-{last:,} of 730)\n")


def test_no_model_configured_gives_the_local_summary_and_the_next_step(
        scratch_home: Path, llm_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert cli("write", "pods", input=five_pods()).code == 0
    monkeypatch.setenv("SCRATCH_SUMMARIZE_LLM_MODEL", "echo-needs-key")
    r = cli("summarize", "pods", "--by-model", "--json")
    assert r.code == 0
    data = r.json["data"]
    assert data["mode"] == "local" and "status.phase:" in data["summary"]
    assert data["no_model"] == [{
        "code": "no_summary_model",
        "reason": "summarize.llm_model 'echo-needs-key' needs a key ('echo-needs-key') and "
                  "none is set",
        "next": "llm keys set echo-needs-key, or choose a model that needs none (llm models "
                "default MODEL, or summarize.llm_model)"}]
    human = cli("summarize", "pods", "--by-model")
    assert human.code == 0
    assert ("warning: no_summary_model: no model summary: summarize.llm_model "
            "'echo-needs-key' needs a key") in human.err
    assert model_caches(scratch_home) == []
    # with its key the same model answers (llm hands the key to it)
    monkeypatch.setenv("LLM_ECHO_NEEDS_KEY_KEY", "k-123")
    keyed = cli("summarize", "pods", "--by-model", "--json").json["data"]
    assert keyed["model"] == "echo-needs-key" and json.loads(keyed["summary"])["key"] == "k-123"
    monkeypatch.setenv("SCRATCH_SUMMARIZE_LLM_MODEL", "no-such-model")
    unknown = cli("summarize", "pods", "--by-model", "--json").json["data"]
    assert unknown["mode"] == "local"
    assert unknown["no_model"][0]["reason"] == \
        "llm knows no model 'no-such-model' (summarize.llm_model)"


def test_without_the_llm_library_the_reason_says_how_to_install_it(
        scratch_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert cli("write", "pods", input=five_pods()).code == 0
    monkeypatch.setitem(sys.modules, "llm", None)  # what an install without the extra has
    data = cli("summarize", "pods", "--by-model", "--json").json["data"]
    assert data["mode"] == "local"
    assert data["no_model"] == [{
        "code": "no_summary_model",
        "reason": "the llm library is not installed and no MCP client offered its model "
                  "(sampling)",
        "next": "pip install 'scratch-mcp[llm]' (or pipx inject scratch-mcp llm), then llm "
                "models default MODEL"}]


# -- MCP sampling ---------------------------------------------------------------------------


class Sampler:
    """The client's side: the SDK's sampling callback, answering as a model would, refusing
    (``answer = "refuse"``) or waiting until the test releases it (``"wait"``)."""

    def __init__(self) -> None:
        self.answer = "ok"
        self.asked: list[Any] = []
        self.release: Any = None  # an anyio.Event the "wait" answer waits for

    async def __call__(self, context: Any, params: Any) -> Any:
        import mcp_types as types
        self.asked.append(params)
        if self.answer == "refuse":
            return types.ErrorData(code=-1, message="the user declined")
        if self.answer == "wait":
            await self.release.wait()
        text = params.messages[0].content.text
        return types.CreateMessageResult(
            role="assistant", model="test-model", content=types.TextContent(
                type="text", text=f"{len(self.asked)}: {text.splitlines()[1][:40]}"))


class Served:
    """One store and its servers for this module's MCP tests (a server starts slowly on a
    busy machine): a client per protocol era, each with its own sampler."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.clients: dict[str, Any] = {}
        self.samplers: dict[str, Sampler] = {}
        self.entries = 0

    def client(self, mode: str) -> tuple[Any, Sampler]:
        """``legacy``: began with initialize; ``auto``: 2026-07-28; ``none``: declares no
        sampling. The server's llm has no model: a summary is the client's or the local one;
        the server waits one second for a sampling answer."""
        if mode not in self.clients:
            from tests.mcp_support import server_env, stdio_client
            sampler = Sampler()
            kwargs: dict[str, Any] = {"mode": "legacy" if mode == "none" else mode}
            if mode != "none":
                kwargs["sampling_callback"] = sampler
            env = server_env(self.home, LLM_USER_PATH=str(self.home.parent / "llm"),
                             SCRATCH_SUMMARIZE_LLM_MODEL="echo-needs-key",
                             SCRATCH_SUMMARIZE_SAMPLING_TIMEOUT="1")
            env.pop("LLM_ECHO_NEEDS_KEY_KEY", None)
            self.clients[mode] = stdio_client(self.home, env=env, **kwargs)
            self.samplers[mode] = sampler
        sampler = self.samplers[mode]
        sampler.answer, sampler.asked = "ok", []
        return self.clients[mode], sampler

    def entry(self) -> str:
        """A new entry holding the five pods, its own content (a model summary is kept per
        content, so no test finds another's)."""
        self.entries += 1
        name = f"pods{self.entries}"
        content = five_pods().replace(b'"v1"', f'"v{self.entries}"'.encode(), 1)
        assert cli("write", name, input=content, env={"SCRATCH_HOME": str(self.home)}
                   ).code == 0
        return name

    def model_caches(self) -> list[str]:
        return model_caches(self.home)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Any:
    pytest.importorskip("mcp")
    home = tmp_path_factory.mktemp("sampling") / "store"
    home.mkdir()
    # the agent's model is test-model, with a 3,000-token window: four parts, one combination
    (home / "scratch.toml").write_text(
        'model = "test-model"\n[budget.windows]\ntest-model = 3000\n')
    found = Served(home)
    yield found
    for client in found.clients.values():
        client.close()


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_sampling_asks_the_clients_model_in_parts_and_caches(served: Served,
                                                             mode: str) -> None:
    client, sampler = served.client(mode)
    pods = served.entry()
    local = client.call("summarize", {"file": pods})
    assert not local.is_error and sampler.asked == []  # nothing sent without by_model
    before = served.model_caches()
    r = client.call("summarize", {"file": pods, "by_model": True})
    assert not r.is_error, r.content[0].text
    text = r.content[0].text
    assert text.startswith(f"{pods}: summary by test-model (sampling, 5 model calls)\n5: ")
    assert len(sampler.asked) == 5
    parts, combine = sampler.asked[:4], sampler.asked[4]
    assert [p.messages[0].content.text.splitlines()[1].split(" (")[0] for p in parts] == [
        f"This is part {i} of 4" for i in range(1, 5)]
    assert all(p.model_preferences.hints[0].name == "test-model" for p in sampler.asked)
    assert all(p.system_prompt.startswith("You summarize") for p in sampler.asked)
    assert all(p.include_context == "none" for p in sampler.asked)
    assert "Combine them into one summary" in combine.messages[0].content.text
    assert combine.max_tokens == 1000 and parts[0].max_tokens == 400  # (3000-1400)/4
    again = client.call("summarize", {"file": pods, "by_model": True})
    assert again.content[0].text == text and len(sampler.asked) == 5  # from the cache
    assert len(served.model_caches()) == len(before) + 1
    calls = [json.loads(line) for line in
             (served.home / "state" / "agents" / "default" / "calls.jsonl").read_text()
             .splitlines()]
    asked = [c for c in calls if c["command"] == "summarize" and c.get("entry") == pods]
    assert asked[-1]["outcome"] == "ok" and asked[-1]["tokens"] > 0


def test_sampling_refused_stores_nothing_and_says_what_to_do(served: Served) -> None:
    client, sampler = served.client("legacy")
    sampler.answer = "refuse"
    pods = served.entry()
    before = served.model_caches()
    r = client.call("summarize", {"file": pods, "by_model": True})
    assert r.is_error
    error = json.loads(r.content[0].text)
    assert error["code"] == "sampling_refused"
    assert error["message"] == "the client refused to sample: the user declined"
    assert error["suggestions"] == [{"name": "summarize", "arguments": {"file": pods}}]
    assert served.model_caches() == before


def test_sampling_timeout_stores_nothing(served: Served) -> None:
    import anyio
    client, sampler = served.client("legacy")
    sampler.answer = "wait"
    sampler.release = client.portal.call(anyio.Event)
    pods = served.entry()
    before = served.model_caches()
    # the callback answers only once released, which is after the server gave up (1 s)
    r = client.call("summarize", {"file": pods, "by_model": True})
    client.portal.call(sampler.release.set)
    error = json.loads(r.content[0].text)
    assert r.is_error and error["code"] == "sampling_timeout"
    assert error["message"] == ("the client's model did not answer within 1 s "
                                "(summarize.sampling_timeout)")
    assert error["suggestions"] == [{"name": "summarize", "arguments": {"file": pods}}]
    assert len(sampler.asked) == 4  # every part was asked at once
    assert served.model_caches() == before


def test_sampling_refused_on_a_2026_connection_ends_on_the_clients_side(
        served: Served) -> None:
    from mcp.shared.exceptions import MCPError
    client, sampler = served.client("auto")
    sampler.answer = "refuse"
    pods = served.entry()
    before = served.model_caches()
    with pytest.raises(MCPError, match="the user declined"):
        client.call("summarize", {"file": pods, "by_model": True})
    assert served.model_caches() == before


def test_a_client_without_sampling_gets_the_local_summary_and_why(served: Served) -> None:
    client, _ = served.client("none")
    pods = served.entry()
    r = client.call("summarize", {"file": pods, "by_model": True})
    assert not r.is_error
    assert r.content[0].text.startswith(f"{pods}: json, ")  # the local summary
    notes = r.content[1].text
    assert ("no_summary_model: no model summary: mcp did not declare the sampling "
            "capability, so scratch cannot ask its model") in notes
    assert "summarize.llm_model 'echo-needs-key' needs a key" in notes
