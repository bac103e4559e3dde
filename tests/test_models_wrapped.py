"""One wrapper base: a client around another forwards what it does not override."""

from __future__ import annotations

import asyncio

from harness.models.base import ModelClient, ScriptedClient, WrappedClient
from harness.models.cache import client_identity
from harness.strategies.memory import MemoryInjectingClient
from harness.types import AssistantTurn, SamplingParams


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
    assert client_identity(outer) == {"model": "m", "api_base": "http://x"}
    asyncio.run(outer.aclose())
    assert inner.closed


def test_cache_identity_is_part_of_every_client():
    assert ScriptedClient([], name="s").cache_identity() == {"name": "s", "kind": "ScriptedClient"}
    assert all(callable(getattr(ModelClient, m)) for m in ("cache_identity", "aclose"))


def test_a_wrapper_that_changes_the_request_says_so_in_its_identity():
    inner = Closable([])
    first = MemoryInjectingClient(inner, "remember A", "system")
    other = MemoryInjectingClient(inner, "remember B", "system")
    assert client_identity(first) != client_identity(other) != client_identity(inner)
