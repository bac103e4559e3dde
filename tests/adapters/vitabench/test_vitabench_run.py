"""VitaBench episodes through the harness loop: greeting, role flip, stop tokens,
agent retries, step counting, bad model output, scripted user and scoring."""

from __future__ import annotations

import asyncio
import json

import pytest

from harness.adapters.vitabench import VitaBenchAdapter
from harness.adapters.vitabench.data import VitaTask
from harness.adapters.vitabench.episode import (
    USER_STOP_TOKENS,
    conversation_messages,
    count_hops,
)
from harness.adapters.vitabench.judge import OrdersStubJudge
from harness.adapters.vitabench.prompts import GREETING, prompt_set
from harness.models.base import ModelClient, ScriptedClient
from harness.strategies.plain import PlainStrategy
from harness.task.contract import Environment, Services
from harness.types import AssistantTurn, SamplingParams, ToolCall, ToolResult, Trajectory, Usage

TASK = {
    "id": "T0001",
    "domain": "delivery",
    "environment": {
        "time": "2025-06-21 11:20:00",
        "user_id": "U000001",
        "orders": {
            "OLD1": {
                "order_id": "OLD1",
                "order_type": "delivery",
                "store_id": "S0",
                "status": "paid",
                "products": [{"product_id": "P0", "quantity": 1}],
            }
        },
    },
    "user_scenario": {"user_profile": {"user id": "U000001", "occupation": "Doctor"}},
    "instructions": "You want two bowls of clear-soup noodles delivered to the hospital.",
    "message_history": [],
    "evaluation_criteria": {
        "expected_states": [
            {
                "required_orders": [
                    {
                        "order_id": "T01",
                        "order_type": "delivery",
                        "store_id": "S1",
                        "status": "processed",
                        "products": [{"product_id": "P1", "quantity": 2}],
                    }
                ],
                "optional_orders": [],
                "state_rubrics": ["Noodles are ordered", "Two bowls"],
            }
        ],
        "overall_rubrics": ["Noodles are ordered"],
    },
}


class StubEnvironment(Environment):
    """A two-tool stand-in for the VitaBench world, with the same interface."""

    def __init__(self, task: dict, scenario: str, language: str = "zh"):
        orders = (task.get("environment") or {}).get("orders") or {}
        self.records = {key: dict(value) for key, value in orders.items()}
        self.executed: list[str] = []

    def tool_schemas(self):
        parameters = {"type": "object", "properties": {}, "required": []}
        return [
            {
                "type": "function",
                "function": {"name": name, "description": name, "parameters": parameters},
            }
            for name in ("create_delivery_order", "get_user_all_orders")
        ]

    async def execute(self, call: ToolCall) -> ToolResult:
        self.executed.append(call.name)
        arguments = call.arguments or {}
        if call.name == "create_delivery_order":
            ids, counts = arguments.get("product_ids"), arguments.get("product_cnts")
            if not isinstance(ids, list) or not isinstance(counts, list) or len(ids) != len(counts):
                return ToolResult(f"product_cnts {counts!r} list is invalid")
            order_id = f"OT{len(self.records):010x}"
            self.records[order_id] = {
                "order_id": order_id,
                "order_type": "delivery",
                "store_id": arguments.get("store_id"),
                "status": "unpaid",
                "products": [
                    {"product_id": p, "quantity": q} for p, q in zip(ids, counts, strict=True)
                ],
            }
            return ToolResult(f"Order(order_id:{order_id}, status:unpaid)")
        if call.name == "get_user_all_orders":
            return ToolResult("\n".join(self.records))
        return ToolResult(f"Error: Tool '{call.name}' not found.", True)

    def final_state(self):
        return {"old_states": [], "new_states": list(self.records.values())}


class NoJudge(ModelClient):
    name = "no-judge"

    async def complete(self, messages, tools, params):
        raise AssertionError("the judge must not be called")


def sample_for(task=TASK, language="en", max_steps=300):
    adapter = VitaBenchAdapter(environment_factory=StubEnvironment)
    return adapter, adapter.make_sample(VitaTask(task, "delivery", language), max_steps)


def text(content: str) -> AssistantTurn:
    return AssistantTurn(
        content=content, usage=Usage(calls=1, prompt_tokens=7, completion_tokens=3)
    )


def order_call(call_id="c1", **overrides) -> ToolCall:
    arguments = {"store_id": "S1", "product_ids": ["P1"], "product_cnts": [2], **overrides}
    return ToolCall(id=call_id, name="create_delivery_order", arguments=arguments)


def run(sample, agent, user_client=None, user_model="llm", judge=None):
    services = Services(
        user_client=user_client,
        user_model=user_model,
        judge_client=judge or OrdersStubJudge(),
        judge_model="stub",
    )
    trajectory = asyncio.run(PlainStrategy().run(sample, agent, services, SamplingParams()))
    return trajectory, services


def test_greeting_opens_the_record_but_the_agent_never_sees_it():
    _, sample = sample_for()
    agent = ScriptedClient([text("Which dish would you like?"), text("Goodbye. ###STOP###")])
    user = ScriptedClient([text("I would like noodles."), text("No, that is all.")])
    trajectory, _ = run(sample, agent, user)
    greeting = GREETING["en"]
    assert trajectory.messages[0] == {"role": "assistant", "content": greeting, "hidden": True}
    assert trajectory.messages[1] == {"role": "user", "content": "I would like noodles."}
    assert agent.calls[0] == [sample.initial_messages[0], trajectory.messages[1]]
    assert all(greeting not in json.dumps(call) for call in agent.calls)
    persona = str(TASK["user_scenario"]["user_profile"])
    system = {
        "role": "system",
        "content": prompt_set("en").user_system(persona, TASK["instructions"]),
    }
    assert user.calls[0] == [system, {"role": "user", "content": greeting}]
    assert user.calls[1] == [
        system,
        {"role": "user", "content": greeting},
        {"role": "assistant", "content": "I would like noodles."},
        {"role": "user", "content": "Which dish would you like?"},
    ]
    assert trajectory.termination == "agent_stop"
    assert trajectory.usage["user"].calls == 2 and trajectory.usage["user"].prompt_tokens == 14


def test_agent_system_prompt_has_time_and_weekday_and_no_task_secrets():
    _, sample = sample_for(language="zh")
    system = sample.initial_messages[0]["content"]
    assert "2025-06-21 11:20:00 星期六" in system and "###STOP###" in system
    assert TASK["instructions"] not in system and "U000001" not in system
    _, sample = sample_for(language="en")
    assert "2025-06-21 11:20:00 Saturday" in sample.initial_messages[0]["content"]


def test_user_never_sees_tool_traffic_or_text_sent_with_tool_calls():
    _, sample = sample_for()
    agent = ScriptedClient(
        [
            AssistantTurn(content="Placing it now.", tool_calls=[order_call()]),
            text("Your order is placed. Anything else?"),
            text("###STOP###"),
        ]
    )
    user = ScriptedClient([text("Two bowls of noodles please."), text("No, thanks.")])
    trajectory, _ = run(sample, agent, user)
    flipped = user.calls[1][1:]
    assert flipped == [
        {"role": "user", "content": GREETING["en"]},
        {"role": "assistant", "content": "Two bowls of noodles please."},
        {"role": "user", "content": "Your order is placed. Anything else?"},
    ]
    assert trajectory.termination == "agent_stop"
    assert [m["role"] for m in trajectory.messages] == [
        "assistant",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
    ]


@pytest.mark.parametrize("token", USER_STOP_TOKENS)
def test_user_stop_tokens_end_the_episode_and_the_message_is_kept(token):
    _, sample = sample_for()
    agent = ScriptedClient([])
    user = ScriptedClient([text(f"Never mind. {token}")])
    trajectory, _ = run(sample, agent, user)
    assert trajectory.termination == "user_stop"
    assert trajectory.messages[-1] == {"role": "user", "content": f"Never mind. {token}"}
    assert agent.calls == []


def test_blank_replies_are_retried_from_the_same_state():
    _, sample = sample_for()
    agent = ScriptedClient(
        [AssistantTurn(content="  "), AssistantTurn(content=None), text("Done ###STOP###")]
    )
    user = ScriptedClient([text("Hello.")])
    trajectory, _ = run(sample, agent, user)
    assert trajectory.termination == "agent_stop"
    assert agent.calls[0] == agent.calls[1] == agent.calls[2]
    assert len(trajectory.context_resets) == 2
    conversation = conversation_messages(trajectory.messages)
    assert [m.get("content") for m in conversation] == [GREETING["en"], "Hello.", "Done ###STOP###"]


def test_three_blank_replies_end_as_invalid_agent_message_scored_zero():
    adapter, sample = sample_for()
    agent = ScriptedClient([AssistantTurn(content="")] * 3)
    user = ScriptedClient([text("Hello.")])
    trajectory, services = run(sample, agent, user, judge=NoJudge())
    assert trajectory.termination == "invalid_agent_message"
    score = asyncio.run(adapter.score(sample, trajectory, services))
    assert score.reward == 0.0 and not score.passed
    assert score.details["note"].endswith("Termination reason: invalid_agent_message")


class RecordingJudge(ModelClient):
    name = "recording-judge"

    def __init__(self):
        self.prompts: list[str] = []

    async def complete(self, messages, tools, params):
        self.prompts.append(messages[-1]["content"])
        return AssistantTurn(content='[{"rubric_idx": "rubric_0", "meetExpectation": true}]')


def test_stop_token_in_a_message_with_tool_calls_ends_the_conversation_there():
    adapter, sample = sample_for()
    agent = ScriptedClient(
        [
            AssistantTurn(content="Ordering. ###STOP###", tool_calls=[order_call()]),
            text("Ordered, anything else?"),
        ]
    )
    user = ScriptedClient([text("Noodles please.")])
    trajectory, _ = run(sample, agent, user)
    assert trajectory.termination == "agent_stop"
    judge = RecordingJudge()
    services = Services(judge_client=judge, judge_model="recording")
    asyncio.run(adapter.score(sample, trajectory, services))
    lines = judge.prompts[0].split("<window_content>\n")[1].split("\n</window_content>")[0]
    assert lines.splitlines() == [
        f"[1] assistant: {GREETING['en']}",
        "[2] user: Noodles please.",
        "[3] assistant: Ordering. ###STOP### create_delivery_order(store_id='S1', "
        "product_ids=['P1'], product_cnts=[2])",
    ]
    # the same message at the step limit ends as max_steps (user 1, agent 2)
    _, sample = sample_for(max_steps=2)
    agent = ScriptedClient([AssistantTurn(content="###STOP###", tool_calls=[order_call()])])
    trajectory, _ = run(sample, agent, ScriptedClient([text("Noodles please.")]))
    assert trajectory.termination == "max_steps"


def test_count_hops_counts_a_tool_batch_once_and_skips_greeting_and_blanks():
    transcript = [
        {"role": "assistant", "content": "Hello", "hidden": True},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "a"}, {"id": "b"}]},
        {"role": "tool", "content": "x"},
        {"role": "tool", "content": "y"},
        {"role": "assistant", "content": ""},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "bye"},
    ]
    assert count_hops(transcript) == 5


@pytest.mark.parametrize(("max_steps", "termination"), [(4, "max_steps"), (5, "agent_stop")])
def test_max_steps_wins_over_a_stop_in_the_same_hop(max_steps, termination):
    # hops: user 1, agent 2, user 3, agent (with ###STOP###) 4
    _, sample = sample_for(max_steps=max_steps)
    agent = ScriptedClient([text("What else?"), text("Bye ###STOP###")])
    user = ScriptedClient([text("Noodles."), text("Nothing.")])
    trajectory, _ = run(sample, agent, user)
    assert trajectory.termination == termination


def test_user_stop_at_the_last_step_is_max_steps():
    _, sample = sample_for(max_steps=3)
    agent = ScriptedClient([text("What else?")])
    user = ScriptedClient([text("Noodles."), text("Thanks ###STOP###")])
    trajectory, _ = run(sample, agent, user)
    assert trajectory.termination == "max_steps"
    assert trajectory.messages[-1]["content"] == "Thanks ###STOP###"


def test_an_agent_that_never_stops_calling_tools_ends_at_max_steps():
    adapter, sample = sample_for(max_steps=6)
    calls = [AssistantTurn(tool_calls=[order_call(f"c{i}")]) for i in range(40)]
    agent = ScriptedClient(calls)
    user = ScriptedClient([text("Noodles.")])
    trajectory, services = run(sample, agent, user, judge=NoJudge())
    assert trajectory.termination == "max_steps"
    assert count_hops(trajectory.messages) >= 6
    # The hop limit holds inside the tool loop: user 1, then three replies with
    # their tool batches (hops 2-7); no further model call is made.
    assert len(agent.calls) == 3
    score = asyncio.run(adapter.score(sample, trajectory, services))
    assert score.reward == 0.0 and score.progress is None


def test_vitabench_limits_have_no_error_cap_and_no_wall_clock():
    _, sample = sample_for()
    assert sample.limits.max_tool_errors is None and sample.limits.wall_time_s is None
    assert sample.limits.max_steps == 300 and not sample.limits.single_step


def test_scripted_user_and_stub_judge_score_an_offline_run_and_regrade_from_json():
    adapter, sample = sample_for()
    agent = ScriptedClient(
        [AssistantTurn(tool_calls=[order_call()]), text("Your noodles are ordered. Anything else?")]
    )
    trajectory, services = run(sample, agent, user_model="scripted")
    assert trajectory.messages[1]["content"] == TASK["instructions"]
    assert trajectory.termination == "user_stop"
    assert "###STOP###" in trajectory.messages[-1]["content"]
    score = asyncio.run(adapter.score(sample, trajectory, services))
    assert score.details["orders_match"]["match"] is True
    assert score.passed and score.reward == 1.0 and score.progress == 1.0
    assert score.details["judge_model"] == "stub"
    assert score.details["info"]["num_windows"] == 1
    stored = json.loads(json.dumps(trajectory.to_dict()))
    again = asyncio.run(adapter.score(sample, Trajectory.from_dict(stored), services))
    assert again.to_dict() == score.to_dict()


def test_scripted_user_gives_its_id_and_gives_up_after_a_few_turns():
    adapter, sample = sample_for()
    agent = ScriptedClient([text("What is your user id?")] + [text("Anything else?")] * 10)
    trajectory, services = run(sample, agent, user_model="scripted")
    users = [m["content"] for m in trajectory.messages if m["role"] == "user"]
    assert users[1] == "My user id is U000001."
    assert trajectory.termination == "user_stop" and len(users) == 5
    score = asyncio.run(adapter.score(sample, trajectory, services))
    assert score.details["orders_match"]["match"] is False and score.reward == 0.0


def test_missing_user_or_judge_model_is_a_clear_error():
    adapter, sample = sample_for()
    with pytest.raises(ValueError, match="user simulator"):
        sample.make_user(sample.make_environment(), Services())
    trajectory = Trajectory(messages=[], termination="user_stop", final_state={})
    with pytest.raises(ValueError, match="judge model"):
        asyncio.run(adapter.score(sample, trajectory, Services()))


def test_bad_model_output_never_crashes_the_real_environment(shared_data):
    adapter = VitaBenchAdapter()
    sample = adapter.load(
        "delivery", ids=["10711001"], data_dir=shared_data / "vitabench", options={"language": "en"}
    )[0]
    bad_calls = [
        ToolCall(id="u", name="teleport", arguments={}),
        ToolCall(id="t", name="create_delivery_order", arguments={"product_ids": 5, "user_id": []}),
        ToolCall(
            id="h", name="address_to_longitude_latitude", arguments={"address": "x" * 1_000_000}
        ),
        ToolCall.from_openai(
            {"id": "j", "function": {"name": "weather", "arguments": "{not json"}}
        ),
        ToolCall.from_openai({"id": "l", "function": {"name": "weather", "arguments": "[1, 2]"}}),
        ToolCall(id="n", name="", arguments={}),
        ToolCall(
            id="s",
            name="get_nearby",
            arguments={"longitude": "\ud800", "latitude": None, "range": {}},
        ),
    ]
    agent = ScriptedClient(
        [AssistantTurn(tool_calls=bad_calls), AssistantTurn(content="Sorry. ###STOP###")]
    )
    trajectory, services = run(sample, agent, user_model="scripted")
    assert trajectory.termination == "agent_stop"
    assert trajectory.tool_calls == len(bad_calls)
    tool_messages = [m for m in trajectory.messages if m["role"] == "tool"]
    assert len(tool_messages) == len(bad_calls)
    assert tool_messages[0]["content"] == "Error: Tool 'teleport' not found."
    assert all(len(m["content"]) < 200_000 for m in tool_messages)
    json.dumps(trajectory.to_dict())  # the record can be stored
    score = asyncio.run(adapter.score(sample, trajectory, services))
    assert score.reward == 0.0 and score.details["orders_match"]["match"] is False
