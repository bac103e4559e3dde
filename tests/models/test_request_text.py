"""A request's JSON payload with each tool list encoded once: the same value as
the whole body, whatever the body holds; orjson's JSON where it takes the part,
json's (surrogates passed through) where it does not."""

from __future__ import annotations

import datetime
import json

import orjson
import pytest

from harness.adapters.bfcl import BFCLAdapter
from harness.models import request_text
from harness.models.openai_http import OpenAIHTTPClient
from harness.models.openai_wire import wire_tools
from harness.models.request_text import RequestText, json_bytes
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


def whole(http: OpenAIHTTPClient, messages, tools, params) -> object:
    """The body as the server reads it (json's text of it, parsed back)."""
    return json.loads(json.dumps(http.request_body(messages, tools, params), ensure_ascii=False))


def read(payload: bytes) -> object:
    # A lone surrogate is passed through (as json.dumps gives it): read it back so.
    return json.loads(payload.decode("utf-8", "surrogatepass"))


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
def test_the_payload_is_the_whole_bodys_json(params):
    http = client()
    for messages in (MESSAGES, MESSAGES[:1]):  # with a lone surrogate, and without
        for tools in (TOOLS, [], TOOLS[1:], TOOLS):
            payload = http.request_payload(messages, tools, params)
            assert read(payload) == whole(http, messages, tools, params)


def test_orjson_writes_what_it_takes_and_json_the_rest():
    plain = {"model": "m", "messages": [{"role": "user", "content": "Zürich — 天气"}]}
    assert json_bytes(plain) == orjson.dumps(plain)
    assert json_bytes(plain).decode("utf-8") == json.dumps(
        plain, ensure_ascii=False, separators=(",", ":")
    )
    # What orjson refuses is written as json writes it.
    for refused in ({"text": "lone \udc80"}, {"n": 2**70}, {1: "an int key"}):
        assert json_bytes(refused) == json.dumps(refused, ensure_ascii=False).encode(
            "utf-8", "surrogatepass"
        )
    # NaN is written as null (json's NaN is not JSON), a date as its ISO text.
    extra = {"t": float("nan"), "day": datetime.date(2026, 1, 2)}
    assert json.loads(json_bytes(extra)) == {"t": None, "day": "2026-01-02"}


def test_a_bfcl_multi_turn_episodes_requests_are_unchanged():
    sample = BFCLAdapter().load("multi_turn_base", limit=1)[0]
    http = client()
    messages = [{"role": "user", "content": "cd into the documents folder"}]
    for step in range(3):
        payload = http.request_payload(messages, sample.tools, SamplingParams(seed=step))
        assert read(payload) == whole(http, messages, sample.tools, SamplingParams(seed=step))
        messages = [*messages, {"role": "assistant", "content": f"step {step}"}]


def test_a_tool_list_is_encoded_once_however_many_requests_offer_it(monkeypatch):
    encoded: list[object] = []
    real = request_text.json_bytes

    def counting(value):
        if isinstance(value, list) and value and "function" in value[0]:
            encoded.append(value)
        return real(value)

    monkeypatch.setattr(request_text, "json_bytes", counting)
    texts = RequestText()
    for _ in range(5):
        wire = texts.wire_tools(TOOLS)
        texts.payload({"model": "m", "messages": [], "tools": wire}, TOOLS)
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
    real = request_text.json_bytes
    monkeypatch.setattr(
        request_text, "json_bytes", lambda value: calls.append(value) or real(value)
    )
    http = client()
    http.request_payload(MESSAGES, TOOLS, SamplingParams())  # the tools' JSON kept
    params = SamplingParams(temperature=0.5, max_tokens=7, seed=3, extra={"top_k": 20})
    calls.clear()
    payload = http.request_payload(MESSAGES, TOOLS, params)
    assert len(calls) == 2  # the entries before the tools, and those after them
    assert read(payload) == whole(http, MESSAGES, TOOLS, params)
