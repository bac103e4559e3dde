"""OpenAIHTTPClient (direct aiohttp path) against the fake server."""

from __future__ import annotations

import asyncio
import json

import pytest

from harness.models.base import ModelError
from harness.models.openai_http import OpenAIHTTPClient, served_name
from harness.models.retry import RetryingClient
from harness.testing.fake_server import Reply
from harness.types import SamplingParams

SECRET = "sk-direct-9a8b7c6d5e4f"


def complete(client, params=None, tools=()):
    direct = client.inner if isinstance(client, RetryingClient) else client

    async def main():
        try:
            return await client.complete(
                [{"role": "user", "content": "hi"}], list(tools), params or SamplingParams()
            )
        finally:
            await direct.aclose()

    return asyncio.run(main())


def direct(fake, **kwargs):
    kwargs.setdefault("timeout", 10.0)
    return OpenAIHTTPClient("openai/fake-model", fake.url, api_key=SECRET, **kwargs)


def test_text_reply_and_request_body(fake):
    fake.enqueue(Reply.text("<think>hm</think>Hello", reasoning=None))
    params = SamplingParams(
        temperature=0.5, seed=3, max_tokens=9, extra={"extra_body": {"top_k": 5}}
    )
    turn = complete(direct(fake), params)
    assert (turn.content, turn.reasoning, turn.finish_reason) == ("Hello", "hm", "stop")
    body = fake.chat_requests[0].body
    assert body["model"] == "fake-model" and body["top_k"] == 5 and body["seed"] == 3
    assert fake.chat_requests[0].headers["authorization"] == f"Bearer {SECRET}"
    assert SECRET not in json.dumps(turn.raw)


def test_tool_calls_and_malformed_arguments(fake):
    fake.enqueue(Reply.calls(("f", {"a": 1}), ("g", '{"b": ')))
    turn = complete(direct(fake), tools=[{"type": "function", "function": {"name": "f"}}])
    assert turn.tool_calls[0].arguments == {"a": 1}
    assert turn.tool_calls[1].arguments is None and turn.tool_calls[1].parse_error


@pytest.mark.parametrize(
    "failure", [Reply.rate_limited(0.05), Reply.server_error(), Reply.dropped(), Reply.slow(3.0)]
)
def test_transient_failures_are_retried(fake, failure):
    fake.enqueue(failure, Reply.text("fine"))
    client = RetryingClient(
        direct(fake, timeout=0.5), max_attempts=3, base_delay=0.01, max_delay=0.02
    )
    assert complete(client).content == "fine"
    assert client.stats.retries == 1


def test_401_is_permanent_and_scrubbed(fake):
    fake.enqueue(Reply.http_error(401, f"bad key {SECRET}"))
    with pytest.raises(ModelError) as caught:
        complete(direct(fake))
    assert not caught.value.transient and "401" in str(caught.value)
    assert SECRET not in str(caught.value)


def test_non_json_reply_is_an_error(fake):
    fake.enqueue(Reply(body=b"\xff<html>"))
    with pytest.raises(ModelError) as caught:
        complete(direct(fake))
    assert caught.value.transient


def test_served_name_and_describe():
    assert served_name("hosted_vllm/Qwen3-8B") == "Qwen3-8B" and served_name("q") == "q"
    info = OpenAIHTTPClient(
        "openai/m", "http://a:secretpw@127.0.0.1:1/v1", api_key=SECRET
    ).describe()
    assert "secretpw" not in json.dumps(info) and SECRET not in json.dumps(info)


def test_a_reply_that_holds_a_key_is_masked_also_when_its_text_is_trusted_unwalked():
    from harness.boundary.sanitise import loads_gives_sanitised
    from harness.models.openai_http import parse_reply_body

    escaped = "\\u0073" + SECRET[1:]  # the key with its first letter written as an escape
    for content in (f"the key is {SECRET}", f"the key is {escaped}"):
        text = (
            '{"id": "chatcmpl-1", "choices": [{"message": {"role": "assistant", '
            f'"content": "{content}"}}, "finish_reason": "stop"}}]}}'
        )
        assert loads_gives_sanitised(text)  # so the text, not a walk, is searched
        turn = parse_reply_body(text.encode(), [SECRET])
        raw = json.dumps(turn.raw)
        assert SECRET not in raw and "***" in raw
    # A key the model writes that the run does not hold is the model's text: kept.
    text = (
        '{"id": "chatcmpl-1", "choices": [{"message": {"role": "assistant", '
        '"content": "api_key=hunter2hunter2"}, "finish_reason": "stop"}]}'
    )
    turn = parse_reply_body(text.encode(), [SECRET])
    assert turn.content == "api_key=hunter2hunter2"
    assert turn.raw["choices"][0]["message"]["content"] == "api_key=hunter2hunter2"
