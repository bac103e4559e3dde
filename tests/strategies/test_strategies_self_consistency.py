"""Self-consistency per step: canonical votes, majority, ties, recorded votes, costs."""

from __future__ import annotations

import asyncio
import json

from test_strategies_fakes import ORDER, RoleModel, call, orders_sample, tool_results

from harness.strategies.registry import build_strategy
from harness.strategies.self_consistency import canonical_key, majority
from harness.task.contract import Services
from harness.types import AssistantTurn, SamplingParams, ToolCall


def turn(*calls: ToolCall, content: str | None = None) -> AssistantTurn:
    return AssistantTurn(content=content, tool_calls=list(calls))


def test_canonical_key_ignores_argument_and_call_order_and_text():
    a = ToolCall(id="1", name="f", arguments={"x": 1, "y": [1, {"b": 2, "a": 1}]})
    b = ToolCall(id="2", name="f", arguments={"y": [1, {"a": 1, "b": 2}], "x": 1})
    g = ToolCall(id="3", name="g", arguments={})
    assert canonical_key(turn(a, g, content="sure")) == canonical_key(turn(g, b))
    assert canonical_key(turn(content="Hello")) == canonical_key(turn(content="Bye")) == "text"
    assert canonical_key(turn(a)) != canonical_key(turn(g))
    broken = ToolCall.from_openai({"id": "4", "function": {"name": "f", "arguments": "{x"}})
    assert canonical_key(turn(broken)) == "f(raw:{x)"


def test_majority_and_ties_go_to_the_first_seen():
    assert majority(["a", "b", "b"])[0] == "b"
    assert majority(["a", "b"])[0] == "a"
    assert majority(["b", "a", "a", "b", "c"])[0] == "b"
    _, tally = majority(["x", "y", "x"])
    assert tally == [{"key": "x", "count": 2, "first": 0}, {"key": "y", "count": 1, "first": 1}]


def voting_actor(plan: list[list[AssistantTurn]]):
    """Step i of the episode answers its K samples from plan[i], in order."""
    state = {"calls": 0}

    def actor(messages, tools):
        step = len(tool_results(messages))
        index = state["calls"] - sum(len(p) for p in plan[:step])
        state["calls"] += 1
        return plan[step][index]

    return actor


def run(spec: str, model, options=None):
    strategy = build_strategy(spec, options or {})
    params = SamplingParams(temperature=0.0, seed=5)
    return asyncio.run(strategy.run(orders_sample(), model, Services(), params)), strategy


def test_the_majority_call_is_executed_and_the_votes_recorded():
    right = call("cancel_order", order_id=ORDER)
    wrong = call("cancel_order", order_id="W100")
    plan = [
        [turn(wrong), turn(right), turn(right)],
        [turn(content="Done."), turn(content="All set."), turn(wrong)],
    ]
    model = RoleModel(actor=voting_actor(plan))
    trajectory, strategy = run("self-consistency:3", model, {"temperature": "0.8"})
    assert trajectory.final_state == {"cancelled": [ORDER]}
    # The picked reply is the first of the winning bucket, its text kept.
    assert trajectory.turns[-1].content == "Done."
    votes = trajectory.extra["self_consistency"]["votes"]
    assert trajectory.extra["self_consistency"]["k"] == 3
    assert [v["chosen"] for v in votes] == [1, 0]
    assert [b["count"] for b in votes[0]["buckets"]] == [1, 2]
    assert votes[1]["key"] == "text"
    # Every sample at the vote temperature, a distinct seed each.
    params = model.params["actor"]
    assert len(params) == 6 and {p.temperature for p in params} == {0.8}
    assert len({p.seed for p in params}) == 6
    # Costs: K calls per step, booked on the actor.
    costs = trajectory.extra["costs"]
    assert costs["committed"]["actor"]["calls"] == 6
    assert trajectory.usage["actor"].calls == 6
    assert trajectory.turns[0].usage.calls == 3
    assert strategy.describe() == {
        "name": "self-consistency:3",
        "k": 3,
        "temperature": 0.8,
        "env_feedback": "standard",
    }


def test_a_tie_executes_the_first_seen_call():
    right = call("cancel_order", order_id=ORDER)
    wrong = call("cancel_order", order_id="W100")
    plan = [[turn(wrong), turn(right)], [turn(content="ok"), turn(content="ok")]]
    trajectory, _ = run("self-consistency:2", RoleModel(actor=voting_actor(plan)))
    assert trajectory.final_state == {"cancelled": []}
    executed = json.loads(trajectory.messages[0]["tool_calls"][0]["function"]["arguments"])
    assert executed == {"order_id": "W100"}
