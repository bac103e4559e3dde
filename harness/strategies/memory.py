"""The rehearsal memory: reading critiques, distilling them, injecting the result.

Critiques and the distilled memory are model output, so they are read leniently
(reasoning blocks dropped, tags optional) and an unusable answer becomes an empty
critique or an empty memory, recorded as a format error, never an exception.

The memory reaches the actor through ``MemoryInjectingClient``, a wrapper that adds
it to the context of every model call (an extra system block, or a prefix to the
first user message). The transcript the benchmark scores and its user simulator
reads stays untouched, and it works wherever the first user message comes from
(the sample's initial messages or the user simulator) and across context resets.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass

from harness.models.base import ModelClient, WrappedClient
from harness.strategies import prompts
from harness.strategies.committed import CommittedLayer, LayerNotes
from harness.strategies.rehearser import strip_thinking
from harness.types import AssistantTurn, Message

_MEMORY = re.compile(
    re.escape(prompts.MEMORY_OPEN) + r"(.*?)(?:" + re.escape(prompts.MEMORY_CLOSE) + r"|$)",
    re.DOTALL,
)


@dataclass
class ParsedText:
    """Model text read for use: ``text`` ("" when unusable), and why not."""

    text: str
    format_error: str | None = None
    truncated: bool = False


def cap_text(text: str, limit: int) -> tuple[str, bool]:
    """At most ``limit`` characters, cut at a line or word boundary when possible."""
    if len(text) <= limit:
        return text, False
    cut = text[:limit]
    boundary = max(cut.rfind("\n"), cut.rfind(" "))
    if boundary > limit // 2:
        cut = cut[:boundary]
    return cut.rstrip(), True


def _usable(text: str) -> bool:
    # Needs some letters: a reply of punctuation or digits is no critique.
    return sum(ch.isalpha() for ch in text) >= 3


def parse_critique(text: str | None, limit: int) -> ParsedText:
    body = strip_thinking(text)
    if not body:
        return ParsedText("", "empty critique")
    if not _usable(body):
        return ParsedText("", "critique has no words")
    capped, truncated = cap_text(body, limit)
    return ParsedText(capped, None, truncated)


def parse_memory(text: str | None, limit: int) -> ParsedText:
    """The distilled memory: inside ``<memory>`` tags when present, else the text."""
    body = strip_thinking(text)
    matches = [m.strip() for m in _MEMORY.findall(body)]
    error = None
    if matches:
        body = next((m for m in reversed(matches) if m), "")
    elif body:
        error = "memory tags missing; used the whole answer"
    if not body:
        return ParsedText("", "empty memory")
    if not _usable(body):
        return ParsedText("", "memory has no words")
    capped, truncated = cap_text(body, limit)
    return ParsedText(capped, error, truncated)


def _prefix_content(content: object, prefix: str) -> str | list[object]:
    if isinstance(content, list):  # content parts: add a text part in front
        return [{"type": "text", "text": prefix}, *content]
    return f"{prefix}{content or ''}"


def inject(messages: list[Message], block: str, position: str) -> tuple[list[Message], str]:
    """A copy of ``messages`` carrying ``block``; returns (messages, where it went).

    "system": appended to the leading system message (or a new one at the top), so
    chat templates that allow a single system message still work.
    "first_user": prefixed to the first user message; with none yet, it falls back
    to the system position for this call.
    """
    result = copy.deepcopy(messages)
    if position == "first_user":
        for message in result:
            if message.get("role") == "user" and not message.get("hidden"):
                message["content"] = _prefix_content(message.get("content"), block + "\n\n")
                return result, "first_user"
    if result and result[0].get("role") == "system" and isinstance(result[0].get("content"), str):
        result[0]["content"] = f"{result[0]['content']}\n\n{block}"
    else:
        result.insert(0, {"role": "system", "content": block})
    return result, "system"


class MemoryInjectingClient(WrappedClient):
    """Adds a block of text to the context of every call of the wrapped model."""

    def __init__(self, inner: ModelClient, block: str, position: str):
        super().__init__(inner)
        self.block = block
        self.position = position
        self.placements: dict[str, int] = {}

    async def complete(self, messages, tools, params) -> AssistantTurn:
        injected, where = inject(messages, self.block, self.position)
        self.placements[where] = self.placements.get(where, 0) + 1
        return await self.inner.complete(injected, tools, params)

    def cache_identity(self) -> dict[str, object]:
        # The request it sends differs from the one it is given: a cache in front
        # of it must not confuse calls with and without (or with other) memory.
        return {**self.inner.cache_identity(), "memory": self.block, "position": self.position}


class MemoryLayer(CommittedLayer):
    """The rehearsal memory shown to the actor in the committed episode; notes where
    it was placed."""

    def __init__(self, memory: str, position: str):
        self.memory = memory
        self.position = position
        self.injector: MemoryInjectingClient | None = None

    def actor(self, actor: ModelClient) -> ModelClient:
        self.injector = MemoryInjectingClient(
            actor, prompts.memory_block(self.memory), self.position
        )
        return self.injector

    def notes(self) -> LayerNotes:
        if self.injector is None:
            return {}
        return {"memory_placements": dict(self.injector.placements)}
