"""A chat request's JSON text, each tool list encoded once.

Encoding the whole body on every call re-encodes the tool schemas each time, though
an episode offers the same ones call after call (a multi-turn episode's tools are
most of its first requests' bytes). ``RequestText`` keeps, per tool list it has seen,
the list's wire form (``openai_wire.wire_tools``) and that form's JSON text, and
writes a body as ``json.dumps(body, ensure_ascii=False)`` would: the same separators,
so the same text, byte for byte.

A tool list is known by the identity of its schema objects (held by the entry, so
that their ids cannot be reused meanwhile): adapters build a sample's schemas once
and never change them in place; a turn that changes the tools offers a new list.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass

from harness.models.openai_wire import wire_tools
from harness.types import ToolSchema

# Tool lists kept (least recently used dropped): well above the samples in flight.
MAX_TOOL_LISTS = 4096


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


@dataclass
class _EncodedTools:
    schemas: tuple[ToolSchema, ...]  # held: the key is their ids
    wire: list[ToolSchema]
    text: str


class RequestText:
    """Per client: tool lists in wire form with their JSON text, and request bodies
    as JSON text. A client serving event loops in several threads shares it: the
    kept lists change under a lock."""

    def __init__(self, max_tool_lists: int = MAX_TOOL_LISTS):
        self.max_tool_lists = max_tool_lists
        self._tools: OrderedDict[tuple[int, ...], _EncodedTools] = OrderedDict()
        self._lock = threading.Lock()

    def wire_tools(self, tools: list[ToolSchema]) -> list[ToolSchema]:
        """``openai_wire.wire_tools(tools)``, built once per tool list. The list is
        shared by every request offering these tools: it must not be changed."""
        return self._encoded(tools).wire

    def dumps(self, body: Mapping[str, object], tools: list[ToolSchema]) -> str:
        """``json.dumps(body, ensure_ascii=False)``, where ``body["tools"]``, when it
        is this object's wire form of ``tools``, is its text kept from before.

        The entries before and after the tools are encoded as two objects and
        spliced around the kept text (two encoder calls, not one per entry)."""
        known = self._tools.get(tuple(map(id, tools))) if tools else None
        if known is None or body.get("tools") is not known.wire:
            return _dumps(body)
        before: dict[str, object] = {}
        after: dict[str, object] = {}
        side = before
        for key, value in body.items():
            if key == "tools":
                side = after
            else:
                side[key] = value
        # An object's entries are its text without the braces ("" when it has none).
        parts = [_dumps(before)[1:-1], f'"tools": {known.text}', _dumps(after)[1:-1]]
        return "{" + ", ".join(part for part in parts if part) + "}"

    def _encoded(self, tools: list[ToolSchema]) -> _EncodedTools:
        key = tuple(map(id, tools))
        with self._lock:
            entry = self._tools.get(key)
            if entry is not None:
                self._tools.move_to_end(key)
                return entry
        wire = wire_tools(tools)
        entry = _EncodedTools(tuple(tools), wire, _dumps(wire))
        with self._lock:
            entry = self._tools.setdefault(key, entry)  # another thread's, if first
            if len(self._tools) > self.max_tool_lists:
                self._tools.popitem(last=False)
        return entry
