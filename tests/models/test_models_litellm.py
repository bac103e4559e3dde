"""LiteLLMClient against the fake OpenAI-compatible server (the real network path)."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from harness.errors import ConfigError
from harness.models.base import ModelError
from harness.models.cache import CachingClient
from harness.models.litellm_client import LiteLLMClient, missing_credentials
from harness.models.prompt_mode import PromptModeClient
from harness.models.retry import RetryingClient
from harness.testing.fake_server import FakeServer, Reply
from harness.types import SamplingParams

SECRET = "sk-test-4f9c2a7e1b8d6053"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather in a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
HELLO = [{"role": "user", "content": "hello"}]


def client_for(fake: FakeServer, **kwargs) -> LiteLLMClient:
    kwargs.setdefault("timeout", 10.0)
    return LiteLLMClient("openai/fake-model", api_base=fake.url, api_key=SECRET, **kwargs)


def fast_retry(inner, **kwargs) -> RetryingClient:
    kwargs.setdefault("base_delay", 0.01)
    kwargs.setdefault("max_delay", 0.05)
    return RetryingClient(inner, **kwargs)


def complete(client, messages=HELLO, tools=(), params=None):
    return asyncio.run(client.complete(list(messages), list(tools), params or SamplingParams()))


def test_plain_text_reply_and_request_shape(fake):
    fake.enqueue(Reply(content="Hi there", prompt_tokens=11, completion_tokens=3))
    params = SamplingParams(
        temperature=0.3, top_p=0.9, max_tokens=64, seed=7, extra={"extra_body": {"top_k": 20}}
    )
    turn = complete(client_for(fake), params=params)
    assert turn.content == "Hi there"
    assert turn.tool_calls == []
    assert turn.finish_reason == "stop"
    assert (turn.usage.calls, turn.usage.prompt_tokens, turn.usage.completion_tokens) == (1, 11, 3)
    json.dumps(turn.raw)  # the raw reply is JSON-serialisable
    body = fake.chat_requests[0].body
    assert body["messages"] == HELLO
    assert (body["temperature"], body["top_p"], body["max_tokens"], body["seed"]) == (
        0.3,
        0.9,
        64,
        7,
    )
    assert body["top_k"] == 20
    assert "tools" not in body


def test_tool_calls_parallel(fake):
    fake.enqueue(Reply.calls(("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})))
    turn = complete(client_for(fake), tools=TOOLS)
    assert [c.name for c in turn.tool_calls] == ["get_weather", "get_weather"]
    assert [c.arguments for c in turn.tool_calls] == [{"city": "Paris"}, {"city": "Rome"}]
    assert all(c.parse_error is None and c.id for c in turn.tool_calls)
    assert turn.finish_reason == "tool_calls"
    assert fake.chat_requests[0].body["tools"] == TOOLS


def test_malformed_tool_call_json_becomes_parse_error(fake):
    fake.enqueue(Reply.calls(("get_weather", '{"city": "Par'), ("get_weather", "[1, 2]")))
    turn = complete(client_for(fake), tools=TOOLS)
    first, second = turn.tool_calls
    assert first.arguments is None and "not valid JSON" in first.parse_error
    assert first.raw_arguments == '{"city": "Par'
    assert second.arguments is None and "JSON object" in second.parse_error


def test_reasoning_content_field_and_think_tags(fake):
    fake.enqueue(
        Reply.text("The answer is 4.", reasoning="2+2 is 4"),
        Reply.text("<think>let me see</think>Paris."),
    )
    client = client_for(fake)
    first = complete(client)
    assert (first.content, first.reasoning) == ("The answer is 4.", "2+2 is 4")
    second = complete(client)
    assert (second.content, second.reasoning) == ("Paris.", "let me see")


def test_non_utf8_body_is_an_error_not_a_crash(fake):
    fake.enqueue(Reply(body=b"\xff\xfe not json"))
    with pytest.raises(ModelError):
        complete(client_for(fake))


def test_429_then_success_honours_retry_after(fake):
    fake.enqueue(Reply.rate_limited(retry_after=0.3), Reply.text("after the wait"))
    client = fast_retry(client_for(fake), max_attempts=3, max_retry_after=5.0)
    started = time.monotonic()
    turn = complete(client)
    elapsed = time.monotonic() - started
    assert turn.content == "after the wait"
    assert len(fake.chat_requests) == 2
    gap = fake.chat_requests[1].received_at - fake.chat_requests[0].received_at
    assert gap >= 0.29 and elapsed < 3.0
    assert (client.stats.attempts, client.stats.retries) == (2, 1)


def test_retry_after_is_capped(fake):
    fake.enqueue(Reply.rate_limited(retry_after=3600), Reply.text("ok"))
    client = fast_retry(client_for(fake), max_attempts=2, max_retry_after=0.2)
    started = time.monotonic()
    assert complete(client).content == "ok"
    assert time.monotonic() - started < 3.0


def test_500_then_success(fake):
    fake.enqueue(Reply.server_error(500), Reply.server_error(503), Reply.text("recovered"))
    client = fast_retry(client_for(fake), max_attempts=4)
    assert complete(client).content == "recovered"
    assert client.stats.retries == 2


def test_dropped_connection_is_retried(fake):
    fake.enqueue(Reply.dropped(), Reply.text("back"))
    client = fast_retry(client_for(fake), max_attempts=3)
    assert complete(client).content == "back"


def test_slow_reply_times_out_and_is_retried(fake):
    fake.enqueue(Reply.slow(5.0), Reply.text("quick"))
    client = fast_retry(client_for(fake, timeout=30.0), max_attempts=3, timeout=0.5)
    started = time.monotonic()
    assert complete(client).content == "quick"
    assert time.monotonic() - started < 4.0
    assert client.stats.timeouts == 1


def test_litellm_timeout_is_transient(fake):
    fake.enqueue(Reply.slow(5.0))
    with pytest.raises(ModelError) as caught:
        complete(client_for(fake, timeout=0.5))
    assert caught.value.transient


def test_persistent_failure_gives_up_transient(fake):
    fake.enqueue(*[Reply.server_error()] * 3)
    client = fast_retry(client_for(fake), max_attempts=3)
    with pytest.raises(ModelError) as caught:
        complete(client)
    assert caught.value.transient and "gave up after 3 attempts" in str(caught.value)
    assert len(fake.chat_requests) == 3 and client.stats.gave_up == 1


@pytest.mark.parametrize("status", [400, 401, 404])
def test_client_errors_are_not_retried_and_never_show_the_key(fake, status):
    fake.enqueue(Reply.http_error(status, f"Incorrect API key provided: {SECRET}"))
    client = fast_retry(client_for(fake), max_attempts=5)
    with pytest.raises(ModelError) as caught:
        complete(client)
    error = caught.value
    assert not error.transient
    assert len(fake.chat_requests) == 1
    assert str(status) in str(error)
    assert SECRET not in str(error) and "4f9c2a7e" not in str(error)
    assert error.__cause__ is None and error.__suppress_context__


def test_key_is_sent_but_never_described_or_recorded(fake):
    fake.enqueue(Reply.text(f"echo {SECRET}"))
    client = client_for(fake)
    turn = complete(client)
    assert fake.chat_requests[0].headers["authorization"] == f"Bearer {SECRET}"
    assert SECRET not in json.dumps(client.describe())
    assert SECRET not in json.dumps(turn.raw)


def test_describe_strips_credentials_from_api_base():
    client = LiteLLMClient("openai/m", api_base="http://user:hunter2pass@127.0.0.1:9/v1")
    info = client.describe()
    assert "hunter2pass" not in json.dumps(info)
    assert info["api_base"].startswith("http://127.0.0.1:9/v1")
    assert info["provider"] == "openai" and info["model"] == "openai/m"
    assert info["litellm_version"]
    # A key in the query: litellm would append its paths inside the query, so such
    # a base is refused, in a line that does not show the key.
    with pytest.raises(ConfigError, match="with a query") as refused:
        LiteLLMClient("openai/m", api_base="http://127.0.0.1:9/v1?api_key=abcdef123&x=1")
    assert "abcdef123" not in str(refused.value)


def test_local_server_without_key_gets_placeholder(fake, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    client = LiteLLMClient("openai/fake-model", api_base=fake.url)
    assert complete(client).content == "ok"
    assert fake.chat_requests[0].headers["authorization"] == "Bearer EMPTY"


def test_hosted_vllm_prefix_works(fake):
    client = LiteLLMClient("hosted_vllm/fake-model", api_base=fake.url)
    assert complete(client).content == "ok"
    assert fake.chat_requests[0].body["model"] == "fake-model"


def test_missing_credentials(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    assert "OPENAI_API_KEY" in missing_credentials("gpt-4o")
    assert "ANTHROPIC_API_KEY" in missing_credentials("anthropic/claude-3-5-sonnet-20241022")
    assert missing_credentials("openai/local", api_base="http://127.0.0.1:8000/v1") is None
    monkeypatch.setenv("OPENAI_API_KEY", "sk-present-but-fake")
    assert missing_credentials("gpt-4o") is None


def test_cache_hit_skips_the_server(fake, tmp_path):
    fake.enqueue(Reply.calls(("get_weather", {"city": "Oslo"})))
    client = CachingClient(client_for(fake), tmp_path)
    first = complete(client, tools=TOOLS)
    second = complete(client, tools=TOOLS)
    assert len(fake.chat_requests) == 1
    assert second.tool_calls[0].arguments == {"city": "Oslo"}
    assert (first.usage.cached_calls, second.usage.cached_calls) == (0, 1)
    assert second.usage.prompt_tokens == first.usage.prompt_tokens > 0
    # Another seed is another request.
    complete(client, tools=TOOLS, params=SamplingParams(seed=1))
    assert len(fake.chat_requests) == 2


def test_failures_are_not_cached(fake, tmp_path):
    fake.enqueue(Reply.http_error(400, "bad"), Reply.text("fine"))
    client = CachingClient(client_for(fake), tmp_path)
    with pytest.raises(ModelError):
        complete(client)
    assert complete(client).content == "fine"
    assert complete(client).content == "fine"
    assert len(fake.chat_requests) == 2


def test_prompt_mode_through_the_server(fake):
    fake.enqueue(
        Reply.text(
            '<think>need weather</think>Checking.\n<tool_call>\n{"name": "get_weather", '
            '"arguments": {"city": "Lima"}}\n</tool_call>'
        )
    )
    client = PromptModeClient(client_for(fake))
    turn = complete(client, tools=TOOLS)
    assert [(c.name, c.arguments) for c in turn.tool_calls] == [("get_weather", {"city": "Lima"})]
    assert turn.content == "Checking."
    assert turn.reasoning == "need weather"
    body = fake.chat_requests[0].body
    assert "tools" not in body
    assert (
        "<tools>" in body["messages"][0]["content"]
        and "get_weather" in body["messages"][0]["content"]
    )
