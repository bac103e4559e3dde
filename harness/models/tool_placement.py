"""Where a server shows the model its tools, and the one workaround it may need.

llama-cpp-python's ``chatml-function-calling`` chat format writes the tool list
into the system message and nowhere else: a conversation without one (a
single-turn question) reaches the model without its tools. Such a server is
recognised by its own token counts (models/preflight.py: the same request with an
empty system message costs far more prompt tokens) or by what the run serves
(harness/serving/); the conversations of that run then get an empty system
message first when tools are offered and they have none.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.models.base import ModelClient, WrappedClient
from harness.types import AssistantTurn, Message, SamplingParams, ToolSchema


@dataclass
class ToolPlacement:
    """Shared by the run's clients; the preflight may switch it on before the first sample."""

    system_message: bool = False


def with_system_message(messages: list[Message], tools: list[ToolSchema]) -> list[Message]:
    """The conversation with an empty system message first when tools are offered
    and it has none."""
    if not tools or any(message.get("role") == "system" for message in messages):
        return messages
    return [{"role": "system", "content": ""}, *messages]


class SystemMessageForTools(WrappedClient):
    """Adds the empty system message while ``placement.system_message`` is on."""

    def __init__(self, inner: ModelClient, placement: ToolPlacement):
        super().__init__(inner)
        self.placement = placement

    async def complete(
        self, messages: list[Message], tools: list[ToolSchema], params: SamplingParams
    ) -> AssistantTurn:
        if self.placement.system_message:
            messages = with_system_message(messages, tools)
        return await self.inner.complete(messages, tools, params)

    def cache_identity(self) -> dict[str, object]:
        identity = dict(self.inner.cache_identity())
        if self.placement.system_message:
            identity["system_message_for_tools"] = True
        return identity
