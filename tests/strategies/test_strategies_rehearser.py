"""The rehearser: local validation, robust parsing of its answers, its prompt."""

from __future__ import annotations

import asyncio
import json

import pytest
from test_strategies_fakes import CANCEL_TOOL, RoleModel, call, result

from harness.boundary.tool_checks import result_status
from harness.episode.tap import ConversationTap
from harness.strategies import prompts
from harness.strategies.rehearser import (
    Rehearser,
    RehearserConfig,
    parse_simulation,
    validation_error,
)
from harness.strategies.sandbox import SimulatedEnvironment
from harness.types import AssistantTurn, SamplingParams, ToolCall

SCHEDULE_TOOL = {
    "type": "function",
    "function": {
        "name": "schedule",
        "parameters": {
            "type": "object",
            "properties": {
                "day": {"type": "string", "enum": ["mon", "tue"]},
                "hours": {"type": "integer"},
                "rate": {"type": "number"},
                "urgent": {"type": "boolean"},
                "people": {"type": "array", "items": {"type": "string"}},
                "when": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "meta": {"type": "object", "properties": {"room": {"type": "integer"}}},
                "odd": {"type": "mystery-type"},
            },
            "required": ["day"],
        },
    },
}


@pytest.mark.parametrize(
    ("text", "kind", "content"),
    [
        (result({"a": 1}), "result", '{"a": 1}'),
        (result("done"), "result", "done"),
        (result([1, 2]), "result", "[1, 2]"),
        (
            '<think>the id looks odd</think>\n<execution_result>{"ok": true}</execution_result>',
            "result",
            '{"ok": true}',
        ),
        (
            '<execution_result>\n```json\n{"ok": true}\n```\n</execution_result>',
            "result",
            '{"ok": true}',
        ),
        (result({"a": 1}) + result({"b": 2}), "result", '{"b": 2}'),
        ('<execution_result>{"cut": "off"}', "result", '{"cut": "off"}'),
        ('<execution_result>{"x": 1} and some chatter</execution_result>', "result", '{"x": 1}'),
        (result({"error": "Booking not found"}), "result", '{"error": "Booking not found"}'),
    ],
)
def test_readable_results(text, kind, content):
    prediction = parse_simulation(text)
    assert (prediction.kind, prediction.content, prediction.raw) == (kind, content, text)


@pytest.mark.parametrize("code", prompts.ERROR_CODES)
def test_validation_errors_with_each_code_inside_or_outside_the_tags(code):
    error = {"error": {"code": code, "message": "bad"}}
    for text in (json.dumps(error), f"Here: {json.dumps(error)}", result(error)):
        prediction = parse_simulation(text)
        assert prediction.kind == "validation_error" and prediction.code == code
        assert prediction.is_error and prediction.status == "error"
        assert json.loads(prediction.content) == error


@pytest.mark.parametrize(
    "text",
    [
        None,
        "",
        "The call would succeed.",
        result(None),
        result({}),
        result([]),
        result(""),
        "<execution_result>{broken</execution_result>",
        '{"error": {"code": "SOMETHING_ELSE", "message": "x"}}',
        "<think>never finished thinking",
        "{" * 5000,
    ],
)
def test_unreadable_answers_are_format_errors(text):
    prediction = parse_simulation(text)
    assert prediction.kind == "format_error" and prediction.status == "format_error"
    assert prediction.to_result().is_error
    assert prediction.raw == (text or "")


def test_result_status_is_one_rule_for_real_and_imagined_results():
    assert result_status('{"balance": 3}', False) == "ok"
    assert result_status('{"error": "Token expired"}', False) == "error"
    assert result_status('{"error": 404}', False) == "error"
    assert result_status('{"booking_status": false, "error": null}', False) == "ok"
    assert result_status("Error during execution: boom", False) == "error"
    assert result_status("anything", True) == "error"
    assert result_status("[1, 2]", False) == "ok"


@pytest.mark.parametrize(
    ("arguments", "code", "fragment"),
    [
        ({"day": "mon"}, None, None),
        ({"day": "mon", "hours": 3.0, "rate": 2, "urgent": False, "people": ["a"]}, None, None),
        ({"day": "mon", "when": None, "odd": object.__name__, "meta": {"room": 4}}, None, None),
        ({}, prompts.INVALID_PARAMETERS, "missing required argument 'day'"),
        ({"day": "sun"}, prompts.INVALID_PARAMETERS, "'day' must be one of"),
        (
            {"day": "mon", "hours": "3"},
            prompts.INVALID_PARAMETERS,
            "'hours' must be of type integer",
        ),
        ({"day": "mon", "hours": True}, prompts.INVALID_PARAMETERS, "'hours'"),
        ({"day": "mon", "rate": "2"}, prompts.INVALID_PARAMETERS, "'rate'"),
        ({"day": "mon", "people": ["a", 2]}, prompts.INVALID_PARAMETERS, "'people[1]'"),
        ({"day": "mon", "when": 5}, prompts.INVALID_PARAMETERS, "'when' matches none"),
        ({"day": "mon", "meta": {"room": "x"}}, prompts.INVALID_PARAMETERS, "'meta.room'"),
        (
            {"day": "mon", "colour": "red"},
            prompts.INVALID_PARAMETERS,
            "unexpected argument 'colour'",
        ),
    ],
)
def test_arguments_are_checked_against_the_schema(arguments, code, fragment):
    refused = validation_error(call("schedule", **arguments), [SCHEDULE_TOOL])
    if code is None:
        assert refused is None
    else:
        assert refused[0] == code and fragment.lower() in refused[1].lower()


def test_tool_whitelist_and_call_format():
    assert (
        validation_error(call("delete_everything"), [SCHEDULE_TOOL])[0]
        == prompts.TOOL_NOT_AVAILABLE
    )
    broken = ToolCall.from_openai({"id": "1", "function": {"name": "schedule", "arguments": "{"}})
    assert validation_error(broken, [SCHEDULE_TOOL])[0] == prompts.INVALID_TOOL_CALL_FORMAT
    loose = {"type": "function", "function": {"name": "free", "parameters": {"type": "object"}}}
    assert validation_error(call("free", anything=1), [loose]) is None


def rehearser_with(model: RoleModel, **config) -> Rehearser:
    return Rehearser(model, SamplingParams(temperature=0.7), RehearserConfig(**config))


def test_locally_refused_calls_never_reach_the_model():
    model = RoleModel(rehearser=lambda m, t: pytest.fail("the model was asked"))
    prediction = asyncio.run(rehearser_with(model).predict(call("nope"), [CANCEL_TOOL], [], "", []))
    assert prediction.kind == "validation_error" and prediction.code == prompts.TOOL_NOT_AVAILABLE
    assert prediction.raw == ""


def test_the_prompt_lists_tools_examples_conversation_reply_and_call_in_order():
    model = RoleModel(rehearser=lambda m, t: result({"status": "cancelled"}))
    examples = [(call("cancel_order", order_id=f"#W{i}"), f'{{"real": {i}}}') for i in range(5)]
    conversation = [
        {"role": "system", "content": "You are a shop assistant."},
        {"role": "user", "content": "Cancel #W100 please."},
    ]
    rehearser = rehearser_with(model, think_switch="/think", max_examples=2)
    prediction = asyncio.run(
        rehearser.predict(
            call("cancel_order", order_id="#W100"),
            [CANCEL_TOOL],
            conversation,
            "Let me cancel it.\n-> calls cancel_order(...)",
            examples,
        )
    )
    assert prediction.content == '{"status": "cancelled"}'
    system, user = model.calls["rehearser"][0]
    assert system["content"] == prompts.SIMULATOR_SYSTEM
    text = user["content"]
    marks = [
        text.index("## Available tools"),
        text.index('"cancel_order"'),
        text.index("## Real results of earlier calls"),
        text.index('{"real": 3}'),
        text.index("## Conversation so far"),
        text.index("Cancel #W100 please."),
        text.index("## The assistant's latest reply"),
        text.index("Let me cancel it."),
        text.index("## The call to execute"),
        text.index('cancel_order({"order_id": "#W100"})'),
    ]
    assert marks == sorted(marks)
    assert '{"real": 2}' not in text  # only the last max_examples examples
    assert text.endswith("/think")


def test_a_simulated_environment_shows_results_of_earlier_calls_of_the_same_reply():
    model = RoleModel(rehearser=lambda m, t: result({"order": len(model.calls["rehearser"])}))
    tap = ConversationTap(RoleModel())
    tap.messages = [{"role": "user", "content": "Cancel both orders."}]
    tap.reply = AssistantTurn(
        tool_calls=[call("cancel_order", order_id="#W1"), call("cancel_order", order_id="#W2")]
    )
    environment = SimulatedEnvironment(rehearser_with(model), tap, [CANCEL_TOOL])
    first = asyncio.run(environment.execute(tap.reply.tool_calls[0]))
    second = asyncio.run(environment.execute(tap.reply.tool_calls[1]))
    assert (first.content, second.content) == ('{"order": 1}', '{"order": 2}')
    first_prompt = model.calls["rehearser"][0][1]["content"]
    second_prompt = model.calls["rehearser"][1][1]["content"]
    assert "Results already returned" not in first_prompt
    assert 'cancel_order({"order_id": "#W1"})\n=> {"order": 1}' in second_prompt
    assert [entry["prediction"]["kind"] for entry in environment.log] == ["result", "result"]
    # A new reply starts afresh.
    tap.reply = AssistantTurn(tool_calls=[call("cancel_order", order_id="#W3")])
    asyncio.run(environment.execute(tap.reply.tool_calls[0]))
    assert "Results already returned" not in model.calls["rehearser"][2][1]["content"]
