"""The gold side of one item: its user turns and its recorded tool calls.

An item's ``messages`` is the expert-verified trajectory in OpenAI chat format,
tool outputs included. Teacher forcing needs it cut at every user message; the
replay environment needs every (call, recorded output) pair.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass

from harness.boundary.json_value import JsonMapping, JsonObject, JsonValue
from harness.types import Message, parse_arguments


@dataclass(frozen=True)
class GoldTurn:
    """One gold user turn: the gold history before it, the user message, and the
    gold messages that answer it (up to the next user message)."""

    history: list[Message]
    user_message: Message
    replies: list[Message]


def gold_turns(messages: list[Message]) -> list[GoldTurn]:
    """Every user message of the gold trajectory, with its history and replies."""
    user_positions = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    turns = []
    for n, position in enumerate(user_positions):
        end = user_positions[n + 1] if n + 1 < len(user_positions) else len(messages)
        turns.append(
            GoldTurn(
                history=copy.deepcopy(messages[:position]),
                user_message=copy.deepcopy(messages[position]),
                replies=copy.deepcopy(messages[position + 1 : end]),
            )
        )
    return turns


def normalize_value(value: JsonValue) -> JsonValue:
    """Integral floats become ints (1.0 == 1), recursively, so equal arguments compare equal."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [normalize_value(v) for v in value]
    if isinstance(value, dict):
        return normalize_arguments(value)
    return value


def normalize_arguments(arguments: JsonMapping) -> JsonObject:
    """``normalize_value`` of an arguments object."""
    return {str(k): normalize_value(v) for k, v in arguments.items()}


def canonical_arguments(arguments: JsonMapping) -> str:
    return json.dumps(
        normalize_arguments(arguments), sort_keys=True, ensure_ascii=False, separators=(",", ":")
    )


@dataclass(frozen=True)
class RecordedCall:
    """One gold tool call and the output the live server returned for it."""

    index: int  # position among the item's gold calls
    name: str
    arguments: JsonObject | None  # None when the gold arguments are not a JSON object
    output: str

    @property
    def canonical(self) -> str | None:
        return None if self.arguments is None else canonical_arguments(self.arguments)


def _output_text(content: object) -> str:
    if isinstance(content, str):
        return content
    return json.dumps(content, ensure_ascii=False)


def _call_arguments(call: Message) -> JsonObject | None:
    raw = (call.get("function") or {}).get("arguments")
    if isinstance(raw, dict):
        return raw
    arguments, _ = parse_arguments("" if raw is None else str(raw))
    return arguments


def recorded_calls(messages: list[Message]) -> list[RecordedCall]:
    """Every gold call paired with its tool message: by ``tool_call_id``, else the
    next unpaired tool message after the call (gold messages without ids)."""
    tool_messages = [(i, m) for i, m in enumerate(messages) if m.get("role") == "tool"]
    used: set[int] = set()
    calls: list[RecordedCall] = []
    for position, message in enumerate(messages):
        if message.get("role") != "assistant":
            continue
        for call in message.get("tool_calls") or []:
            call_id = call.get("id")
            match = next(
                (
                    i
                    for i, m in tool_messages
                    if i not in used and call_id and m.get("tool_call_id") == call_id
                ),
                None,
            )
            if match is None:
                match = next((i for i, _ in tool_messages if i not in used and i > position), None)
            output = ""
            if match is not None:
                used.add(match)
                output = _output_text(messages[match].get("content"))
            calls.append(
                RecordedCall(
                    index=len(calls),
                    name=str((call.get("function") or {}).get("name") or ""),
                    arguments=_call_arguments(call),
                    output=output,
                )
            )
    return calls
