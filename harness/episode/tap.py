"""The actor's conversation, seen from outside the episode loop.

``ConversationTap`` passes calls through to the actor model and remembers the
latest exchange: an environment that imagines its results (a world-model probe, a
rehearsal) reads from it what the actor saw and asked.
"""

from __future__ import annotations

from harness.models.base import ModelClient, WrappedClient
from harness.types import AssistantTurn, Message, ToolSchema


class ConversationTap(WrappedClient):
    """Passes calls through to the actor model and remembers the latest exchange.

    ``abort``: set by a simulated environment whose rehearser failed for good; the
    actor's next call then raises it, so the episode ends as an infrastructure
    error instead of continuing on error results that hide the failure.
    """

    def __init__(self, inner: ModelClient):
        super().__init__(inner)
        self.messages: list[Message] = []
        self.tools: list[ToolSchema] = []
        self.reply: AssistantTurn | None = None
        self.abort: BaseException | None = None

    async def complete(self, messages, tools, params) -> AssistantTurn:
        if self.abort is not None:
            raise self.abort
        self.messages = list(messages)
        self.tools = list(tools)
        self.reply = await self.inner.complete(messages, tools, params)
        return self.reply
