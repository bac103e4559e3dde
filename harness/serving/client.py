"""The client of a server this run started, known by what it serves."""

from __future__ import annotations

from typing import Any

from harness.models.base import ModelClient, WrappedClient
from harness.models.tool_placement import with_system_message
from harness.serving.specs import CHATML_FUNCTION_CALLING, LlamaCppSpec
from harness.types import AssistantTurn, Message, SamplingParams, ToolSchema


class ServedModelClient(WrappedClient):
    """The client of a server this run started, known by what it serves.

    Its calls go to the inner client; the manifest and the response cache see
    the server's identity (kind, checkpoint, parsers) instead of its URL, whose
    port changes on every start.
    """

    def __init__(self, inner: ModelClient, identity: dict[str, Any], label: str):
        super().__init__(inner)
        self.identity = dict(identity)
        self.label = label
        self.tools_need_system_message = (
            identity.get("server") == LlamaCppSpec.kind
            and identity.get("tool_parser") == CHATML_FUNCTION_CALLING
        )

    async def complete(
        self, messages: list[Message], tools: list[ToolSchema], params: SamplingParams
    ) -> AssistantTurn:
        if self.tools_need_system_message:
            messages = with_system_message(messages, tools)
        return await self.inner.complete(messages, tools, params)

    def cache_identity(self) -> dict[str, Any]:
        return {"model": self.name, **self.identity}

    def describe(self) -> dict[str, Any]:
        described = dict(self.inner.describe())
        described["url"] = described.get("api_base")
        described["api_base"] = self.label
        return described
