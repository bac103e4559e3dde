"""The oracle model: replays an item's gold assistant messages turn by turn."""

from __future__ import annotations

from harness.models.base import ModelClient
from harness.types import AssistantTurn, Message, ToolCall

from .gold import GoldTurn


def _assistant_turn(message: Message) -> AssistantTurn:
    calls = [ToolCall.from_openai(call) for call in message.get("tool_calls") or []]
    return AssistantTurn(
        content=message.get("content"),
        tool_calls=calls,
        finish_reason="tool_calls" if calls else "stop",
    )


class GoldOracle(ModelClient):
    """Answers with the gold assistant message that comes next in the given context.

    The context is the gold history up to the i-th user message plus the oracle's
    own messages of turn i, so i is the number of user messages minus one and the
    next reply is the k-th gold assistant message of that turn, k being the number
    of assistant messages after the last user message. A turn without gold replies
    (the item ends on a user message) gets an empty text answer.
    """

    name = "oracle"

    def __init__(self, turns: list[GoldTurn]):
        self._turns = list(turns)

    async def complete(self, messages, tools, params) -> AssistantTurn:
        user_positions = [i for i, m in enumerate(messages) if m.get("role") == "user"]
        if not user_positions or len(user_positions) > len(self._turns):
            return AssistantTurn(content="", finish_reason="stop")
        turn = self._turns[len(user_positions) - 1]
        done = sum(1 for m in messages[user_positions[-1] + 1 :] if m.get("role") == "assistant")
        replies = [m for m in turn.replies if m.get("role") == "assistant"]
        if done >= len(replies):
            return AssistantTurn(content="", finish_reason="stop")
        return _assistant_turn(replies[done])
