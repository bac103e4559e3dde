"""The model-client interface and the tiny deterministic clients."""

from __future__ import annotations

from abc import ABC, abstractmethod

from harness.boundary.json_value import JsonObject
from harness.types import AssistantTurn, Message, SamplingParams, ToolSchema

# ModelError.kind of a request longer than the model's context window: the
# episode ends there as a scored failure (the model's limit, not the network's).
CONTEXT_OVERFLOW = "context_overflow"


class ModelError(Exception):
    """A model call failed. ``transient`` errors are retried; others are not.
    ``kind`` names failures the episode treats specially (CONTEXT_OVERFLOW)."""

    def __init__(
        self,
        message: str,
        transient: bool = False,
        retry_after: float | None = None,
        kind: str | None = None,
    ):
        super().__init__(message)
        self.transient = transient
        self.retry_after = retry_after
        self.kind = kind


class CallMeter:
    """Model calls in flight now, over every client of a run that shares it
    (the progress display shows it)."""

    def __init__(self) -> None:
        self.in_flight = 0


class ModelClient(ABC):
    """Turns (messages, tools, sampling params) into one assistant turn."""

    name: str = "model"

    @abstractmethod
    async def complete(
        self, messages: list[Message], tools: list[ToolSchema], params: SamplingParams
    ) -> AssistantTurn:
        """One model reply. Raises ModelError on failure."""

    def describe(self) -> JsonObject:
        """What the manifest records about this client (never credentials)."""
        return {"name": self.name, "kind": type(self).__name__}

    def cache_identity(self) -> dict[str, object]:
        """What identifies this client's replies in the response cache: clients
        with equal identities give the same reply to the same request. Clients
        that talk to a model name it and its endpoint; the default is name and kind."""
        return {"name": self.name, "kind": type(self).__name__}

    def endpoint(self) -> str | None:
        """The server this client calls (its api_base, else its model name), so that
        separate client objects for one server share its concurrency limit. None
        for clients that call no server."""
        return None

    async def aclose(self) -> None:  # noqa: B027 - optional: most clients hold nothing
        """Release connections (wrappers pass this on to the client they wrap)."""


class WrappedClient(ModelClient):
    """A client around another one (retries, limits, cache, prompt mode, metering).

    Forwards everything it does not override to ``inner``: the reply, the name,
    the manifest description, the cache identity, the endpoint and closing. A wrapper that
    changes what a request means (e.g. rewrites the prompt) must say so in its
    ``cache_identity``.
    """

    def __init__(self, inner: ModelClient):
        self.inner = inner
        self.name = inner.name

    async def complete(
        self, messages: list[Message], tools: list[ToolSchema], params: SamplingParams
    ) -> AssistantTurn:
        return await self.inner.complete(messages, tools, params)

    def describe(self) -> JsonObject:
        return self.inner.describe()

    def cache_identity(self) -> dict[str, object]:
        return self.inner.cache_identity()

    def endpoint(self) -> str | None:
        return self.inner.endpoint()

    async def aclose(self) -> None:
        await self.inner.aclose()


class NullClient(ModelClient):
    """Answers every message with a short text and never calls a tool."""

    name = "null"

    async def complete(self, messages, tools, params) -> AssistantTurn:
        return AssistantTurn(content="I cannot help with that.", finish_reason="stop")


class ScriptedClient(ModelClient):
    """Replays a fixed list of turns, then answers with text (tests, oracles)."""

    def __init__(
        self, turns: list[AssistantTurn], name: str = "scripted", final_text: str = "Done."
    ):
        self.name = name
        self._turns = list(turns)
        self._final_text = final_text
        self.calls: list[list[Message]] = []

    async def complete(self, messages, tools, params) -> AssistantTurn:
        self.calls.append(list(messages))
        if self._turns:
            return self._turns.pop(0)
        return AssistantTurn(content=self._final_text, finish_reason="stop")
