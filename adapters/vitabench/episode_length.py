"""How many model calls a VitaBench task's episode makes in a row, estimated from
its rubrics (``Adapter.expected_model_calls``: the run starts the longest first).

A task names no gold actions; each rubric is a requirement the conversation has to
meet (a store, a time, an order's item...), which the agent settles with about a
tool call and the simulated user with a reply. Around them: the conversation's
opening and closing exchanges.
"""

from __future__ import annotations

from .data import VitaTask

CONVERSATION_CALLS = 4
CALLS_PER_RUBRIC = 2


def expected_model_calls(task: VitaTask) -> float:
    return float(CONVERSATION_CALLS + CALLS_PER_RUBRIC * len(task.rubrics))
