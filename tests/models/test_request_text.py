"""A request's JSON text with each tool list encoded once: the same bytes as
encoding the whole body, whatever the body holds."""

from __future__ import annotations

import json

import pytest

from harness.adapters.bfcl import BFCLAdapter
from harness.models import request_text
from harness.models.openai_http import OpenAIHTTPClient
from harness.models.openai_wire import wire_tools
from harness.models.request_text import RequestText
from harness.types import SamplingParams

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "météo",
            "description": "Temps qu'il fait — 天气 \ud83d\ude00 and a lone \udc80 surrogate",
            "parameters": {"type": "object", "properties": {"ville": {"type": "string"}}},
            "response": {"type": "string"},  # a dataset field, left off the wire
        },
    },
    {"name": "bare", "parameters": {"type": "object", "properties": {}}, "strict": True},
]
MESSAGES = [
    {"role": "system", "content": 'Réponds en français.\n\t"quoted"'},
    {"role": "user", "content": "Quel temps à Zürich? \udc80"},
]


def client() -> OpenAIHTTPClient:
    return OpenAIHTTPClient("openai/m", "http://127.0.0.1:9/v1", api_key="k")


def whole(http: OpenAIHTTPClient, messages, tools, params) -> str:
    return json.dumps(http.request_body(messages, tools, params), ensure_ascii=False)


@pytest.mark.parametrize(
    "params",
    [
        SamplingParams(),
        SamplingParams(temperature=0.5, max_tokens=7, seed=3, extra={"top_k": 20}),
        # extra may replace the tools, or bring its own in extra_body: encoded as given.
        SamplingParams(extra={"tools": [{"type": "function", "function": {"name": "x"}}]}),
        SamplingParams(extra={"extra_body": {"tools": [], "chat_template_kwargs": {"a": 1}}}),
    ],
)
def test_the_text_is_the_whole_bodys_json_byte_for_byte(params):
    http = client()
    for tools in (TOOLS, [], TOOLS[1:], TOOLS):
        text = http.request_text(MESSAGES, tools, params)
        assert text == whole(http, MESSAGES, tools, params)
        assert text.encode("utf-8", "surrogatepass") == whole(http, MESSAGES, tools, params).encode(
            "utf-8", "surrogatepass"
        )


def test_a_bfcl_multi_turn_episodes_requests_are_unchanged():
    sample = BFCLAdapter().load("multi_turn_base", limit=1)[0]
    http = client()
    messages = [{"role": "user", "content": "cd into the documents folder"}]
    for step in range(3):
        text = http.request_text(messages, sample.tools, SamplingParams(seed=step))
        assert text == whole(http, messages, sample.tools, SamplingParams(seed=step))
        messages = [*messages, {"role": "assistant", "content": f"step {step}"}]


def test_a_tool_list_is_encoded_once_however_many_requests_offer_it(monkeypatch):
    encoded: list[object] = []
    real = request_text._dumps

    def counting(value):
        if isinstance(value, list) and value and "function" in value[0]:
            encoded.append(value)
        return real(value)

    monkeypatch.setattr(request_text, "_dumps", counting)
    texts = RequestText()
    for _ in range(5):
        wire = texts.wire_tools(TOOLS)
        texts.dumps({"model": "m", "messages": [], "tools": wire}, TOOLS)
    assert len(encoded) == 1 and texts.wire_tools(TOOLS) is wire
    assert wire == wire_tools(TOOLS)
    # Another list (a turn that changes the tools) is a list of its own.
    fewer = TOOLS[:1]
    assert texts.wire_tools(fewer) == wire_tools(fewer) and len(encoded) == 2


def test_the_least_recently_used_lists_are_let_go():
    texts = RequestText(max_tool_lists=2)
    lists = [[dict(TOOLS[1], name=f"t{i}")] for i in range(3)]
    first = texts.wire_tools(lists[0])
    texts.wire_tools(lists[1])
    assert texts.wire_tools(lists[0]) is first  # used again: kept
    texts.wire_tools(lists[2])  # lists[1] goes
    assert texts.wire_tools(lists[0]) is first
    assert texts.wire_tools(lists[1]) == wire_tools(lists[1])


def test_a_request_with_known_tools_takes_two_encoder_calls_whatever_its_fields(monkeypatch):
    calls: list[object] = []
    real = request_text._dumps
    monkeypatch.setattr(request_text, "_dumps", lambda value: calls.append(value) or real(value))
    http = client()
    http.request_text(MESSAGES, TOOLS, SamplingParams())  # the tools' text kept
    params = SamplingParams(temperature=0.5, max_tokens=7, seed=3, extra={"top_k": 20})
    calls.clear()
    text = http.request_text(MESSAGES, TOOLS, params)
    assert len(calls) == 2  # the entries before the tools, and those after them
    assert text == whole(http, MESSAGES, TOOLS, params)
