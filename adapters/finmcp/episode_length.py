"""How many model calls a FinMCP-Bench item's episode makes in a row, estimated
from its recorded trajectory (``Adapter.expected_model_calls``: the run starts the
longest first): its user turns are replayed from it, and each turn takes as many
model calls as it holds assistant messages, at least one (a turn the recording
ends on, without a reply, is still answered)."""

from __future__ import annotations

from harness.types import Message


def expected_model_calls(gold: list[Message]) -> float:
    calls = 0
    replies_this_turn: int | None = None  # None: before the first user message
    for message in gold:
        role = message.get("role")
        if role == "user":
            if replies_this_turn == 0:
                calls += 1
            replies_this_turn = 0
        elif role == "assistant":
            calls += 1
            replies_this_turn = (replies_this_turn or 0) + 1
    if replies_this_turn == 0:
        calls += 1
    return float(max(1, calls))
