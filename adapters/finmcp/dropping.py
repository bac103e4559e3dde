"""The official loop's rule for malformed tool-call arguments: the item is dropped.

FinMCP's official inference loop (DianJin-TIR, ``infer/inference_api.py``) reads
every streamed tool call into a dict and only sets its ``name`` and ``arguments``
keys when the server sent a non-empty piece. Two steps of the loop then fail on a
bad call, and any failure ends the whole item: the item's record becomes
``{"error": true, "messages_pred": []}`` and ``eval/evaluation.py`` drops it.

1. Every reply with tool calls is turned into a message that reads each call's
   name and arguments: a call with an empty name or empty arguments fails here,
   also in the unexecuted reply after the per-turn cap.
2. Every reply whose batch is executed (the turn's earlier calls number at most
   the cap) first decodes each call's arguments with ``json.loads``: text that is
   not JSON (whitespace only, cut-off or invalid JSON) fails here. JSON that is not
   an object (``[1]``, ``5``, ``null``) decodes, goes to the server and only gets
   an error answer; the item is kept.

The episode itself runs on (the model sees an error for the call and goes on), so
both protocols can be scored from the same stored record: ``drop`` (default, the
official one) or ``count`` (score the item as it ran; not the official protocol).

In prompt mode there is no official counterpart (the official loop uses native
tool calls): there a call is malformed when the harness could not decode its
arguments into an object, and only in an executed reply.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from harness.errors import ConfigError
from harness.types import ToolCall

OPTION = "malformed_arguments"
DROP = "drop"  # the official protocol
COUNT = "count"  # score the item as it ran (not the official protocol)
MODES = (DROP, COUNT)


def mode_option(options: Mapping[str, object]) -> str:
    """The load option's value, checked (default: the official ``drop``)."""
    value = options.get(OPTION, DROP)
    if not isinstance(value, str) or value not in MODES:
        raise ConfigError(
            f"finmcp option '{OPTION}' must be one of {', '.join(MODES)}, got {value!r}"
        )
    return value


@dataclass(frozen=True)
class CountedReply:
    """One reply the official loop keeps: its tool calls and whether it ran them."""

    calls: Sequence[ToolCall]
    executed: bool


def _decodes(raw: str) -> bool:
    try:
        json.loads(raw)
    except (ValueError, RecursionError):  # JSONDecodeError is a ValueError
        return False
    return True


def call_problem(call: ToolCall, executed: bool, prompt_mode: bool = False) -> str | None:
    """Why the official loop would fail on this call, or None."""
    if not call.name:
        return "a tool call without a name"
    if prompt_mode:
        if executed and call.arguments is None:
            return f"arguments of '{call.name}' could not be decoded"
        return None
    if call.raw_arguments == "":
        return f"empty arguments of '{call.name}'"
    if executed and not _decodes(call.raw_arguments):
        return f"arguments of '{call.name}' are not JSON"
    return None


def drop_reason(replies: Sequence[CountedReply], prompt_mode: bool = False) -> str | None:
    """The first malformed call among the replies the official loop keeps, or None."""
    for reply in replies:
        for call in reply.calls:
            problem = call_problem(call, reply.executed, prompt_mode)
            if problem is not None:
                return problem
    return None
