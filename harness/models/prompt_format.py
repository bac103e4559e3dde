"""How tools are described in, and calls read from, plain text (prompt mode).

For endpoints without a tool-call parser the tools go into the system prompt and
the reply text is parsed for calls. Adapters may provide their own format (a
benchmark's own system prompt and output format, e.g. a Python list of calls) through
``Adapter.prompt_format``; everything else uses the default in prompt_mode.py.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from harness.types import Message, ToolCall, ToolSchema


class PromptFormat(ABC):
    """Renders tools into the conversation and parses calls out of reply text."""

    name: str = "prompt-format"

    @abstractmethod
    def render(self, messages: list[Message], tools: list[ToolSchema]) -> list[Message]:
        """The messages to send to a text-only endpoint (tools described in text,
        earlier tool calls and results rewritten as text)."""

    @abstractmethod
    def parse(self, text: str) -> tuple[str | None, list[ToolCall]]:
        """Split reply text (reasoning already removed) into (remaining text, calls).
        Must never raise for any input: unparseable calls come back as ToolCalls
        with ``parse_error`` set, or as plain text."""
