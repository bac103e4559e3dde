"""Augmented environment feedback on BFCL's real simulators, tau2's real environment
(generic rules) and through a strategy run."""

from __future__ import annotations

import asyncio
import json

import pytest
from test_strategies_fakes import RoleModel, call, tool_results

from harness.adapters.bfcl.feedback import CURRENCIES
from harness.strategies.feedback import wrap_environment
from harness.strategies.registry import build_strategy
from harness.task.contract import Environment, Services
from harness.task.registry import get_adapter
from harness.types import AssistantTurn, SamplingParams, ToolResult


class Counting(Environment):
    def __init__(self, inner: Environment):
        self.inner = inner
        self.names: list[str] = []

    async def execute(self, tool_call):
        self.names.append(tool_call.name)
        return await self.inner.execute(tool_call)


@pytest.fixture(scope="module")
def bfcl_samples():
    ids = ["multi_turn_base_1", "multi_turn_base_50", "multi_turn_base_150"]
    samples = get_adapter("bfcl").load("multi_turn_base", ids=ids)
    return {s.id: s for s in samples}


def augmented(sample):
    real = Counting(sample.make_environment())
    return wrap_environment(real, sample, probe=real), real


def execute(env, name, **arguments) -> ToolResult:
    return asyncio.run(env.execute(call(name, **arguments)))


def error_of(result: ToolResult) -> str:
    assert result.is_error, result.content
    return json.loads(result.content)["error"]


def test_travel_rules(bfcl_samples):
    env, real = augmented(bfcl_samples["multi_turn_base_150"])
    flight = {"travel_date": "2024-11-15", "travel_class": "economy"}
    refused = error_of(
        execute(env, "get_flight_cost", travel_from="XXX", travel_to="LAX", **flight)
    )
    assert "travel_from='XXX'" in refused and "travel_to" not in refused
    assert "list_all_airports" in refused and "get_nearest_airport_by_city" in refused
    assert real.names == []  # checked before pricing: never executed
    no_route = execute(env, "get_flight_cost", travel_from="HND", travel_to="PEK", **flight)
    assert no_route.content.startswith("Error:") and "from HND to PEK" in no_route.content
    rate = execute(
        env, "compute_exchange_rate", base_currency="EUR", target_currency="JPY", value=3
    )
    assert all(code in rate.content for code in CURRENCIES) and "EUR and JPY" in rate.content
    booked = execute(
        env,
        "book_flight",
        access_token="abc123token",
        card_id="1234-5678-9012-3456",
        travel_from="XXX",
        travel_to="LAX",
        **flight,
    )
    message = error_of(booked)
    assert (
        message.startswith("Invalid departure airport code: XXX") and "list_all_airports" in message
    )
    priced = execute(env, "get_flight_cost", travel_from="SFO", travel_to="LAX", **flight)
    assert not priced.is_error and "travel_cost_list" in priced.content  # success untouched
    assert [r["rule"] for r in env.rewrites] == [
        "bfcl.airport_codes",
        "bfcl.missing_route",
        "bfcl.currency_pair",
        "bfcl.airport_codes",
    ]


def test_vehicle_rules(bfcl_samples):
    env, _ = augmented(bfcl_samples["multi_turn_base_50"])
    weather = error_of(execute(env, "get_outside_temperature_from_weather_com"))
    assert "get_outside_temperature_from_google" in weather
    distance = error_of(execute(env, "estimate_distance", cityA="Rivermist", cityB="Stonebrook"))
    assert "get_zipcode_based_on_city" in distance and "'Rivermist'" in distance
    fine = execute(env, "estimate_distance", cityA="83214", cityB="74532")
    assert json.loads(fine.content) == {"distance": 750.0}


def test_file_system_rules(bfcl_samples):
    env, real = augmented(bfcl_samples["multi_turn_base_1"])
    path = error_of(execute(env, "cd", folder="workspace/archive"))
    assert (
        "only names in the current directory" in path.lower() and "one directory at a time" in path
    )
    assert real.names == []
    for name, arguments in [
        ("mv", {"source": "a", "destination": "x/y"}),
        ("diff", {"file_name1": "a", "file_name2": "b/c"}),
        ("echo", {"content": "a/b is fine in content", "file_name": "d/e"}),
    ]:
        assert "is a path" in error_of(execute(env, name, **arguments))
    assert real.names == []
    assert not execute(env, "cd", folder="workspace").is_error
    directory = error_of(execute(env, "wc", file_name="archive", mode="l"))
    assert "'archive' is a directory" in directory
    assert real.names[-2:] == ["wc", "ls"]  # the probe asked the real environment
    assert "It is a directory" in error_of(execute(env, "cat", file_name="archive"))
    missing = error_of(execute(env, "tail", file_name="missing.txt"))
    assert "not found in the current directory" in missing
    invalid = error_of(execute(env, "mkdir", dir_name="a|b"))
    assert "Invalid character" in invalid and "|" in invalid.split("characters:")[-1]
    assert not execute(env, "touch", file_name="ok.txt").is_error
    content = "This text mentions a/b."
    assert json.loads(execute(env, "echo", content=content).content) == {"terminal_output": content}


def test_generic_rules_on_tau2():
    sample = get_adapter("tau2").load("retail", ids=["73"])[0]
    env = wrap_environment(sample.make_environment(), sample)
    unknown = execute(env, "fly_to_the_moon")
    assert "Valid tools:" in unknown.content and "get_order_details" in unknown.content
    wrong_type = execute(env, "get_order_details", order_id=5272531)
    assert "Argument problem: 'order_id' must be of type string" in wrong_type.content
    not_found = execute(env, "get_order_details", order_id="W5272531")
    assert not_found.is_error and "look the right value up first with" in not_found.content
    assert "order_id='W5272531'" in not_found.content
    found = execute(env, "get_order_details", order_id="#W5272531")
    assert not found.is_error and "Argument problem" not in found.content
    assert [r["rule"] for r in env.rewrites] == [
        "generic.unknown_tool",
        "generic.schema",
        "generic.unknown_id",
    ]


def test_a_strategy_run_with_augmented_feedback_records_its_rewrites(bfcl_samples):
    sample = bfcl_samples["multi_turn_base_50"]

    def actor(messages, tools):
        if tool_results(messages) or messages[-1]["role"] != "user":
            return "Done."
        return AssistantTurn(tool_calls=[call("get_outside_temperature_from_weather_com")])

    model = RoleModel(
        actor=actor,
        rehearser=lambda m, t: '<execution_result>{"error": 404}</execution_result>',
        critic=lambda m, t: "Use the other temperature tool.",
        distil=lambda m, t: "<memory>Use get_outside_temperature_from_google.</memory>",
    )
    strategy = build_strategy("rehearsal-parallel:1", {"env_feedback": "augmented"})
    assert strategy.describe()["env_feedback"] == "augmented"
    trajectory = asyncio.run(
        strategy.run(sample, model, Services(), SamplingParams(temperature=0.0))
    )
    rewrites = trajectory.extra["env_feedback"]["rewrites"]
    assert rewrites and rewrites[0]["rule"] == "bfcl.weather_service"
    # The imagined environment's answers get the same rules.
    rehearsal = trajectory.extra["rehearsal"]["rehearsals"][0]
    first_result = tool_results(rehearsal["messages"])[0]["content"]
    assert "get_outside_temperature_from_google" in first_result
