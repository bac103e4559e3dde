"""The oracle agent: plays a task's gold actions through the normal model interface.

Its script, one assistant message per step:
- each gold agent action as one tool call, in gold order;
- before each run of gold user actions (telecom), one message asking the user to
  perform them, naming each tool (the scripted user acts on that request);
- last, one message with every ``communicate_info`` string (tau2's COMMUNICATE
  check looks for each string in the agent's messages).
The step to play is the number of its own messages in the context (the greeting
excluded), so one oracle can serve any number of episodes.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import TYPE_CHECKING

from harness.models.base import ModelClient
from harness.models.calls import format_python_call
from harness.types import AssistantTurn, ToolCall

if TYPE_CHECKING:
    from tau2.data_model.tasks import Action, Task

CLOSING = "Is there anything else I can help you with?"


def action_runs(actions: list[Action]) -> list[list[Action]]:
    """Consecutive gold actions grouped by who performs them."""
    runs: list[list[Action]] = []
    for action in actions:
        if runs and runs[-1][0].requestor == action.requestor:
            runs[-1].append(action)
        else:
            runs.append([action])
    return runs


def request_text(actions: list[Action]) -> str:
    steps = "; then ".join(format_python_call(a.name, a.arguments) for a in actions)
    return f"Please do the following on your phone, one at a time: {steps}."


def final_text(communicate_info: list[str]) -> str:
    if not communicate_info:
        return "Your request has been handled. " + CLOSING
    return "Here is the information you asked for: " + "; ".join(communicate_info) + "."


def oracle_script(task: Task, skip_action_ids: Collection[str] = ()) -> list[AssistantTurn]:
    criteria = task.evaluation_criteria
    gold = (criteria.actions or []) if criteria is not None else []
    actions = [a for a in gold if a.action_id not in skip_action_ids]
    script: list[AssistantTurn] = []
    for run in action_runs(actions):
        if run[0].requestor == "user":
            script.append(AssistantTurn(content=request_text(run), finish_reason="stop"))
            continue
        for action in run:
            call = ToolCall(
                id=f"oracle_{len(script)}",
                name=action.name,
                arguments=dict(action.arguments),
                raw_arguments=json.dumps(action.arguments),
            )
            script.append(AssistantTurn(tool_calls=[call], finish_reason="tool_calls"))
    communicate = (criteria.communicate_info or []) if criteria is not None else []
    script.append(AssistantTurn(content=final_text(communicate)))
    return script


class ScriptPlayer(ModelClient):
    """Plays a script one reply a step; after it, answers with a closing question."""

    name = "script"

    def __init__(self, script: list[AssistantTurn]):
        self._script = script

    async def complete(self, messages, tools, params) -> AssistantTurn:
        own = sum(1 for m in messages if m.get("role") == "assistant") - 1  # minus the greeting
        if 0 <= own < len(self._script):
            step = self._script[own]
            return AssistantTurn(
                content=step.content,
                tool_calls=[ToolCall.from_dict(c.to_dict()) for c in step.tool_calls],
                finish_reason=step.finish_reason,
            )
        return AssistantTurn(content=CLOSING, finish_reason="stop")


class Tau2Oracle(ScriptPlayer):
    """Plays the gold script (``oracle_script``)."""

    name = "oracle"

    def __init__(self, task: Task, skip_action_ids: Collection[str] = ()):
        super().__init__(oracle_script(task, skip_action_ids))
