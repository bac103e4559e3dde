"""A model's reply kept once in a record.

A trajectory holds each reply twice in memory: as a parsed turn (``turns``: the
text, the tool calls with their arguments as an object and as text, reasoning,
usage) and as the assistant message the conversation carried (``messages``).
Written out as it is, a reply's text would be stored twice and each tool call's
arguments three times, the two texts escaped once more inside the JSON line: a
10 MB argument made a record of 30 to 45 MB.

On disk:

- an assistant message that is exactly a turn's reply is ``{"role": "assistant",
  "turn": <index>}``, rebuilt from the turn as ``AssistantTurn.to_message`` builds it;
- a turn's tool call keeps one form of its arguments where the other follows from
  it: the object, with ``"raw_arguments_as"`` naming how its text is written
  (``json``: ``json.dumps``; ``json-compact``: without spaces, as OpenAI writes),
  or the text alone when it reads back (``json.loads``) as the object. Both stay
  when neither follows (arguments cut, repaired or refused when parsed).

``expand_record`` puts everything back as ``Trajectory.to_dict`` wrote it, so each
reader (regrade, report, view, compare, the exports) reads the full form. A
record written before this has full turns and messages and reads as it always did.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TypeGuard

from harness.boundary.json_value import JsonList, JsonObject, JsonValue

TURN = "turn"  # the key of a message that is a turn's reply
WRITTEN_AS = "raw_arguments_as"  # the key of a call whose text is its arguments written out
# How a call's arguments text is written from its arguments, by name.
# (Encoders made once: json.dumps with options makes one per call, most of its
# time for the small arguments of a typical call.)
WRITERS: dict[str, Callable[[object], str]] = {
    "json": json.JSONEncoder(ensure_ascii=False).encode,
    "json-compact": json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode,
}


# -- writing ------------------------------------------------------------------------


def compact_record(data: JsonObject) -> JsonObject:
    """``data`` (Record.to_dict) with each reply stored once; ``data`` itself, and
    everything in it, is left as it is."""
    trajectory = data.get("trajectory")
    if not isinstance(trajectory, dict):
        return data
    turns = trajectory.get("turns")
    if not isinstance(turns, list):
        return data
    messages = trajectory.get("messages")
    stored: JsonObject = dict(trajectory, turns=[_compact_turn(turn) for turn in turns])
    if isinstance(messages, list):
        stored["messages"] = _compact_messages(messages, turns)
    return {**data, "trajectory": stored}


def _compact_messages(messages: JsonList, turns: JsonList) -> JsonList:
    """Each message that is the next turn's reply (in transcript order) as a pointer."""
    replies = [reply_message(turn) for turn in turns]
    stored: JsonList = []
    start = 0
    for message in messages:
        index = _reply_index(message, replies, start)
        if index is None:
            stored.append(message)
        else:
            stored.append({"role": "assistant", TURN: index})
            start = index + 1
    return stored


def _reply_index(message: JsonValue, replies: list[JsonObject | None], start: int) -> int | None:
    if not isinstance(message, dict) or message.get("role") != "assistant":
        return None
    for index in range(start, len(replies)):
        if replies[index] is not None and message == replies[index]:
            return index
    return None


def _compact_turn(turn: JsonValue) -> JsonValue:
    if not isinstance(turn, dict):
        return turn
    calls = turn.get("tool_calls")
    if not isinstance(calls, list) or not calls:
        return turn
    return {**turn, "tool_calls": [_compact_call(call) for call in calls]}


def _compact_call(call: JsonValue) -> JsonValue:
    if not isinstance(call, dict):
        return call
    text, arguments = call.get("raw_arguments"), call.get("arguments")
    if not isinstance(text, str):
        return call
    name = _writer_of(text, arguments)
    if name is not None:
        stored = {k: v for k, v in call.items() if k != "raw_arguments"}
        return {**stored, WRITTEN_AS: name}
    if _reads_back(text, arguments):
        return {k: v for k, v in call.items() if k != "arguments"}
    return call


def _writer_of(text: str, arguments: JsonValue) -> str | None:
    """The name of the writer that writes ``arguments`` as ``text``, or None."""
    if not isinstance(arguments, dict):
        return None
    for name, write in WRITERS.items():
        try:
            if write(arguments) == text:
                return name
        except (TypeError, ValueError, RecursionError):
            return None  # not JSON data: the text stays
    return None


def _reads_back(text: str, arguments: JsonValue) -> bool:
    """Whether ``json.loads(text)`` gives ``arguments``, written out the same."""
    if not isinstance(arguments, dict):
        return False
    try:
        parsed = json.loads(text)
        # Compared as written: 1 and 1.0 (or True) are equal to Python, not in a record.
        return isinstance(parsed, dict) and WRITERS["json"](parsed) == WRITERS["json"](arguments)
    except (TypeError, ValueError, RecursionError):
        return False


def reply_message(turn: JsonValue) -> JsonObject | None:
    """The assistant message of a stored turn (its full form), as
    ``AssistantTurn.to_message`` builds it; None for what is not a turn."""
    if not isinstance(turn, dict):
        return None
    message: JsonObject = {"role": "assistant", "content": turn.get("content")}
    calls = turn.get("tool_calls")
    if calls:
        if not isinstance(calls, list):
            return None
        tool_calls: JsonList = []
        for call in calls:
            if not _is_full_call(call):
                return None
            function: JsonObject = {"name": call["name"], "arguments": _arguments_text(call)}
            tool_calls.append({"id": call["id"], "type": "function", "function": function})
        message["tool_calls"] = tool_calls
    return message


def _is_full_call(call: JsonValue) -> TypeGuard[JsonObject]:
    return isinstance(call, dict) and "id" in call and "name" in call


def _arguments_text(call: JsonObject) -> JsonValue:
    """The text the conversation carried; a call stored without it (another
    writer's) carried its arguments' JSON, as ``ToolCall.from_dict`` reads it."""
    if "raw_arguments" in call:
        return call["raw_arguments"]
    arguments = call.get("arguments")
    try:
        return WRITERS["json"](arguments) if isinstance(arguments, dict) and arguments else ""
    except (TypeError, ValueError, RecursionError):
        return ""


# -- reading ------------------------------------------------------------------------


def expand_record(data: JsonObject) -> str | None:
    """Put back, in place, every reply stored once: the turns' arguments in both
    forms, the messages that point at a turn. Why that cannot be done (the place
    and the reason), or None."""
    trajectory = data.get("trajectory")
    if not isinstance(trajectory, dict):
        return None
    turns = trajectory.get("turns")
    if isinstance(turns, list):
        for number, turn in enumerate(turns):
            problem = _expand_turn(turn, f"trajectory.turns[{number}]")
            if problem is not None:
                return problem
    messages = trajectory.get("messages")
    if isinstance(messages, list):
        for number, message in enumerate(messages):
            if isinstance(message, dict) and TURN in message and message.get("role") == "assistant":
                where = f"trajectory.messages[{number}].{TURN}"
                full = _message_of(message[TURN], turns if isinstance(turns, list) else [])
                if full is None:
                    return f"{where}: {message[TURN]!r}, not the index of a turn"
                messages[number] = full
    return None


def _message_of(index: JsonValue, turns: JsonList) -> JsonObject | None:
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(turns):
        return None
    return reply_message(turns[index])


def _expand_turn(turn: JsonValue, where: str) -> str | None:
    calls = turn.get("tool_calls") if isinstance(turn, dict) else None
    if not isinstance(calls, list):
        return None
    for number, call in enumerate(calls):
        if not isinstance(call, dict):
            continue  # the record's shape check names it
        full = _expanded_call(call)
        if full is None:
            return f"{where}.tool_calls[{number}]: its arguments are stored in no form read here"
        calls[number] = full
    return None


def _expanded_call(call: JsonObject) -> JsonObject | None:
    if WRITTEN_AS in call:
        name = call[WRITTEN_AS]
        write = WRITERS.get(name) if isinstance(name, str) else None
        if write is None or not isinstance(call.get("arguments"), dict):
            return None
        try:
            text = write(call["arguments"])
        except (TypeError, ValueError, RecursionError):
            return None
        return _in_order(call, call["arguments"], text)
    raw = call.get("raw_arguments")
    if "arguments" not in call and isinstance(raw, str):
        try:
            arguments = json.loads(raw)
        except (ValueError, RecursionError):
            return None
        return _in_order(call, arguments, raw)
    return call


def _in_order(call: JsonObject, arguments: JsonValue, text: str) -> JsonObject:
    """The call as ``ToolCall.to_dict`` writes it: its keys in that order."""
    rest = {
        k: v
        for k, v in call.items()
        if k not in ("id", "name", "arguments", "raw_arguments", WRITTEN_AS)
    }
    full = {"id": call.get("id"), "name": call.get("name"), "arguments": arguments}
    return {**full, "raw_arguments": text, **rest}
