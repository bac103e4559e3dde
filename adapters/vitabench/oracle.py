"""The oracle model: plays a task's required orders through the tools, then stops."""

from __future__ import annotations

import copy

from harness.models.base import ModelClient
from harness.types import AssistantTurn, ToolCall

from .episode import AGENT_STOP

ORACLE_LINES = {
    "en": {
        "done": "I have taken care of your request. Is there anything else I can help with?",
        "unplanned": "I am sorry, I cannot complete this request.",
        "bye": f"Thank you, goodbye. {AGENT_STOP}",
    },
    "zh": {
        "done": "您的需求已经办理好了，请问还有其他需要吗？",
        "unplanned": "抱歉，这个需求我无法办理。",
        "bye": f"感谢您的使用，再见。{AGENT_STOP}",
    },
}


class VitaOracle(ModelClient):
    """Issues the planned tool calls one per reply, then says it is done, then
    ends the conversation with the stop token.

    It keeps no state of its own: how far it got is read from the conversation
    it is given, so one instance can serve any number of episodes.
    """

    name = "oracle"

    def __init__(self, calls: list[ToolCall], reason: str | None, language: str):
        self.calls = calls
        self.reason = reason
        self.lines = ORACLE_LINES[language]

    async def complete(self, messages, tools, params) -> AssistantTurn:
        assistant = [m for m in messages if m.get("role") == "assistant"]
        issued = sum(1 for m in assistant if m.get("tool_calls"))
        if issued < len(self.calls):
            call = copy.deepcopy(self.calls[issued])
            call.id = f"oracle_call_{issued}"
            return AssistantTurn(tool_calls=[call], finish_reason="tool_calls")
        spoken = sum(1 for m in assistant if not m.get("tool_calls"))
        if spoken == 0:
            text = self.lines["done"] if self.calls else self.lines["unplanned"]
            return AssistantTurn(content=text, finish_reason="stop")
        return AssistantTurn(content=self.lines["bye"], finish_reason="stop")

    def describe(self):
        return {
            "name": self.name,
            "kind": type(self).__name__,
            "planned_calls": len(self.calls),
            "unplanned_reason": self.reason,
        }
