"""The on-disk response cache."""

from __future__ import annotations

import asyncio
import json

from harness.models.base import ModelClient, ModelError
from harness.models.cache import CachingClient, cache_key
from harness.models.litellm_client import LiteLLMClient
from harness.models.prompt_mode import PromptModeClient
from harness.models.retry import ConcurrencyLimitedClient, RetryingClient
from harness.types import AssistantTurn, SamplingParams, ToolCall, Usage

MESSAGES = [{"role": "user", "content": "weather?"}]


class CountingClient(ModelClient):
    name = "counting"

    def __init__(self, fail: bool = False):
        self.calls = 0
        self.fail = fail

    async def complete(self, messages, tools, params):
        self.calls += 1
        if self.fail:
            raise ModelError("down", transient=True)
        return AssistantTurn(
            content=f"reply {self.calls}",
            tool_calls=[ToolCall(id="c1", name="f", arguments={"x": 1}, raw_arguments='{"x": 1}')],
            reasoning="thought",
            usage=Usage(calls=1, prompt_tokens=10, completion_tokens=5),
            raw={"id": "r"},
            finish_reason="tool_calls",
        )


def ask(client, params=None, messages=MESSAGES, tools=()):
    return asyncio.run(client.complete(list(messages), list(tools), params or SamplingParams()))


def test_identical_request_is_served_from_disk(tmp_path):
    inner = CountingClient()
    first = ask(CachingClient(inner, tmp_path))
    second = ask(CachingClient(inner, tmp_path))  # a fresh client: as after a crash
    assert inner.calls == 1
    assert second.content == first.content == "reply 1"
    assert second.tool_calls[0].arguments == {"x": 1} and second.reasoning == "thought"
    assert second.raw == {"id": "r"} and second.finish_reason == "tool_calls"
    assert (second.usage.calls, second.usage.cached_calls, second.usage.prompt_tokens) == (1, 1, 10)
    assert first.usage.cached_calls == 0
    files = list(tmp_path.glob("*/*.json"))
    assert len(files) == 1 and files[0].parent.name == files[0].name[:2]


def test_any_difference_is_a_miss(tmp_path):
    inner = CountingClient()
    client = CachingClient(inner, tmp_path)
    ask(client)
    ask(client, params=SamplingParams(seed=1))
    ask(client, params=SamplingParams(temperature=0.7))
    ask(client, messages=[{"role": "user", "content": "weather!"}])
    ask(client, tools=[{"type": "function", "function": {"name": "f"}}])
    assert inner.calls == 5
    ask(client, params=SamplingParams(seed=1))
    assert inner.calls == 5


def test_different_models_do_not_share_entries(tmp_path):
    a = CachingClient(LiteLLMClient("openai/a", api_base="http://127.0.0.1:1/v1"), tmp_path)
    b = CachingClient(LiteLLMClient("openai/b", api_base="http://127.0.0.1:1/v1"), tmp_path)
    c = CachingClient(LiteLLMClient("openai/a", api_base="http://127.0.0.1:2/v1"), tmp_path)
    keys = {cache_key(x.identity, MESSAGES, [], SamplingParams()) for x in (a, b, c)}
    assert len(keys) == 3


def test_identity_passes_through_wrappers_without_credentials(tmp_path):
    base = LiteLLMClient(
        "openai/a", api_base="http://u:pw123456@127.0.0.1:1/v1", api_key="sk-zzzzzzzz"
    )
    stacked = CachingClient(RetryingClient(ConcurrencyLimitedClient(base, 4)), tmp_path)
    assert stacked.identity == {
        "model": "openai/a",
        "api_base": "http://127.0.0.1:1/v1",
        "tool_choice": "auto",
    }
    wrapped = CachingClient(PromptModeClient(base), tmp_path)
    assert wrapped.identity["prompt_format"] == "hermes"


def test_corrupt_entry_is_ignored_and_rewritten(tmp_path):
    inner = CountingClient()
    client = CachingClient(inner, tmp_path)
    ask(client)
    (entry,) = tmp_path.glob("*/*.json")
    entry.write_text('{"format": 1, "turn": {"content": ')
    assert ask(client).content == "reply 2"
    assert json.loads(entry.read_text())["turn"]["content"] == "reply 2"
    assert ask(client).content == "reply 2" and inner.calls == 2
    assert not list(tmp_path.glob("*/.tmp-*"))


def test_errors_are_not_cached(tmp_path):
    inner = CountingClient(fail=True)
    client = CachingClient(inner, tmp_path)
    for _ in range(2):
        try:
            ask(client)
        except ModelError:
            pass
    assert inner.calls == 2 and not list(tmp_path.glob("*/*.json"))
