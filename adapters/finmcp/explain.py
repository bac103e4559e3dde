"""What a FinMCP-Bench item expects (its gold calls) and why a run of it failed.

The item passes on an ordered exact match of tool names; the explanation names the
gold calls the model missed, the calls it made that the gold has not, and (when the
names are right) that their order differs.
"""

from __future__ import annotations

import json
from collections import Counter

from harness.boundary.json_value import JsonObject, JsonValue
from harness.types import Message, Score

MAX_SHOWN_CHARS = 160


def _short(value: object) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= MAX_SHOWN_CHARS else text[: MAX_SHOWN_CHARS - 1] + "…"


def _gold_calls(gold_messages: list[Message]) -> list[str]:
    calls = []
    for message in gold_messages:
        if message.get("role") != "assistant":
            continue
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            calls.append(f"{function.get('name')}({_short(function.get('arguments') or '')})")
    return calls


def gold_view(gold_messages: list[Message]) -> JsonObject:
    """The gold calls in order, and the gold's final answer (the item's last reply)."""
    calls: list[JsonValue] = list(_gold_calls(gold_messages))
    view: JsonObject = {"gold calls (in order)": calls}
    replies = [
        m.get("content")
        for m in gold_messages
        if m.get("role") == "assistant" and not m.get("tool_calls") and m.get("content")
    ]
    if replies:
        view["gold final answer"] = _short(replies[-1])
    return view


def _listed(names: Counter[str]) -> str:
    return ", ".join(f"`{n}`" + (f" ×{c}" if c > 1 else "") for n, c in names.items())


def explain_failure(score: Score) -> str:
    details = score.details
    gold = [str(n) for n in details.get("gold_tools") or []]
    predicted = [str(n) for n in details.get("predicted_tools") or []]
    lines = []
    if details.get("dropped"):
        lines.append(
            f"left out of the sums: malformed arguments ({details.get('malformed_arguments')})"
        )
    missed = Counter(gold) - Counter(predicted)
    extra = Counter(predicted) - Counter(gold)
    lines.append(f"expected {len(gold)} gold call(s), got {len(predicted)}")
    if missed:
        lines.append(f"gold calls missed: {_listed(missed)}")
    if extra:
        lines.append(f"calls not in the gold: {_listed(extra)}")
    if not missed and not extra and gold != predicted:
        lines.append(
            f"the same calls in another order: expected {' → '.join(gold)}, "
            f"got {' → '.join(predicted)}"
        )
    after_cap = details.get("uncounted_calls_after_cap")
    if after_cap:
        lines.append(f"{after_cap} call(s) past the per-turn cap were not counted")
    return "\n".join(lines)
