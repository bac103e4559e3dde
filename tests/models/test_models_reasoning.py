"""Reasoning separation, reply reading and credential scrubbing."""

from __future__ import annotations

import json

import pytest

from harness.models.base import ModelError
from harness.models.openai_wire import http_error, parse_retry_after, turn_from_response
from harness.models.reasoning import split_reasoning
from harness.models.redact import redact_url, scrub_secrets


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain", ("plain", None)),
        (None, (None, None)),
        ("<think>a</think>b", ("b", "a")),
        ("a thought</think>\n\nanswer", ("answer", "a thought")),  # tag opened by the template
        ("x<think>one</think>y<think>two</think>z", ("xyz", "one\ntwo")),
        ("answer<think>cut off", ("answer", "cut off")),
        ("<think>only</think>", (None, "only")),
    ],
)
def test_split_reasoning(text, expected):
    assert split_reasoning(text) == expected


def reply(message, **extra):
    return {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}], **extra}


def test_turn_from_response_survives_garbage():
    turn = turn_from_response(
        reply(
            {
                "content": [
                    {"type": "text", "text": "part "},
                    {"type": "text", "text": "two\ud800"},
                ],
                "tool_calls": [
                    "not a dict",
                    {"function": {"name": "f", "arguments": {"a": 1}}},
                    {"function": None},
                    {"id": 5, "function": {"name": ["x"], "arguments": 12}},
                ],
            },
            usage={"prompt_tokens": "many", "completion_tokens": -3},
        )
    )
    assert turn.content == "part two\ufffd"  # the lone surrogate, replaced and counted
    assert turn.text_repairs == 1
    assert [c.parse_error is None for c in turn.tool_calls] == [False, True, True, False]
    assert turn.tool_calls[1].arguments == {"a": 1}
    assert (turn.usage.prompt_tokens, turn.usage.completion_tokens) == (0, 0)
    json.dumps(turn.to_dict())
    json.dumps(turn.raw)


def test_turn_without_choices_is_a_transient_error():
    with pytest.raises(ModelError) as caught:
        turn_from_response({"choices": []})
    assert caught.value.transient


def test_huge_reply_is_bounded():
    turn = turn_from_response(reply({"content": "x" * 3_000_000}))
    assert len(turn.content) < 2_100_000 and turn.content.endswith("more characters]")


def test_reasoning_field_variants():
    assert turn_from_response(reply({"content": "a", "reasoning": "r"})).reasoning == "r"
    both = turn_from_response(reply({"content": "<think>t</think>a", "reasoning_content": "r"}))
    assert (both.content, both.reasoning) == ("a", "r\nt")


def test_retry_after_forms():
    assert parse_retry_after({"Retry-After": "2.5"}) == 2.5
    assert parse_retry_after({"retry-after-ms": "1500"}) == 1.5
    assert parse_retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after(None) is None


def test_http_error_classification():
    assert http_error(429, "slow", {"retry-after": "3"}).retry_after == 3.0
    assert http_error(429, "slow").transient and http_error(503, "x").transient
    assert not http_error(400, "x").transient and not http_error(401, "x").transient


def test_scrub_and_redact(monkeypatch):
    monkeypatch.setenv("SOME_PROVIDER_API_KEY", "prov-secret-value-123")
    text = scrub_secrets(
        "key mykey-abcdefgh, env prov-secret-value-123, Authorization: Bearer abc.def.ghi123, "
        "sk-proj-XYZ12345678, api_key=hunter2hunter2",
        ["mykey-abcdefgh"],
    )
    for secret in (
        "mykey-abcdefgh",
        "prov-secret-value-123",
        "abc.def.ghi123",
        "XYZ12345678",
        "hunter2hunter2",
    ):
        assert secret not in text
    assert redact_url("https://u:p@host:8443/v1?key=abc&api-version=2024") == (
        "https://host:8443/v1?key=***&api-version=2024"
    )
    assert redact_url(None) is None
