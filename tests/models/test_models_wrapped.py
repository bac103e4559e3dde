"""One wrapper base: a client around another forwards what it does not override."""

from __future__ import annotations

import asyncio

from harness.models.base import ModelClient, ScriptedClient, WrappedClient
from harness.models.openai_http import OpenAIHTTPClient
from harness.models.retry import ConcurrencyLimitedClient
from harness.serving.replicas import Replica, ReplicaPool
from harness.strategies.memory import MemoryInjectingClient
from harness.task.contract import Environment, WrappedEnvironment
from harness.types import AssistantTurn, SamplingParams, ToolCall, ToolResult


class Closable(ScriptedClient):
    closed = False

    def cache_identity(self):
        return {"model": "m", "api_base": "http://x"}

    async def aclose(self) -> None:
        self.closed = True


class Shouting(WrappedClient):
    async def complete(self, messages, tools, params) -> AssistantTurn:
        turn = await self.inner.complete(messages, tools, params)
        turn.content = turn.content.upper()
        return turn


def test_a_wrapper_forwards_name_description_identity_and_close():
    inner = Closable([AssistantTurn(content="hi")], name="base")
    outer = Shouting(Shouting(inner))
    turn = asyncio.run(outer.complete([], [], SamplingParams()))
    assert turn.content == "HI"
    assert outer.name == "base" and outer.describe() == inner.describe()
    assert outer.cache_identity() == {"model": "m", "api_base": "http://x"}
    asyncio.run(outer.aclose())
    assert inner.closed


def test_cache_identity_is_part_of_every_client():
    assert ScriptedClient([], name="s").cache_identity() == {"name": "s", "kind": "ScriptedClient"}
    assert all(callable(getattr(ModelClient, m)) for m in ("cache_identity", "endpoint", "aclose"))


def test_the_endpoint_goes_through_wrappers_to_the_concurrency_limit():
    class Remote(ScriptedClient):
        def endpoint(self):
            return "http://127.0.0.1:9/v1"

    limited = ConcurrencyLimitedClient(Shouting(Remote([], name="m")), 2)
    assert limited.endpoint() == limited.key == "http://127.0.0.1:9/v1"
    # A client that calls no server is limited under its name.
    assert ConcurrencyLimitedClient(ScriptedClient([], name="s"), 2).key == "s"


def test_a_replica_pool_is_identified_by_its_model_settings_and_every_replica():
    first = OpenAIHTTPClient("m", "http://127.0.0.1:1/v1", tool_choice="required")
    second = OpenAIHTTPClient("m", "http://127.0.0.1:2/v1", tool_choice="required")
    pool = ReplicaPool("m", [Replica(c.api_base, c, 1) for c in (second, first)])
    assert pool.cache_identity() == {
        "model": "m",
        "tool_choice": "required",
        "replicas": ["http://127.0.0.1:1/v1", "http://127.0.0.1:2/v1"],
    }
    assert pool.endpoint() == "http://127.0.0.1:2/v1,http://127.0.0.1:1/v1"


class Recording(Environment):
    def __init__(self):
        self.calls = []

    async def execute(self, call):
        self.calls.append(call.name)
        return ToolResult("ok", False)

    def execute_user_call(self, call):
        self.calls.append(f"user {call.name}")
        return ToolResult("user ok", False)

    def final_state(self):
        return {"calls": list(self.calls)}


def test_a_wrapped_environment_forwards_every_call_it_does_not_override():
    class Loud(WrappedEnvironment):
        async def execute(self, call):
            result = await self.inner.execute(call)
            return ToolResult(result.content.upper(), result.is_error)

    inner = Recording()
    outer = Loud(Loud(inner))
    assert asyncio.run(outer.execute(ToolCall("1", "a", {}))).content == "OK"
    assert outer.execute_user_call(ToolCall("2", "b", {})).content == "user ok"
    assert outer.final_state() == {"calls": ["a", "user b"]}


def test_a_wrapper_that_changes_the_request_says_so_in_its_identity():
    inner = Closable([])
    first = MemoryInjectingClient(inner, "remember A", "system")
    other = MemoryInjectingClient(inner, "remember B", "system")
    assert first.cache_identity() != other.cache_identity() != inner.cache_identity()
