"""The episode loop: tool execution, bad model output, limits."""

from __future__ import annotations

import asyncio
import threading

from harness.episode.loop import (
    MAX_TOOL_OUTPUT_CHARS,
    EpisodeInput,
    run_episode,
    sanitize_tool_output,
)
from harness.models.base import ScriptedClient
from harness.task.contract import (
    Environment,
    EpisodeLimits,
    ScriptedTurns,
    UserTurn,
    WrappedEnvironment,
)
from harness.types import AssistantTurn, SamplingParams, ToolCall, ToolResult

from toy_adapter import ADD_TOOL, CounterEnvironment


def run(turns, env=None, limits=None, user=None, initial=None):
    spec = EpisodeInput(
        initial_messages=initial if initial is not None else [{"role": "user", "content": "go"}],
        tools=[ADD_TOOL],
        environment=env or CounterEnvironment(),
        user=user,
        limits=limits or EpisodeLimits(),
        params=SamplingParams(),
    )
    return asyncio.run(run_episode(spec, ScriptedClient(turns)))


def call(name="add", **arguments):
    return ToolCall(id="", name=name, arguments=arguments)


def test_tool_calls_are_executed_until_the_model_answers_with_text():
    trajectory = run([AssistantTurn(tool_calls=[call(n=2), call(n=3)]), AssistantTurn(content="5")])
    assert trajectory.final_state == {"total": 5}
    roles = [m["role"] for m in trajectory.messages]
    assert roles == ["assistant", "tool", "tool", "assistant"]
    assert trajectory.messages[1]["tool_call_id"] == trajectory.messages[0]["tool_calls"][0]["id"]
    assert trajectory.tool_calls == 2 and trajectory.termination == "completed"


def test_unparseable_arguments_become_an_error_the_model_sees_and_the_episode_goes_on():
    bad = ToolCall.from_openai({"id": "x", "function": {"name": "add", "arguments": '{"n": 1'}})
    assert bad.parse_error and bad.arguments is None
    trajectory = run([AssistantTurn(tool_calls=[bad]), AssistantTurn(tool_calls=[call(n=1)])])
    assert trajectory.messages[1]["content"].startswith("Error: could not parse")
    assert trajectory.final_state == {"total": 1}
    assert trajectory.tool_errors == 1


def test_unknown_tool_and_wrong_types_are_errors_not_crashes():
    trajectory = run([AssistantTurn(tool_calls=[call("rm_rf", path="/"), call(n="three")])])
    assert [m["content"] for m in trajectory.messages if m["role"] == "tool"] == [
        "Error: unknown tool rm_rf",
        "Error: n must be an integer",
    ]


class ExplodingEnvironment(Environment):
    async def execute(self, call):
        raise RuntimeError("boom")


def test_an_environment_exception_becomes_an_error_result():
    trajectory = run([AssistantTurn(tool_calls=[call(n=1)])], env=ExplodingEnvironment())
    assert trajectory.messages[1]["content"] == "Error: RuntimeError: boom"


class NoisyEnvironment(Environment):
    def __init__(self, payload):
        self.payload = payload

    async def execute(self, call):
        return ToolResult(self.payload)


def test_huge_and_non_utf8_outputs_are_bounded_valid_text():
    huge = run([AssistantTurn(tool_calls=[call(n=1)])], env=NoisyEnvironment("x" * 5_000_000))
    content = huge.messages[1]["content"]
    assert len(content) < MAX_TOOL_OUTPUT_CHARS + 100 and "truncated" in content
    assert sanitize_tool_output(b"\xff\xfeok") == "\ufffd\ufffdok"
    assert sanitize_tool_output("a\udcffb").encode("utf-8")  # lone surrogate made encodable


def test_single_step_records_calls_without_executing_them():
    trajectory = run(
        [AssistantTurn(tool_calls=[call(n=4)])], limits=EpisodeLimits(single_step=True)
    )
    assert trajectory.final_state == {"total": 0}
    assert len(trajectory.turns) == 1 and trajectory.turns[0].tool_calls[0].arguments == {"n": 4}


def test_step_cap_per_turn_ends_the_episode_with_its_reason():
    turns = [AssistantTurn(tool_calls=[call(n=1)]) for _ in range(30)]
    trajectory = run(turns, limits=EpisodeLimits(max_steps_per_turn=20))
    assert trajectory.termination == "max_steps_per_turn"
    assert len(trajectory.turns) == 20


def test_tool_error_cap_ends_the_episode():
    turns = [AssistantTurn(tool_calls=[call("nope")]) for _ in range(30)]
    trajectory = run(turns, limits=EpisodeLimits(max_tool_errors=3))
    assert trajectory.termination == "max_tool_errors" and trajectory.tool_errors == 3


def test_scripted_user_turns_change_tools_and_teacher_forcing_resets_context():
    history = [
        {"role": "user", "content": "gold question"},
        {"role": "assistant", "content": "gold"},
    ]
    user = ScriptedTurns(
        [
            UserTurn(messages=[{"role": "user", "content": "first"}]),
            UserTurn(messages=[{"role": "user", "content": "second"}], history=history, tools=[]),
            UserTurn(messages=[{"role": "user", "content": "bye"}], stop="user_stop"),
        ]
    )
    client = ScriptedClient([AssistantTurn(content="a1"), AssistantTurn(content="a2")])
    spec = EpisodeInput(
        [], [ADD_TOOL], CounterEnvironment(), user, EpisodeLimits(), SamplingParams()
    )
    trajectory = asyncio.run(run_episode(spec, client))
    assert trajectory.termination == "user_stop"
    assert [m["content"] for m in trajectory.messages] == ["first", "a1", "second", "a2", "bye"]
    # The second model call saw the gold history, not the first exchange.
    assert [m["content"] for m in client.calls[1]] == ["gold question", "gold", "second"]
    assert trajectory.context_resets == [2] and trajectory.reset_histories == [history]


def test_hidden_user_messages_are_recorded_but_not_shown_to_the_model():
    user = ScriptedTurns(
        [
            UserTurn(
                messages=[{"role": "user", "content": "hi"}],
                hidden=[{"role": "user", "content": "secret"}],
            )
        ]
    )
    client = ScriptedClient([AssistantTurn(content="hello")])
    spec = EpisodeInput(
        [], [ADD_TOOL], CounterEnvironment(), user, EpisodeLimits(), SamplingParams()
    )
    trajectory = asyncio.run(run_episode(spec, client))
    assert trajectory.messages[0] == {"role": "user", "content": "secret", "hidden": True}
    assert [m["content"] for m in client.calls[0]] == ["hi"]


def test_tool_call_cap_per_turn_ends_the_turn_not_the_episode():
    user = ScriptedTurns(
        [
            UserTurn(messages=[{"role": "user", "content": "t1"}]),
            UserTurn(messages=[{"role": "user", "content": "t2"}]),
        ]
    )
    # Turn 1: replies of 2 calls each, forever; turn 2 gets a text answer.
    turns = [AssistantTurn(tool_calls=[call(n=1), call(n=1)]) for _ in range(4)]
    turns.append(AssistantTurn(content="second turn answer"))
    spec = EpisodeInput(
        [],
        [ADD_TOOL],
        CounterEnvironment(),
        user,
        EpisodeLimits(max_tool_calls_per_turn=5),
        SamplingParams(),
    )
    trajectory = asyncio.run(run_episode(spec, ScriptedClient(turns)))
    # Replies 1-3 run (6 calls > 5); reply 4 is recorded unexecuted and turn 1 ends.
    assert trajectory.final_state == {"total": 6}
    assert trajectory.termination == "completed"
    assert trajectory.messages[-1]["content"] == "second turn answer"


class OverflowingClient(ScriptedClient):
    async def complete(self, messages, tools, params):
        if len(messages) > 2:
            from harness.models.base import CONTEXT_OVERFLOW, ModelError

            raise ModelError("HTTP 400: maximum context length exceeded", kind=CONTEXT_OVERFLOW)
        return await super().complete(messages, tools, params)


def test_context_overflow_ends_the_episode_as_a_scored_failure():
    spec = EpisodeInput(
        [{"role": "user", "content": "go"}],
        [ADD_TOOL],
        CounterEnvironment(),
        None,
        EpisodeLimits(),
        SamplingParams(),
    )
    client = OverflowingClient([AssistantTurn(tool_calls=[call(n=1)])])
    trajectory = asyncio.run(run_episode(spec, client))
    assert trajectory.termination == "context_overflow"
    assert trajectory.final_state == {"total": 1}


def test_other_model_errors_leave_the_episode_for_the_runner():
    import pytest

    from harness.models.base import ModelError

    class Failing(ScriptedClient):
        async def complete(self, messages, tools, params):
            raise ModelError("HTTP 401: bad key")

    spec = EpisodeInput(
        [{"role": "user", "content": "go"}],
        [ADD_TOOL],
        CounterEnvironment(),
        None,
        EpisodeLimits(),
        SamplingParams(),
    )
    with pytest.raises(ModelError):
        asyncio.run(run_episode(spec, Failing([])))


class StateThreadEnvironment(CounterEnvironment):
    """Notes the thread its final state is taken on."""

    def final_state(self):
        self.state_thread = threading.current_thread().name
        return super().final_state()


class LargeStateEnvironment(StateThreadEnvironment):
    large_state = True


def test_a_large_final_state_is_taken_off_the_event_loop_and_a_small_one_on_it():
    large, small = LargeStateEnvironment(), StateThreadEnvironment()
    assert run([AssistantTurn(tool_calls=[call(n=2)])], env=large).final_state == {"total": 2}
    assert run([AssistantTurn(tool_calls=[call(n=2)])], env=small).final_state == {"total": 2}
    assert large.state_thread == "tool"  # the tool worker (harness/boundary/tool_budget.py)
    assert small.state_thread == threading.main_thread().name
    # Wrappers say what their environment says.
    assert WrappedEnvironment(large).large_state and not WrappedEnvironment(small).large_state
