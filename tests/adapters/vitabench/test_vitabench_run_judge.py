"""VitaBench's sliding-window rubric judge: windows, judge input, state updates,
parse failures, the reward rule and the stub judge."""

from __future__ import annotations

import asyncio
import json

import pytest

from harness.adapters.vitabench.data import VitaTask
from harness.adapters.vitabench.judge import (
    MAX_REPLY_BRACKETS,
    ORDERS_MATCH_HINT,
    OrdersStubJudge,
    RubricState,
    UnreadableReply,
    apply_judgement,
    as_boolean,
    env_info,
    judge_conversation,
    read_judge_reply,
    render_line,
    window_bounds,
    window_lines,
)
from harness.adapters.vitabench.prompts import harness_prompts
from harness.models.base import ModelClient
from harness.types import AssistantTurn, Usage


def make_task(rubrics=("A", "B"), overall=("B", "C"), language="en") -> VitaTask:
    record = {
        "id": "T1",
        "environment": {"time": "2025-06-21 11:20:00", "user_id": "U1"},
        "instructions": "Order noodles.",
        "user_scenario": {"user_profile": {"user id": "U1"}},
        "evaluation_criteria": {
            "expected_states": [{"required_orders": [], "state_rubrics": list(rubrics)}],
            "overall_rubrics": list(overall),
        },
    }
    return VitaTask(record=record, scenario="delivery", language=language)


def judge(task, messages, client, **options):
    """The judge with this project's prompt wording (the official one is tested
    against the benchmark's code in test_vitabench_official.py)."""
    return asyncio.run(
        judge_conversation(task, messages, client, harness_prompts(task.language), **options)
    )


class RecordingJudge(ModelClient):
    """Replays judge replies and keeps every prompt it was given."""

    name = "recording-judge"

    def __init__(self, replies):
        self.replies = list(replies)
        self.prompts: list[list[dict]] = []

    async def complete(self, messages, tools, params) -> AssistantTurn:
        self.prompts.append(messages)
        reply = self.replies.pop(0) if self.replies else "no verdict"
        return AssistantTurn(content=reply, usage=Usage(calls=1, prompt_tokens=10))


def verdict(*rows) -> str:
    items = [
        {"rubric_idx": key, "justification": why, "meetExpectation": met} for key, met, why in rows
    ]
    return "Here you go:\n```json\n" + json.dumps(items) + "\n```"


def conversation(n: int) -> list[dict]:
    messages = [{"role": "assistant", "content": "Hello, how can I help you?", "hidden": True}]
    for i in range(1, n):
        messages.append({"role": "user" if i % 2 else "assistant", "content": f"m{i}"})
    return messages


def states_in(prompt: str) -> list[dict]:
    body = prompt.split("<current_rubrics>\n", 1)[1].split("\n</current_rubrics>", 1)[0]
    return json.loads(body)


def test_rubric_set_is_state_rubrics_then_overall_deduplicated():
    assert make_task().rubrics == ["A", "B", "C"]


def test_window_bounds_match_the_benchmark():
    assert window_bounds(5) == [(0, 5)]
    assert window_bounds(10) == [(0, 10)]
    assert window_bounds(13) == [(0, 10), (8, 13)]
    assert window_bounds(18) == [(0, 10), (8, 18)]
    assert window_bounds(27) == [(0, 10), (8, 18), (16, 26), (24, 27)]


def test_lines_use_global_one_based_indexes_and_python_literal_calls():
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "pay_delivery_order", "arguments": '{"order_id": "WILL_FAIL"}'},
    }
    two_calls = [
        {"function": {"name": "f", "arguments": '{"a": 1, "b": [1, 2]}'}},
        {"function": {"name": "g", "arguments": '{"s": "中文", "flag": true, "none": null}'}},
    ]
    messages = [{"role": "user", "content": f"x{i}"} for i in range(9)] + [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "content": "Error: Order WILL_FAIL not found"},
        {"role": "assistant", "content": "Let me check.", "tool_calls": two_calls},
        {"role": "tool", "content": ""},
        {"role": "assistant", "content": "done"},
    ]
    lines = window_lines(messages, 8, 14)
    assert lines == [
        "[9] user: x8",
        "[10] assistant: pay_delivery_order(order_id='WILL_FAIL')",
        "[11] tool: Error: Order WILL_FAIL not found",
        "[12] assistant: Let me check. f(a=1, b=[1, 2]).g(s='中文', flag=True, none=None)",
        # [13] is the empty tool result: skipped, but it keeps its index
        "[14] assistant: done",
    ]
    bad = {"function": {"name": "h", "arguments": "{not json"}}
    assert render_line(1, {"role": "assistant", "content": "", "tool_calls": [bad]}) == (
        "[1] assistant: h({not json)"
    )


def test_judge_input_layout_and_system_prompt():
    task = make_task()
    client = RecordingJudge([verdict(("rubric_0", True, "[2] ok"))])
    messages = conversation(3)
    judge(task, messages, client)
    system, user = client.prompts[0]
    assert system["role"] == "system" and user["role"] == "user"
    assert "{'system_time': '2025-06-21 11:20:00 Saturday', 'database': []}" in system["content"]
    assert env_info(task) == "{'system_time': '2025-06-21 11:20:00 Saturday', 'database': []}"
    assert "Order noodles." in system["content"] and "window 1 of 1" in system["content"]
    states = [
        {
            "rubric_idx": f"rubric_{i}",
            "rubric": r,
            "justification": "Not evaluated yet",
            "meetExpectation": False,
        }
        for i, r in enumerate(["A", "B", "C"])
    ]
    expected = (
        "\n# Input\n<window_content>\n"
        "[1] assistant: Hello, how can I help you?\n[2] user: m1\n[3] assistant: m2"
        "\n</window_content>\n\n<current_rubrics>\n"
        + json.dumps(states, indent=2, ensure_ascii=False)
        + "\n</current_rubrics>\n"
    )
    assert user["content"] == expected


def test_chinese_judge_keeps_non_ascii_and_weekday():
    task = make_task(rubrics=("米线",), overall=(), language="zh")
    client = RecordingJudge([verdict(("rubric_0", True, "好"))])
    result = judge(task, conversation(2), client)
    assert "星期六" in client.prompts[0][0]["content"]
    assert '"rubric": "米线"' in client.prompts[0][1]["content"]
    assert result.reward == 1.0


def test_states_carry_over_windows_and_update_by_rubric_idx():
    task = make_task()
    client = RecordingJudge(
        [
            verdict(("rubric_0", True, "[3] ordered"), ("rubric_1", True, "[5] paid")),
            # second window: rubric_0 omitted (kept), rubric_1 flipped back, unknown key
            # and empty key skipped, rubric_2 met written as a string, justification missing
            json.dumps(
                [
                    {
                        "rubric_idx": "rubric_1",
                        "justification": "[12] undone",
                        "meetExpectation": False,
                    },
                    {"rubric_idx": "rubric_9", "meetExpectation": True},
                    {"rubric_idx": "", "meetExpectation": True},
                    {"rubric_idx": "rubric_2", "meetExpectation": "true"},
                ]
            ),
        ]
    )
    result = judge(task, conversation(13), client)
    assert len(client.prompts) == 2
    second = states_in(client.prompts[1][1]["content"])
    assert [s["meetExpectation"] for s in second] == [True, True, False]
    assert second[0]["justification"] == "[3] ordered"
    assert "window 2 of 2" in client.prompts[1][0]["content"]
    assert client.prompts[1][1]["content"].startswith(
        "\n# Input\n<window_content>\n[9] assistant: m8"
    )
    assert [r["met"] for r in result.rubrics] == [True, False, True]
    assert result.rubrics[2]["justification"] == "No justification provided"
    assert result.reward == 0.0
    assert abs(result.progress - 2 / 3) < 1e-9
    assert result.details()["info"] == {
        "evaluation_method": "sliding_window",
        "num_windows": 2,
        "window_size": 10,
    }


def test_reward_is_one_only_when_every_rubric_is_met():
    task = make_task()
    all_met = verdict(("rubric_0", True, "a"), ("rubric_1", True, "b"), ("rubric_2", True, "c"))
    result = judge(task, conversation(4), RecordingJudge([all_met]))
    assert (result.reward, result.progress) == (1.0, 1.0)
    two = verdict(("rubric_0", True, "a"), ("rubric_1", True, "b"))
    result = judge(task, conversation(4), RecordingJudge([two]))
    assert result.reward == 0.0 and abs(result.progress - 2 / 3) < 1e-9


def test_no_rubrics_gives_full_reward_without_a_judge_call():
    client = RecordingJudge([])
    for task in (make_task((), ()), VitaTask({"id": "T2"}, "delivery", "en")):
        result = judge(task, conversation(4), client)
        assert result.reward == 1.0 and client.prompts == []
        assert result.details() == {"rubrics": [], "info": {"note": "No rubric to evaluate"}}


def test_malformed_json_is_repaired_as_the_benchmark_does():
    task = make_task()
    replies = [
        # trailing commas, single quotes, Python literals, text around it
        "Verdict: [{'rubric_idx': 'rubric_0', 'justification': 'ok', 'meetExpectation': True,},]",
        # a null justification is kept (and shown to the next window as null)
        '[{"rubric_idx": "rubric_1", "justification": null, "meetExpectation": true}]',
    ]
    client = RecordingJudge(replies)
    result = judge(task, conversation(13), client)
    assert result.parse_failures == 0
    second = states_in(client.prompts[1][1]["content"])
    assert [s["meetExpectation"] for s in second] == [True, False, False]
    assert [r["met"] for r in result.rubrics] == [True, True, False]
    assert result.rubrics[1]["justification"] is None


def test_one_judge_call_per_window_and_unreadable_replies_keep_the_states():
    task = make_task()
    first = verdict(("rubric_0", True, "[2] done"))
    # what the benchmark's code crashes on: no JSON, a lone object, a non-object element
    for bad in ("garbage", '{"rubric_idx": "rubric_1", "meetExpectation": true}', "[1, 2]"):
        client = RecordingJudge([first, bad])
        result = judge(task, conversation(13), client)
        assert len(client.prompts) == 2
        assert result.parse_failures == 1
        assert result.windows[1].parsed is False
        assert [r["met"] for r in result.rubrics] == [True, False, False]
        assert result.rubrics[0]["justification"] == "[2] done"


def test_judge_attempts_asks_again_with_the_same_question():
    task = make_task()
    client = RecordingJudge(["I think it is fine", "[]", verdict(("rubric_0", True, "ok"))])
    result = judge(task, conversation(4), client, attempts=3)
    assert len(client.prompts) == 3
    assert client.prompts[0] == client.prompts[2]
    assert result.parse_failures == 2
    assert result.rubrics[0]["met"] is True
    assert result.windows[0].parsed and len(result.windows[0].replies) == 3


def test_read_judge_reply_variants():
    assert read_judge_reply('```json\n[{"a": 1,}]\n```') == [{"a": 1}]
    assert read_judge_reply('prefix [{"a": 1}] suffix') == [{"a": 1}]
    assert read_judge_reply("[]") == []
    assert read_judge_reply('{"a": 1}') == {"a": 1}
    for unreadable in ("", None, "no json at all", "[" * 100_000, "{" * (MAX_REPLY_BRACKETS + 1)):
        with pytest.raises(UnreadableReply):
            read_judge_reply(unreadable)


def test_updates_are_all_or_nothing():
    states = [RubricState("A"), RubricState("B")]
    with pytest.raises(UnreadableReply):
        apply_judgement(states, [{"rubric_idx": "rubric_0", "meetExpectation": True}, "x"])
    with pytest.raises(UnreadableReply):
        apply_judgement(states, [{"rubric_idx": ["rubric_0"], "meetExpectation": True}])
    assert states[0].meet_expectation is False


def test_met_is_read_with_pydantic_lax_boolean_rules():
    assert [as_boolean(v) for v in (True, 1, 0.0, "TRUE", "yes", "off", "0")] == [
        True,
        True,
        False,
        True,
        True,
        False,
        False,
    ]
    assert [as_boolean(v) for v in (2, " true", "", "maybe", None, [])] == [None] * 6


def test_stub_judge_follows_the_order_diagnostic():
    task = make_task()
    for match in (True, False):
        result = judge(task, conversation(13), OrdersStubJudge(), orders_match=match)
        assert result.reward == (1.0 if match else 0.0)
        assert all(r["met"] is match for r in result.rubrics)
        assert result.parse_failures == 0
    assert ORDERS_MATCH_HINT.get() is None  # the hint does not leak out of the scorer


def test_a_failure_lists_the_rubric_lines_with_the_judges_verdicts():
    from harness.adapters.vitabench import explain
    from harness.types import Score, Trajectory

    task = make_task()
    two = verdict(("rubric_0", True, "ordered"), ("rubric_1", False, "no noodles ordered"))
    result = judge(task, conversation(4), RecordingJudge([two]))
    score = Score(passed=False, reward=result.reward, details=result.details())
    text = explain.explain_failure(Trajectory(), score)
    assert text.splitlines() == [
        "the judge found 1 of 3 rubric lines met",
        "✗ not met: B (judge: no noodles ordered)",
        "✗ not met: C (judge: Not evaluated yet)",
        "✓ met: A",
    ]
    assert explain.gold_view(task) == {
        "user instructions": "Order noodles.",
        "rubric": ["A", "B", "C"],
    }
