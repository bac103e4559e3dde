"""World-model fidelity: predictions before real results, and hand-computed metrics."""

from __future__ import annotations

import asyncio
import json

import pytest
from test_strategies_fakes import RoleModel, call, result, tool_results

from harness.store.world_model_figures import aggregate_world_model, call_fidelity, summarize
from harness.strategies.registry import build_strategy
from harness.task.contract import Environment, EpisodeLimits, Sample, Services
from harness.types import AssistantTurn, SamplingParams, ToolResult

GET_TOOL = {
    "type": "function",
    "function": {
        "name": "get",
        "parameters": {
            "type": "object",
            "properties": {"key": {"type": "string"}},
            "required": ["key"],
        },
    },
}
REAL = {
    "a": ToolResult(json.dumps({"id": 1, "name": "x", "price": 5})),
    "b": ToolResult(json.dumps({"error": "not found"})),
    "c": ToolResult(json.dumps({"id": 3, "name": "z", "price": 7})),
    "d": ToolResult("plain text"),
}
# What the rehearser predicts for each key: exact, wrong status, missing keys, garbage.
PREDICTED = {
    "a": result({"id": 1, "name": "x", "price": 5}),
    "b": result({"id": 2, "name": "y"}),
    "c": result({"id": 3, "name": "q"}),
    "d": "I think it returns some text",
}
PLAN = [call("get", key=k) for k in "abcd"] + [call("nope")]


class LookupEnvironment(Environment):
    async def execute(self, tool_call):
        if tool_call.name != "get":
            return ToolResult(f"Error: unknown tool {tool_call.name}", True)
        return REAL[tool_call.arguments["key"]]


def lookup_sample(subset: str = "s1") -> Sample:
    return Sample(
        id="w1",
        benchmark="lookup",
        subset=subset,
        tools=[GET_TOOL],
        initial_messages=[{"role": "user", "content": "Look everything up."}],
        make_environment=LookupEnvironment,
        limits=EpisodeLimits(max_steps=10),
    )


def actor(messages, tools):
    done = len(tool_results(messages))
    return AssistantTurn(tool_calls=[PLAN[done]]) if done < len(PLAN) else "All looked up."


def rehearser(messages, tools):
    the_call = messages[-1]["content"].split("## The call to execute")[-1]
    key = json.loads(the_call.strip()[len("get(") : -1])["key"]
    return PREDICTED[key]


def measured_run(subset: str = "s1"):
    model = RoleModel(actor=actor, rehearser=rehearser)
    strategy = build_strategy("plain", {"measure_world_model": "true"})
    trajectory = asyncio.run(
        strategy.run(lookup_sample(subset), model, Services(), SamplingParams(temperature=0.0))
    )
    return trajectory, model, strategy


def test_every_real_call_gets_a_prediction_made_before_its_result():
    trajectory, model, strategy = measured_run()
    records = trajectory.extra["world_model"]
    assert [r["call"]["arguments"] for r in records] == [{"key": k} for k in "abcd"] + [{}]
    # The agent saw the real results only.
    seen = [m["content"] for m in tool_results(trajectory.messages)]
    assert seen[:4] == [REAL[k].content for k in "abcd"]
    # Call i's prompt holds the real results of calls 1..i-1 as examples, not its own.
    prompts_text = [p[1]["content"] for p in model.calls["rehearser"]]
    assert len(prompts_text) == 4  # the unknown tool was refused without the model
    assert REAL["a"].content not in prompts_text[0]
    assert REAL["a"].content in prompts_text[1] and REAL["b"].content not in prompts_text[1]
    assert REAL["c"].content in prompts_text[3]
    assert records[4]["predicted"]["code"] == "TOOL_NOT_AVAILABLE"
    costs = trajectory.extra["costs"]
    assert costs["committed"]["rehearser"]["calls"] == 4
    assert costs["rehearsal"]["rehearser"]["calls"] == 0
    described = strategy.describe()
    assert described["measure_world_model"] is True and described["prompt_version"]


def test_fidelity_figures_match_the_hand_computed_ones():
    trajectory, _, _ = measured_run()
    records = trajectory.extra["world_model"]
    per_call = [call_fidelity(r) for r in records]
    assert [c.status_agrees for c in per_call] == [True, False, True, False, True]
    assert [c.exact_match for c in per_call] == [True, False, False, False, False]
    assert [c.key_jaccard for c in per_call] == [1.0, 0.0, pytest.approx(2 / 3), None, 0.0]
    assert [c.value_agreement for c in per_call] == [1.0, None, 0.5, None, None]
    assert [c.format_error for c in per_call] == [False, False, False, True, False]
    summary = summarize(records)
    assert summary["n_calls"] == 5
    assert summary["status_agreement"] == pytest.approx(3 / 5)
    assert summary["exact_match"] == pytest.approx(1 / 5)
    assert summary["key_jaccard"] == pytest.approx((1 + 0 + 2 / 3 + 0) / 4)
    assert summary["n_key_jaccard"] == 4
    assert summary["value_agreement"] == pytest.approx(0.75)
    assert summary["n_value_agreement"] == 2
    assert summary["format_errors"] == 1


def test_aggregation_per_benchmark_and_subset_over_stored_records():
    first, _, _ = measured_run("s1")
    second, _, _ = measured_run("s2")
    stored = [
        {"benchmark": "lookup", "subset": "s1", "trajectory": first.to_dict()},
        {"benchmark": "lookup", "subset": "s2", "trajectory": second.to_dict()},
        {"benchmark": "lookup", "subset": "s2", "trajectory": None},  # an infra error
        {"benchmark": "other", "subset": "x", "trajectory": {"extra": {}}},  # not measured
    ]
    figures = aggregate_world_model(stored)
    assert set(figures) == {"lookup"}
    assert figures["lookup"]["overall"]["n_calls"] == 10
    assert figures["lookup"]["overall"]["status_agreement"] == pytest.approx(0.6)
    assert figures["lookup"]["subsets"]["s1"]["exact_match"] == pytest.approx(0.2)
    assert figures["lookup"]["subsets"]["s2"]["n_calls"] == 5
    assert json.loads(json.dumps(figures)) == figures


def test_without_measurement_there_is_no_record_and_no_rehearser_call():
    model = RoleModel(actor=actor)
    strategy = build_strategy("plain")
    trajectory = asyncio.run(strategy.run(lookup_sample(), model, Services(), SamplingParams()))
    assert "world_model" not in trajectory.extra and "rehearser" not in model.calls
