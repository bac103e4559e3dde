"""How many model calls a τ² task's episode makes in a row, estimated from its
gold actions (``Adapter.expected_model_calls``: the run starts the longest first).

An agent action is a reply with its call; a user action (dual control) is the
agent's reply asking for it and the simulated user's turn doing it; and around
them the conversation's opening and closing exchanges of text, with the user
simulator's replies in between.
"""

from __future__ import annotations

from collections.abc import Mapping

from harness.boundary.json_value import count_field

CONVERSATION_CALLS = 4
CALLS_PER_USER_ACTION = 2


def expected_model_calls(metadata: Mapping[str, object]) -> float:
    """From a sample's metadata (its counts of gold agent and user actions)."""
    agent = count_field(metadata.get("num_agent_actions"))
    user = count_field(metadata.get("num_user_actions"))
    return float(CONVERSATION_CALLS + agent + CALLS_PER_USER_ACTION * user)
