"""The one outbound wire format, and that every client sends it.

A teacher-forced history as dataset records bring it (assistant ``content: null``
beside tool calls, extra keys on every message and call, a dict of arguments)
goes to the fake server through the direct client, the litellm client, the
replica pool and litellm's Router; each request must be the strict form that
llama-cpp-python and every other OpenAI-compatible server accept.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from harness.cli import build_parser
from harness.models.litellm_client import LiteLLMClient
from harness.models.openai_http import OpenAIHTTPClient, parse_reply_body
from harness.models.openai_wire import chat_request, wire_messages, wire_tools
from harness.models.prompt_mode import HermesPromptFormat, PromptModeClient
from harness.models.settings import ModelSettings
from harness.run.clients import build_remote_client
from harness.serving.replicas import LiteLLMRouterClient, Replica, ReplicaPool
from harness.testing.fake_server import FakeServer, Reply
from harness.types import AssistantTurn, SamplingParams, ToolCall

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_quote",
            "description": "Price of a stock",
            "parameters": {"type": "object", "properties": {"symbol": {"type": "string"}}},
            "response": {"type": "number"},  # a dataset field, not part of the protocol
        },
        "server": "finance",  # likewise
    }
]
# What a teacher-forced FinMCP history looks like before it reaches the wire.
HISTORY = [
    {"role": "system", "content": "You are a broker.", "lang": "en"},
    {"role": "user", "content": "Quote AAPL and MSFT", "turn_id": 3},
    {
        "role": "assistant",
        "content": None,
        "reasoning_content": "two quotes",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "get_quote", "arguments": {"symbol": "AAPL"}},
                "index": 0,
            },
            {"id": "c2", "function": {"name": "get_quote", "arguments": '{"symbol": "MSFT"}'}},
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "name": "get_quote", "content": "190.1"},
    {"role": "tool", "tool_call_id": "c2", "content": None, "gold": True},
    {"role": "assistant", "content": None},
]
EXPECTED = [
    {"role": "system", "content": "You are a broker."},
    {"role": "user", "content": "Quote AAPL and MSFT"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "get_quote", "arguments": '{"symbol": "AAPL"}'},
            },
            {
                "id": "c2",
                "type": "function",
                "function": {"name": "get_quote", "arguments": '{"symbol": "MSFT"}'},
            },
        ],
    },
    {"role": "tool", "content": "190.1", "tool_call_id": "c1"},
    {"role": "tool", "content": "", "tool_call_id": "c2"},
    {"role": "assistant", "content": ""},
]
EXPECTED_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_quote",
            "description": "Price of a stock",
            "parameters": {"type": "object", "properties": {"symbol": {"type": "string"}}},
        },
    }
]


def test_messages_and_tools_in_the_strict_form():
    assert wire_messages(HISTORY) == EXPECTED
    assert wire_tools(TOOLS) == EXPECTED_TOOLS


def test_tool_choice_is_sent_only_with_tools_and_can_be_overridden():
    params = SamplingParams(temperature=0.2, max_tokens=5)
    body = chat_request("m", HISTORY, TOOLS, params)
    assert body["tool_choice"] == "auto" and body["tools"] == EXPECTED_TOOLS
    assert (body["temperature"], body["max_tokens"]) == (0.2, 5) and "seed" not in body
    assert "tool_choice" not in chat_request("m", HISTORY, [], params)
    assert chat_request("m", HISTORY, TOOLS, params, "required")["tool_choice"] == "required"
    assert "tool_choice" not in chat_request("m", HISTORY, TOOLS, params, "omit")
    # params.extra may override anything, tool_choice included.
    extra = SamplingParams(extra={"tool_choice": "none"})
    assert chat_request("m", HISTORY, TOOLS, extra)["tool_choice"] == "none"


@pytest.fixture(scope="module")
def servers():
    with FakeServer() as first, FakeServer() as second:
        yield first, second


@pytest.fixture
def fake(servers):
    for server in servers:
        server.clear()
    return servers


def _direct(server, **kw):
    return OpenAIHTTPClient("openai/fake-model", server.url, timeout=10.0, **kw)


def _litellm(server, **kw):
    return LiteLLMClient("openai/fake-model", api_base=server.url, timeout=10.0, **kw)


def _pool(servers, **kw):
    return ReplicaPool("openai/fake-model", [Replica(s.url, _direct(s, **kw), 4) for s in servers])


def _router(servers, **kw):
    return LiteLLMRouterClient("openai/fake-model", {s.url: 4 for s in servers}, timeout=10.0, **kw)


CLIENTS = {"direct": _direct, "litellm": _litellm}
POOLS = {"pool": _pool, "router": _router}


def _send(client, tools=TOOLS):
    async def main():
        try:
            return await client.complete(list(HISTORY), list(tools), SamplingParams())
        finally:
            await client.aclose()

    return asyncio.run(main())


def _bodies(servers):
    return [r.body for server in servers for r in server.chat_requests]


@pytest.mark.parametrize("kind", sorted(CLIENTS) + sorted(POOLS))
@pytest.mark.parametrize("tool_choice", ["auto", "required", "none", "omit"])
def test_every_client_sends_the_wire_format(fake, kind, tool_choice):
    first, _ = fake
    first.enqueue(Reply.text("ok"))
    fake[1].enqueue(Reply.text("ok"))
    if kind in CLIENTS:
        client = CLIENTS[kind](first, tool_choice=tool_choice)
    else:
        client = POOLS[kind](fake, tool_choice=tool_choice)
    assert _send(client).content == "ok"
    (body,) = _bodies(fake)
    assert body["messages"] == EXPECTED
    assert body["tools"] == EXPECTED_TOOLS
    if tool_choice == "omit":
        assert "tool_choice" not in body
    else:
        assert body["tool_choice"] == tool_choice
    assert client.cache_identity()["tool_choice"] == tool_choice


@pytest.mark.parametrize("kind", sorted(CLIENTS))
def test_no_tools_no_tool_choice(fake, kind):
    fake[0].enqueue(Reply.text("ok"))
    _send(CLIENTS[kind](fake[0]), tools=[])
    (body,) = _bodies(fake)
    assert "tools" not in body and "tool_choice" not in body


def test_prompt_mode_sends_neither_tools_nor_tool_choice(fake):
    fake[0].enqueue(Reply.text("ok"))
    _send(PromptModeClient(_direct(fake[0]), HermesPromptFormat()))
    (body,) = _bodies(fake)
    assert "tools" not in body and "tool_choice" not in body
    assert "get_quote" in body["messages"][0]["content"]  # the tools are in the prompt


def test_the_run_flag_reaches_the_client_and_defaults_to_auto(fake):
    args = build_parser().parse_args(["run", "--suite", "smoke", "--model", "m"])
    assert args.tool_choice == "auto"
    fake[0].enqueue(Reply.text("ok"))
    settings = ModelSettings(
        name="openai/fake-model", api_base=fake[0].url, tool_choice="required", max_attempts=1
    )
    client = build_remote_client(settings)
    _send(client)
    assert _bodies(fake)[0]["tool_choice"] == "required"


# ---------------------------------------------------------------- arguments sent back


def _reply_body(arguments: str) -> bytes:
    call = {"id": "c1", "type": "function", "function": {"name": "pwd", "arguments": arguments}}
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    return json.dumps({"choices": [{"message": message, "finish_reason": "tool_calls"}]}).encode()


@pytest.mark.parametrize("arguments", ["", '{"a":1}', '\n {"a": 1} ', "[1, 2]", '{"oops": '])
def test_a_models_arguments_text_goes_back_to_it_verbatim(arguments):
    """BFCL's handlers put the model's output items back into the history as they
    came: a model's "" is sent back as "", not as "{}"."""
    turn = parse_reply_body(_reply_body(arguments))
    (call,) = turn.tool_calls
    assert turn.to_message()["tool_calls"][0]["function"]["arguments"] == arguments
    (sent,) = wire_messages([turn.to_message()])
    assert sent["tool_calls"][0]["function"]["arguments"] == arguments
    # The cache and the record store keep it (a replayed reply is sent back alike).
    again = AssistantTurn.from_dict(json.loads(json.dumps(turn.to_dict())))
    assert again.to_message()["tool_calls"][0]["function"]["arguments"] == arguments


def test_a_call_built_in_code_still_gets_its_json():
    built = ToolCall(id="oracle_0", name="cd", arguments={"folder": "docs"})
    assert built.to_openai()["function"]["arguments"] == '{"folder": "docs"}'
    zero = ToolCall(id="oracle_1", name="pwd", arguments={})
    assert zero.to_openai()["function"]["arguments"] == "{}"
    # Its record holds the JSON it was sent as, so a replay sends the same.
    for call in (built, zero):
        record = call.to_dict()
        assert record["raw_arguments"] == call.to_openai()["function"]["arguments"]
        assert ToolCall.from_dict(record).to_openai() == call.to_openai()


def test_records_keep_the_keys_older_code_reads():
    """No new key (older code builds ToolCall(**record)); a record of a call whose
    text was not empty is exactly as before."""
    (call,) = parse_reply_body(_reply_body('{"a": 1}')).tool_calls
    assert call.to_dict() == {
        "id": "c1",
        "name": "pwd",
        "arguments": {"a": 1},
        "raw_arguments": '{"a": 1}',
        "parse_error": None,
    }
    (empty,) = parse_reply_body(_reply_body("")).tool_calls
    assert empty.to_dict() == {
        "id": "c1",
        "name": "pwd",
        "arguments": {},
        "raw_arguments": "",
        "parse_error": None,
    }
    # A record older code wrote for a call built in code ("" beside arguments)
    # still stands for the JSON of its arguments.
    old = {"id": "o", "name": "cd", "arguments": {"folder": "x"}, "raw_arguments": ""}
    assert ToolCall.from_dict(old).to_openai()["function"]["arguments"] == '{"folder": "x"}'
