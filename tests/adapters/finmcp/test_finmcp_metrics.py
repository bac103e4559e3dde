"""FinMCP-Bench metric formulas, pinned on hand-made multisets."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.adapters.finmcp.metrics import (
    ItemResult,
    count_names,
    exact_match_grouped,
    exact_match_ordered,
    precision_recall_f1,
    summarize,
    tool_groups,
    tool_names,
)
from harness.adapters.finmcp.scoring import counted_replies, transcript_turns


def call(name: str) -> dict:
    return {"id": f"c_{name}", "type": "function", "function": {"name": name, "arguments": "{}"}}


def assistant(*names: str, content: str | None = None) -> dict:
    message = {"role": "assistant", "content": content}
    if names:
        message["tool_calls"] = [call(n) for n in names]
    return message


@pytest.mark.parametrize(
    ("predicted", "gold", "expected"),
    [
        (["A"], ["A"], (1, 0, 0)),
        ([], ["A", "B"], (0, 0, 2)),  # missing
        (["A", "B", "C"], ["A"], (1, 2, 0)),  # extra
        (["A", "A", "A"], ["A", "A"], (2, 1, 0)),  # duplicates beyond gold are FP
        (["A"], ["A", "A", "A", "A", "A"], (1, 0, 4)),  # one tool called five times in gold
        (["B", "A"], ["A", "B"], (2, 0, 0)),  # order never matters for the counts
        (["A", "C", "C"], ["A", "B", "B"], (1, 2, 2)),
        ([], [], (0, 0, 0)),
    ],
)
def test_count_names(predicted, gold, expected):
    counts = count_names(predicted, gold)
    assert (counts.tp, counts.fp, counts.fn) == expected


def test_precision_recall_f1_and_zero_denominators():
    assert precision_recall_f1(1, 2, 2) == pytest.approx((1 / 3, 1 / 3, 1 / 3))
    assert precision_recall_f1(3, 0, 3) == pytest.approx((1.0, 0.5, 2 / 3))
    # No prediction: precision is 0 (not 1), as in the official script.
    assert precision_recall_f1(0, 0, 4) == (0.0, 0.0, 0.0)
    assert precision_recall_f1(0, 0, 0) == (0.0, 0.0, 0.0)


def test_names_and_groups_come_from_assistant_messages_only():
    messages = [
        {"role": "user", "content": "q"},
        assistant("A", "B"),
        {"role": "tool", "tool_call_id": "c_A", "content": "x"},
        {**assistant("HIDDEN"), "hidden": True},
        assistant("C"),
        assistant(content="answer"),
    ]
    assert tool_groups(messages) == [["A", "B"], ["C"]]
    assert tool_names(messages) == ["A", "B", "C"]


def test_exact_match_ordered_is_order_sensitive():
    assert exact_match_ordered(["A", "B"], ["A", "B"])
    assert not exact_match_ordered(["B", "A"], ["A", "B"])
    assert not exact_match_ordered(["A"], ["A", "A"])


def test_exact_match_grouped_ignores_order_inside_gold_parallel_groups_only():
    gold_groups = [["A", "B"], ["C"], ["D", "D", "E"]]
    assert exact_match_grouped(["B", "A", "C", "E", "D", "D"], gold_groups)
    # The same calls issued one per message still match: grouping follows the gold.
    assert exact_match_grouped(["A", "B", "C", "D", "E", "D"], gold_groups)
    # Crossing a group boundary is a mismatch.
    assert not exact_match_grouped(["A", "C", "B", "D", "D", "E"], gold_groups)
    # Wrong multiplicity inside a group, or a different length.
    assert not exact_match_grouped(["A", "A", "C", "D", "D", "E"], gold_groups)
    assert not exact_match_grouped(["A", "B", "C", "D", "D", "E", "E"], gold_groups)
    assert exact_match_grouped([], [])


@given(st.lists(st.lists(st.sampled_from("ABCD"), min_size=1, max_size=3), max_size=4))
def test_ordered_match_implies_grouped_match(groups):
    flat = [name for group in groups for name in group]
    assert exact_match_grouped(flat, groups)
    assert exact_match_grouped([n for g in groups for n in reversed(g)], groups)


def test_summarize_micro_macro_by_hand():
    items = [
        ItemResult(tp=1, fp=2, fn=2, exact_ordered=False, exact_grouped=False),
        ItemResult(tp=3, fp=0, fn=3, exact_ordered=False, exact_grouped=True),
        ItemResult(tp=0, fp=0, fn=1, exact_ordered=False, exact_grouped=False),
        ItemResult(tp=1, fp=0, fn=0, exact_ordered=True, exact_grouped=True),
    ]
    result = summarize(items)
    # micro: TP 5, FP 2, FN 6
    assert result["micro_precision"] == pytest.approx(5 / 7)
    assert result["micro_recall"] == pytest.approx(5 / 11)
    assert result["micro_f1"] == pytest.approx(5 / 9)
    # macro: per-item P (1/3, 1, 0, 1), R (1/3, 1/2, 0, 1), F1 (1/3, 2/3, 0, 1)
    assert result["macro_precision"] == pytest.approx(7 / 12)
    assert result["macro_recall"] == pytest.approx(11 / 24)
    assert result["macro_f1"] == pytest.approx(0.5)
    assert result["exact_match_ordered"] == pytest.approx(0.25)
    assert result["exact_match_grouped"] == pytest.approx(0.5)
    assert (result["tp"], result["fp"], result["fn"], result["n"]) == (5, 2, 6, 4)


def test_summarize_of_nothing_is_zero():
    assert all(value == 0 for value in summarize([]).values())


# (model, P, R, F1) as published (percent, "All" split), from the spec.
PUBLISHED = [
    ("Qwen3-235B-A22B-Thinking", 60.22, 68.90, 64.27),
    ("Qwen3-30B-A3B-Thinking", 61.75, 50.53, 55.58),
    ("Qwen3-4B-Thinking", 58.02, 44.06, 50.08),
    ("DeepSeek-R1", 64.79, 40.55, 49.88),
    ("Seed-OSS-36B", 50.36, 32.28, 39.34),
    ("GPT-OSS-20B", 25.97, 43.84, 32.62),
    ("EnvACE-8B", 54.04, 41.23, 46.78),
    ("Qwen3-8B", 39.47, 43.18, 41.24),
    ("EnvScaler-8B", 39.18, 49.35, 43.68),
    ("AWM-8B", 39.18, 46.43, 42.50),
    ("Simulator-8B", 26.72, 11.36, 15.95),
]


@pytest.mark.parametrize(("model", "precision", "recall", "f1"), PUBLISHED)
def test_published_f1_is_the_micro_harmonic_mean(model, precision, recall, f1):
    assert 2 * precision * recall / (precision + recall) == pytest.approx(f1, abs=0.01)


# -- the official per-turn tool-call cap ------------------------------------------


def official_loop(batch_sizes: list[int], cap: int) -> list[int]:
    """The official inference loop, simulated: which replies it keeps, given the
    number of calls each successive model reply would make (0 = text answer)."""
    kept = [batch_sizes[0]]
    if batch_sizes[0] == 0:
        return kept
    made = 0
    index = 0
    while batch_sizes[index] != 0 and made <= cap:
        made += batch_sizes[index]
        index += 1
        if index >= len(batch_sizes):
            break
        kept.append(batch_sizes[index])
    return kept


def turn_of(batch_sizes: list[int]) -> list[dict]:
    messages = []
    for n, size in enumerate(batch_sizes):
        messages.append(assistant(*[f"T{n}"] * size, content=None if size else "done"))
        messages.extend({"role": "tool", "tool_call_id": "x", "content": "r"} for _ in range(size))
    return messages


def test_counted_replies_follows_the_official_batch_rule():
    # 15 + 6 calls run (15 <= 20 before the second batch); the third reply is kept but
    # its batch never runs (21 > 20), so the fourth reply would never exist.
    kept = counted_replies(turn_of([15, 6, 3, 2, 0]), cap=20)
    assert [len(m.get("tool_calls") or []) for m in kept] == [15, 6, 3]
    # One call per reply: 21 executed, the 22nd reply kept.
    kept = counted_replies(turn_of([1] * 30 + [0]), cap=20)
    assert len(kept) == 22


@given(st.lists(st.integers(min_value=0, max_value=8), min_size=1, max_size=30))
def test_counted_replies_matches_a_simulation_of_the_official_loop(sizes):
    # A real episode ends its turn at the first reply without calls.
    if 0 in sizes:
        sizes = sizes[: sizes.index(0) + 1]
    kept = counted_replies(turn_of(sizes), cap=5)
    assert [len(m.get("tool_calls") or []) for m in kept] == official_loop(sizes, cap=5)


def test_transcript_turns_cut_at_user_messages():
    messages = [
        {"role": "user", "content": "1"},
        assistant("A"),
        {"role": "tool", "tool_call_id": "c_A", "content": "r"},
        assistant(content="ok"),
        {"role": "user", "content": "2"},
        {"role": "user", "content": "3", "hidden": True},
        assistant(content="bye"),
    ]
    turns = transcript_turns(messages)
    assert [len(t) for t in turns] == [3, 1]


def test_drop_rule_per_call_kind():
    from harness.adapters.finmcp.dropping import CountedReply, call_problem, drop_reason
    from harness.types import ToolCall

    def fc(name: str, raw: str) -> ToolCall:
        return ToolCall.from_openai({"id": "c", "function": {"name": name, "arguments": raw}})

    # Native tool calls: what the official loop fails on.
    assert call_problem(fc("T", '{"a": 1}'), executed=True) is None
    assert call_problem(fc("T", "[1]"), executed=True) is None  # JSON, not an object: kept
    assert call_problem(fc("T", "NaN"), executed=True) is None  # json.loads accepts it
    assert "not JSON" in call_problem(fc("T", "{"), executed=True)
    assert "not JSON" in call_problem(fc("T", " "), executed=True)
    assert call_problem(fc("T", "{"), executed=False) is None  # never decoded
    assert "empty arguments" in call_problem(fc("T", ""), executed=False)
    assert "without a name" in call_problem(fc("", "{}"), executed=False)
    # Prompt mode: only calls the harness could not decode, in executed replies.
    parsed = ToolCall(id="c", name="T", arguments={"a": 1})  # no raw JSON text
    assert call_problem(parsed, executed=True, prompt_mode=True) is None
    broken = ToolCall(id="c", name="T", arguments=None, raw_arguments="{", parse_error="bad")
    assert call_problem(broken, executed=True, prompt_mode=True) is not None
    assert call_problem(broken, executed=False, prompt_mode=True) is None
    # The first problem among the kept replies is the reason.
    replies = [CountedReply([fc("A", "{}")], True), CountedReply([fc("B", "")], False)]
    assert drop_reason(replies) == "empty arguments of 'B'"
