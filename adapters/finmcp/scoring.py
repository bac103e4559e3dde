"""Scoring one stored trajectory against its item's gold trajectory.

The prediction is the assistant messages of the transcript (the messages the
model produced during the episode), cut per user turn by the official script's
tool-call cap: in a turn, a reply is counted if every earlier reply of the turn
called tools and the calls of all replies before the previous one number at
most the cap. That is the script's loop: it executes a reply's batch while the
turn's earlier calls number at most 20, and keeps (and counts) the reply that
follows an executed batch, whose own calls are then never executed if the cap was
passed. Replies the script would never have requested are not counted.
"""

from __future__ import annotations

from typing import Any

from harness.types import Message, Score, Trajectory

from .metrics import (
    count_names,
    exact_match_grouped,
    exact_match_ordered,
    message_tool_names,
    precision_recall_f1,
    tool_groups,
    tool_names,
)
from .replay import TOOL_CALL_CAP


def transcript_turns(messages: list[Message]) -> list[list[Message]]:
    """The transcript cut at each user message (each piece starts after it). Messages
    before the first user message, if any, form a piece of their own."""
    turns: list[list[Message]] = [[]]
    for message in messages:
        if message.get("hidden"):
            continue
        if message.get("role") == "user":
            turns.append([])
        else:
            turns[-1].append(message)
    return turns if turns[0] else turns[1:]


def counted_replies(turn: list[Message], cap: int = TOOL_CALL_CAP) -> list[Message]:
    """The assistant replies of one turn that the official loop would have kept."""
    kept: list[Message] = []
    calls_before = 0  # calls of the replies before the current one
    for message in turn:
        if message.get("role") != "assistant":
            continue
        kept.append(message)
        names = message_tool_names(message)
        if not names or calls_before > cap:
            break  # no calls: the turn is over; over the cap: this batch never ran
        calls_before += len(names)
    return kept


def predicted_messages(messages: list[Message], cap: int = TOOL_CALL_CAP) -> list[Message]:
    return [reply for turn in transcript_turns(messages) for reply in counted_replies(turn, cap)]


def _replay_counts(final_state: Any) -> dict[str, int]:
    if isinstance(final_state, dict) and isinstance(final_state.get("replay_counts"), dict):
        return {str(k): int(v) for k, v in final_state["replay_counts"].items()}
    return {}


def score_trajectory(gold_messages: list[Message], trajectory: Trajectory) -> Score:
    """The per-item score: passed = ordered exact match, progress = item F1."""
    predicted_all = tool_names(m for m in trajectory.messages if m.get("role") == "assistant")
    predicted = tool_names(predicted_messages(trajectory.messages))
    gold = tool_names(gold_messages)
    counts = count_names(predicted, gold)
    precision, recall, f1 = precision_recall_f1(counts.tp, counts.fp, counts.fn)
    ordered = exact_match_ordered(predicted, gold)
    grouped = exact_match_grouped(predicted, tool_groups(gold_messages))
    return Score(
        passed=ordered,
        reward=1.0 if ordered else 0.0,
        progress=f1,
        tool_tp=counts.tp,
        tool_fp=counts.fp,
        tool_fn=counts.fn,
        details={
            "precision": precision,
            "recall": recall,
            "f1": f1,
            "exact_match_ordered": ordered,
            "exact_match_grouped": grouped,
            "gold_tools": gold,
            "predicted_tools": predicted,
            "uncounted_calls_after_cap": len(predicted_all) - len(predicted),
            "replay": _replay_counts(trajectory.final_state),
            "termination": trajectory.termination,
        },
    )
