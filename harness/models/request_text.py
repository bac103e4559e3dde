"""A chat request's JSON payload, each tool list encoded once.

Encoding the whole body on every call re-encodes the tool schemas each time, though
an episode offers the same ones call after call (a multi-turn episode's tools are
most of its first requests' bytes). ``RequestText`` keeps, per tool list it has seen,
the list's wire form (``openai_wire.wire_tools``) and that form's JSON, and writes a
body's payload with the kept JSON spliced in.

The JSON is orjson's (compact UTF-8, about a fifth of ``json.dumps``'s CPU, which
was a tenth of the loop's CPU per call at 256 in flight). Where orjson refuses a
part (a lone surrogate in a text, an integer beyond 64 bits) that part is written
as before: ``json.dumps(part, ensure_ascii=False)``, surrogates passed through.
orjson writes NaN and the infinities as ``null`` (json's ``NaN`` is not JSON, which
a server's parser may refuse); a date or an enum in a user's extra parameters is
written as its ISO text or value (json could not write it at all).

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

import orjson

from harness.models.openai_wire import wire_tools
from harness.types import ToolSchema

# Tool lists kept (least recently used dropped): well above the samples in flight.
MAX_TOOL_LISTS = 4096


def json_bytes(value: object) -> bytes:
    """``value`` as JSON in UTF-8: orjson's, or json's where orjson refuses it."""
    try:
        return orjson.dumps(value)
    except TypeError:  # orjson.JSONEncodeError is one
        return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")


@dataclass
class _EncodedTools:
    schemas: tuple[ToolSchema, ...]  # held: the key is their ids
    wire: list[ToolSchema]
    member: bytes  # '"tools":' and the wire form's JSON


class RequestText:
    """Per client: tool lists in wire form with their JSON, and request bodies as
    JSON payloads. A client serving event loops in several threads shares it: the
    kept lists change under a lock."""

    def __init__(self, max_tool_lists: int = MAX_TOOL_LISTS):
        self.max_tool_lists = max_tool_lists
        self._tools: OrderedDict[tuple[int, ...], _EncodedTools] = OrderedDict()
        self._lock = threading.Lock()

    def wire_tools(self, tools: list[ToolSchema]) -> list[ToolSchema]:
        """``openai_wire.wire_tools(tools)``, built once per tool list. The list is
        shared by every request offering these tools: it must not be changed."""
        return self._encoded(tools).wire

    def payload(self, body: Mapping[str, object], tools: list[ToolSchema]) -> bytes:
        """``json_bytes(body)``, where ``body["tools"]``, when it is this object's
        wire form of ``tools``, is its JSON kept from before.

        The entries before and after the tools are encoded as two objects and
        spliced around the kept JSON (two encoder calls, not one per entry)."""
        known = self._tools.get(tuple(map(id, tools))) if tools else None
        if known is None or body.get("tools") is not known.wire:
            return json_bytes(body)
        before: dict[str, object] = {}
        after: dict[str, object] = {}
        side = before
        for key, value in body.items():
            if key == "tools":
                side = after
            else:
                side[key] = value
        # An object's members are its JSON without the braces (b"" when it has none).
        parts = [json_bytes(before)[1:-1], known.member, json_bytes(after)[1:-1]]
        return b"{" + b",".join(part for part in parts if part) + b"}"

    def _encoded(self, tools: list[ToolSchema]) -> _EncodedTools:
        key = tuple(map(id, tools))
        with self._lock:
            entry = self._tools.get(key)
            if entry is not None:
                self._tools.move_to_end(key)
                return entry
        wire = wire_tools(tools)
        entry = _EncodedTools(tuple(tools), wire, b'"tools":' + json_bytes(wire))
        with self._lock:
            entry = self._tools.setdefault(key, entry)  # another thread's, if first
            if len(self._tools) > self.max_tool_lists:
                self._tools.popitem(last=False)
        return entry
