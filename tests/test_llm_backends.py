"""Every backend of the one LLM client against a scripted Messages API on 127.0.0.1: the
anthropic SDK backend, `messages-api` (how Ollama, llama-server and LM Studio are reached),
`auto` and `off`; structured output, the retry policy, metering and the daily cap."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from prometheus_client import generate_latest

from memoryd.base.clock import SYSTEM_CLOCK
from memoryd.base.errors import LLMUnavailable, TokenBudgetExceeded
from memoryd.base.metrics import Metrics
from memoryd.base.state_db import StateDB
from memoryd.config_sources import load_settings
from memoryd.llm import LLMClient, UsageMeter
from memoryd.llm.schemas import Extraction, RecallSelection
from tests.support.messages_api import Reply, ScriptedMessagesAPI


class World:
    """A home, a config.toml and the client the daemon would build from them."""

    def __init__(self, home: Path, api: ScriptedMessagesAPI) -> None:
        self.home = home
        self.api = api
        self.metrics = Metrics()
        self.meter = UsageMeter(StateDB(home / "state.db"), self.metrics, daily_cap=0, now=SYSTEM_CLOCK.now)
        self.slept: list[float] = []

    def client(self, config: str = "", **env: str) -> LLMClient:
        (self.home / "config.toml").write_text(config)
        settings = load_settings({"MEMORYD_HOME": str(self.home), "PATH": "", **env}, home=self.home)
        settings.llm.claude_path = str(self.home / "no-claude-here")  # `auto` must not find a real claude
        self.meter.daily_cap = settings.llm.daily_token_cap
        client = LLMClient.from_settings(settings, meter=self.meter)
        client._sleep = self.slept.append  # the backoff's clock, not its policy
        return client

    def anthropic(self) -> LLMClient:
        return self.client(ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=self.api.url)

    def local(self, extra: str = "") -> LLMClient:
        return self.client(f'[llm]\nbackend = "messages-api"\nbase_url = "{self.api.url}"\nmodel = "qwen3:8b"\n{extra}')


@pytest.fixture
def world(home: Path, messages_api: ScriptedMessagesAPI) -> Iterator[World]:
    yield World(home, messages_api)


MEMORY = {
    "name": "Package manager",
    "type": "project",
    "description": "The project uses pnpm (pnpm-lock.yaml)",
    "body": "pnpm.",
}


def test_anthropic_backend_asks_for_structured_output_through_a_tool(world: World) -> None:
    llm = world.anthropic()
    world.api.push(Reply(tool_input={"memories": [MEMORY]}, input_tokens=120, output_tokens=30))
    result = llm.complete(purpose="extract", system="extract memories", user="we moved to pnpm", schema=Extraction)
    assert isinstance(result.data, Extraction) and result.data.memories[0].description == MEMORY["description"]
    body, headers = world.api.requests[-1], world.api.headers[-1]
    assert body["tools"][0]["input_schema"]["required"] == ["memories"] and body["tool_choice"] == {
        "type": "tool",
        "name": body["tools"][0]["name"],
    }
    assert (
        "sk-ant-test" in headers.get("x-api-key", headers.get("authorization", ""))
        and body["system"] == "extract memories"
    )
    assert llm.status()["backend"] == "anthropic" and llm.status()["last_call"]["outcome"] == "ok"


def test_messages_api_backend_reaches_a_local_server_without_a_key(world: World) -> None:
    llm = world.local()
    assert llm.backend_name == "messages-api" and llm.model == "qwen3:8b"
    world.api.push(Reply(tool_input={"selected_memories": ["project_ci.md"]}))
    result = llm.complete(purpose="recall", system="pick", user="q", schema=RecallSelection, timeout=5)
    assert result.data.selected_memories == ["project_ci.md"] and result.backend == "messages-api"
    assert world.api.requests[-1]["model"] == "qwen3:8b"
    key = world.api.headers[-1].get("x-api-key", world.api.headers[-1].get("authorization", ""))
    assert key and "sk-ant" not in key  # a placeholder: local servers ignore it, the SDK needs one


def test_a_local_model_that_answers_in_text_is_still_understood(world: World) -> None:
    """Some local servers ignore tool_choice: the JSON in the text is validated the same way."""
    llm = world.local()
    world.api.push(
        Reply(text='Sure! ```json\n[{"name": "PM", "type": "project", "description": "pnpm", "body": ""}]\n```')
    )
    result = llm.complete(purpose="extract", system="s", user="u", schema=Extraction)
    assert [m.name for m in result.data.memories] == ["PM"]


def test_malformed_answer_is_asked_once_more_then_gives_up(world: World) -> None:
    llm = world.local()
    world.api.push(Reply(tool_input={"wrong": 1}), Reply(tool_input={"memories": [MEMORY]}))
    assert (
        llm.complete(purpose="extract", system="s", user="u", schema=Extraction).data.memories[0].name == MEMORY["name"]
    )
    world.api.push(Reply(tool_input={"wrong": 1}), Reply(text="no json here"), Reply(tool_input={"memories": []}))
    with pytest.raises(LLMUnavailable, match="twice without valid structured output"):
        llm.complete(purpose="extract", system="s", user="u", schema=Extraction)
    assert len(world.api.requests) == 4 and llm.status()["last_call"]["outcome"] == "malformed"


def test_background_work_retries_429_and_529_honouring_retry_after(world: World) -> None:
    llm = world.anthropic()
    world.api.push(Reply(status=429, headers={"retry-after": "7"}), Reply(status=529), Reply(text="fine"))
    assert llm.complete(purpose="extract", system="s", user="u").text == "fine"
    assert len(world.api.requests) == 3
    assert world.slept[0] == 7.0 and 0 < world.slept[1] <= 2.0  # the server's wait, then backoff
    usage = world.meter.summary()["by_backend"]["anthropic"]["extract"]
    assert usage["calls"] == 3 and usage["failures"] == 2


def test_retries_stop_after_the_configured_count_and_say_so(world: World) -> None:
    llm = world.client("[llm]\nretries = 1\n", ANTHROPIC_API_KEY="k", ANTHROPIC_BASE_URL=world.api.url)
    world.api.push(Reply(status=500), Reply(status=503), Reply(text="never asked"))
    with pytest.raises(LLMUnavailable, match=r"HTTP 503 .*after 2 tries"):
        llm.complete(purpose="dream", system="s", user="u")
    assert len(world.api.requests) == 2


def test_recall_never_waits_on_a_retry(world: World) -> None:
    llm = world.anthropic()
    world.api.push(Reply(status=529, headers={"retry-after": "1"}), Reply(text="too late"))
    with pytest.raises(LLMUnavailable, match="HTTP 529"):
        llm.complete(purpose="recall", system="s", user="u", timeout=5)
    assert len(world.api.requests) == 1 and world.slept == []


def test_401_names_the_fix_and_is_not_retried(world: World) -> None:
    llm = world.anthropic()
    world.api.push(Reply(status=401))
    with pytest.raises(LLMUnavailable, match="ANTHROPIC_API_KEY"):
        llm.complete(purpose="extract", system="s", user="u")
    assert len(world.api.requests) == 1


def test_spend_is_metered_per_purpose_and_backend_and_the_cap_holds_for_every_backend(world: World) -> None:
    llm = world.local("daily_token_cap = 100\n")
    world.api.push(Reply(text="a", input_tokens=60, output_tokens=50))
    llm.complete(purpose="session_memory", system="s", user="u")
    summary = world.meter.summary()
    assert summary["by_backend"]["messages-api"]["session_memory"]["input_tokens"] == 60 and summary["cap_reached"]
    assert (
        'memoryd_llm_tokens_total{backend="messages-api",direction="output",purpose="session_memory"} 50.0'
        in generate_latest(world.metrics.registry).decode()
    )
    with pytest.raises(TokenBudgetExceeded, match="daily_token_cap"):
        llm.complete(purpose="extract", system="s", user="u")
    assert len(world.api.requests) == 1
    status = llm.status()
    assert "cap of 100 reached" in status["status_line"] and status["last_call"]["outcome"] == "cap"


def test_auto_picks_the_api_key_first_then_offline_with_the_reason(world: World) -> None:
    assert world.anthropic().backend_name == "anthropic"
    offline = world.client()
    assert not offline.enabled and "no `claude` on PATH" in offline.status()["status_line"]
    with pytest.raises(LLMUnavailable, match="ANTHROPIC_API_KEY"):
        offline.complete(purpose="extract", system="s", user="u")


@pytest.mark.parametrize(
    "config,env", [('[llm]\nbackend = "off"\n', {}), ("[llm]\nenabled = false\n", {}), ("", {"MEMORYD_LLM": "off"})]
)
def test_off_stays_off_even_with_a_key(world: World, config: str, env: dict[str, str]) -> None:
    llm = world.client(config, ANTHROPIC_API_KEY="k", ANTHROPIC_BASE_URL=world.api.url, **env)
    assert not llm.enabled and llm.status()["backend"] == "off"


def test_misconfigured_backends_say_what_to_set(world: World) -> None:
    assert "needs [llm] base_url" in world.client('[llm]\nbackend = "messages-api"\n').why_offline
    assert "needs ANTHROPIC_API_KEY" in world.client('[llm]\nbackend = "anthropic"\n').why_offline
    assert "claude_path" in world.client('[llm]\nbackend = "claude-cli"\n').why_offline
    assert world.client("", MEMORYD_LLM="messages-api").why_offline.startswith('[llm] backend = "messages-api"')
