"""Scoring one stored trajectory against its item's gold trajectory.

The prediction is the assistant messages of the transcript (the messages the
model produced during the episode), cut per user turn by the official script's
tool-call cap: in a turn, a reply is counted if every earlier reply of the turn
called tools and the calls of all replies before the previous one number at
most the cap. That is the script's loop: it executes a reply's batch while the
turn's earlier calls number at most 20, and keeps (and counts) the reply that
follows an executed batch, whose own calls are then never executed if the cap was
passed. Replies the script would never have requested are not counted.

Malformed tool-call arguments make the official loop drop the item (dropping.py).
With the default ``drop`` protocol such an item's score has no tool counts (it
leaves every sum, as in the official script) and says why in ``details``; its
counts as the item ran stay in ``details["tool_counts"]`` so that they can be
reported apart. The ``count`` protocol scores it like any other item.
"""

from __future__ import annotations

from harness.types import Message, Score, ToolCall, Trajectory

from .dropping import DROP, CountedReply, drop_reason
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


def _calls_by_reply(trajectory: Trajectory) -> dict[int, list[ToolCall]]:
    """The parsed calls of each assistant message (by ``id``), with the model's raw
    argument strings: from the trajectory's parsed turns when they pair one to one
    with the transcript's assistant messages, else parsed again from the messages."""
    replies = [
        m for m in trajectory.messages if m.get("role") == "assistant" and not m.get("hidden")
    ]
    paired = len(replies) == len(trajectory.turns)
    calls = {}
    for index, message in enumerate(replies):
        if paired:
            calls[id(message)] = list(trajectory.turns[index].tool_calls)
        else:
            raw = [c for c in message.get("tool_calls") or [] if isinstance(c, dict)]
            calls[id(message)] = [ToolCall.from_openai(c) for c in raw]
    return calls


def official_replies(trajectory: Trajectory, cap: int = TOOL_CALL_CAP) -> list[CountedReply]:
    """The replies the official loop keeps, each with whether it ran their calls
    (it runs a batch while the turn's earlier calls number at most ``cap``)."""
    calls = _calls_by_reply(trajectory)
    kept = []
    for turn in transcript_turns(trajectory.messages):
        calls_before = 0
        for reply in counted_replies(turn, cap):
            reply_calls = calls.get(id(reply), [])
            kept.append(CountedReply(reply_calls, executed=calls_before <= cap))
            calls_before += len(reply_calls)
    return kept


def _replay_counts(final_state: object) -> dict[str, int]:
    if isinstance(final_state, dict) and isinstance(final_state.get("replay_counts"), dict):
        return {str(k): int(v) for k, v in final_state["replay_counts"].items()}
    return {}


def score_trajectory(
    gold_messages: list[Message],
    trajectory: Trajectory,
    malformed: str = DROP,
    prompt_mode: bool = False,
    cap: int = TOOL_CALL_CAP,
) -> Score:
    """The per-item score: passed = ordered exact match, progress = item F1;
    ``malformed`` is the protocol for malformed arguments (dropping.py)."""
    predicted_all = tool_names(m for m in trajectory.messages if m.get("role") == "assistant")
    predicted = tool_names(predicted_messages(trajectory.messages, cap))
    gold = tool_names(gold_messages)
    counts = count_names(predicted, gold)
    precision, recall, f1 = precision_recall_f1(counts.tp, counts.fp, counts.fn)
    ordered = exact_match_ordered(predicted, gold)
    grouped = exact_match_grouped(predicted, tool_groups(gold_messages))
    problem = drop_reason(official_replies(trajectory, cap), prompt_mode)
    dropped = problem is not None and malformed == DROP
    return Score(
        passed=ordered and not dropped,
        reward=1.0 if ordered and not dropped else 0.0,
        progress=None if dropped else f1,
        tool_tp=None if dropped else counts.tp,
        tool_fp=None if dropped else counts.fp,
        tool_fn=None if dropped else counts.fn,
        details={
            "malformed_arguments": problem,
            "malformed_protocol": malformed,
            "dropped": dropped,
            "tool_counts": {"tp": counts.tp, "fp": counts.fp, "fn": counts.fn},
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
