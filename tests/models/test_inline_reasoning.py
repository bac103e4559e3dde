"""--inline-reasoning: <think> tags in reply text set apart (split, the default) or
decoded with the rest (keep), in FC and prompt mode, against the fake server."""

from __future__ import annotations

import asyncio

import pytest

from harness.config.run_config import RunConfig
from harness.errors import ConfigError
from harness.models.openai_http import OpenAIHTTPClient
from harness.models.prompt_mode import HermesPromptFormat, PromptModeClient
from harness.models.reasoning import read_inline_reasoning
from harness.models.settings import ModelSettings
from harness.run.clients import build_remote_client
from harness.serving.replicas import build_replica_client
from harness.testing.fake_server import Reply
from harness.types import SamplingParams

TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
THOUGHT = '<think>Maybe <tool_call>{"name": "g", "arguments": {}}</tool_call>?</think>\n'
CALL = '<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>'


def complete(client, tools=TOOLS):
    async def main():
        try:
            return await client.complete(
                [{"role": "user", "content": "hi"}], list(tools), SamplingParams()
            )
        finally:
            await client.aclose()

    return asyncio.run(main())


def direct(fake, mode):
    return OpenAIHTTPClient("openai/fake", fake.url, timeout=10.0, inline_reasoning=mode)


def replica_pool(fake, mode):
    settings = ModelSettings(
        "openai/fake",
        api_base=f"{fake.url},{fake.url.replace('127.0.0.1', 'localhost')}",
        client="direct",
    )
    settings.inline_reasoning = mode
    return build_replica_client(settings)


@pytest.mark.parametrize("build", [direct, replica_pool])
def test_fc_reply_with_think_text(fake, build):
    fake.enqueue(Reply.calls(("f", {"a": 1}), content="<think>Plan.</think>\nCalling f."))
    fake.enqueue(Reply.calls(("f", {"a": 1}), content="<think>Plan.</think>\nCalling f."))
    split, keep = complete(build(fake, "split")), complete(build(fake, "keep"))
    assert (split.content, split.reasoning) == ("Calling f.", "Plan.")
    assert (keep.content, keep.reasoning) == ("<think>Plan.</think>\nCalling f.", None)
    assert [c.arguments for c in split.tool_calls] == [c.arguments for c in keep.tool_calls]
    # A reasoning field the server sends apart is set apart either way.
    fake.enqueue(Reply.text("<think>inline</think>answer", reasoning="field"))
    kept = complete(build(fake, "keep"))
    assert (kept.content, kept.reasoning) == ("<think>inline</think>answer", "field")


def test_prompt_mode_reads_calls_inside_think_only_when_kept(fake):
    fake.enqueue(Reply.text(THOUGHT + CALL), Reply.text(THOUGHT + CALL))
    fmt = HermesPromptFormat()
    split = complete(PromptModeClient(direct(fake, "split"), fmt, "split"))
    keep = complete(PromptModeClient(direct(fake, "keep"), fmt, "keep"))
    assert [c.name for c in split.tool_calls] == ["f"]
    assert split.reasoning and "Maybe" in split.reasoning
    # Kept: the format reads the whole text, the call written while thinking included.
    assert [c.name for c in keep.tool_calls] == ["g", "f"]
    assert keep.reasoning is None
    # The model saw the same request both times (no tools sent natively).
    bodies = [r.body for r in fake.chat_requests]
    assert bodies[0]["messages"] == bodies[1]["messages"] and "tools" not in bodies[0]


def test_the_choice_is_described_and_keys_the_cache(fake):
    split, keep = direct(fake, "split"), direct(fake, "keep")
    assert (split.describe()["inline_reasoning"], keep.describe()["inline_reasoning"]) == (
        "split",
        "keep",
    )
    # Default keys stay as they were; keep gets keys of its own.
    assert "inline_reasoning" not in split.cache_identity()
    assert split.cache_identity() != keep.cache_identity()
    prompt = PromptModeClient(keep, HermesPromptFormat(), "keep")
    assert prompt.describe()["inline_reasoning"] == "keep"
    assert prompt.with_format(HermesPromptFormat()).inline_reasoning == "keep"


def test_bad_values():
    with pytest.raises(ValueError, match="inline_reasoning"):
        OpenAIHTTPClient("m", "http://127.0.0.1:1", inline_reasoning="drop")
    # litellm sets a leading <think> block apart before the harness sees the text.
    litellm = ModelSettings("openai/fake", api_base="http://127.0.0.1:1", client="litellm")
    litellm.inline_reasoning = "keep"
    with pytest.raises(ConfigError, match="needs the direct client"):
        build_remote_client(litellm)
    with pytest.raises(ConfigError, match="--inline-reasoning 'drop'"):
        RunConfig(suite="smoke", model="oracle", inline_reasoning="drop").check()
    assert read_inline_reasoning("<think>a</think>b", "keep") == ("<think>a</think>b", None)
    assert read_inline_reasoning("<think>a</think>b", "split") == ("b", "a")
