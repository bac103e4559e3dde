"""Prompt mode: rendering tools into text and reading calls back, safely."""

from __future__ import annotations

import asyncio
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.models.base import ModelClient
from harness.models.prompt_format import PromptFormat
from harness.models.prompt_mode import HermesPromptFormat, PromptModeClient
from harness.types import AssistantTurn, SamplingParams, ToolCall, Usage

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "add",
            "description": "Add two numbers",
            "parameters": {"type": "object", "properties": {"a": {"type": "number"}}},
        },
    }
]
FMT = HermesPromptFormat()


class EchoClient(ModelClient):
    """Answers with fixed text and remembers what it was sent."""

    def __init__(self, content: str | None, reasoning: str | None = None):
        self.content = content
        self.reasoning = reasoning
        self.sent: list = []

    async def complete(self, messages, tools, params):
        self.sent.append((messages, tools))
        return AssistantTurn(
            content=self.content,
            reasoning=self.reasoning,
            usage=Usage(calls=1),
            finish_reason="stop",
        )


def run(client, messages=None, tools=TOOLS):
    messages = messages or [{"role": "user", "content": "add 1 and 2"}]
    return asyncio.run(client.complete(messages, tools, SamplingParams()))


def test_hermes_blocks_are_parsed():
    text = (
        'Let me add.\n<tool_call>\n{"name": "add", "arguments": {"a": 1, "b": 2}}\n</tool_call>\n'
        '<tool_call>{"name": "add", "arguments": "{\\"a\\": 3}"}</tool_call>'
    )
    content, calls = FMT.parse(text)
    assert content == "Let me add."
    assert [(c.name, c.arguments) for c in calls] == [("add", {"a": 1, "b": 2}), ("add", {"a": 3})]
    assert all(c.parse_error is None for c in calls)


def test_malformed_blocks_become_parse_errors():
    content, calls = FMT.parse(
        '<tool_call>{"name": "add", "arguments": {"a": 1</tool_call>'
        "<tool_call>[1, 2]</tool_call>"
        '<tool_call>{"name": "add", "arguments": [1]}</tool_call>'
        '<tool_call>{"name": "add", "arguments": {"a": 5}}'  # cut off: no closing tag
    )
    assert content is None
    assert [c.name for c in calls] == ["add", "", "", "add", "add"]
    assert [c.parse_error is not None for c in calls] == [True, True, True, True, False]
    assert calls[-1].arguments == {"a": 5}


def test_pythonic_call_lists_are_parsed():
    content, calls = FMT.parse("[add(a=1, b=2), add(a=-3.5, b='x')]")
    assert content is None
    assert [c.arguments for c in calls] == [{"a": 1, "b": 2}, {"a": -3.5, "b": "x"}]


def test_hostile_pythonic_text_never_executes(tmp_path: Path):
    marker = tmp_path / "pwned"
    for text in [
        f"[__import__('os').system('touch {marker}')]",
        f"[add(a=__import__('os').system('touch {marker}'))]",
        f"[add(a=open('{marker}', 'w'))]",
        "[add(a=(lambda: 1)())]",
    ]:
        content, calls = FMT.parse(text)
        assert len(calls) == 1 and calls[0].arguments is None and calls[0].parse_error
    assert not marker.exists()


def test_plain_text_stays_text():
    assert FMT.parse("The sum is 3.") == ("The sum is 3.", [])
    assert FMT.parse("[1, 2, 3] are the numbers") == ("[1, 2, 3] are the numbers", [])
    assert FMT.parse("") == (None, [])


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("<>/tool_call{}[]()\"':=,a1 \n\\")), max_size=200))
def test_parse_never_raises(text):
    content, calls = FMT.parse(text)
    assert content is None or isinstance(content, str)
    assert all(isinstance(c, ToolCall) for c in calls)


def test_huge_and_odd_text_does_not_break_the_parser():
    FMT.parse("<tool_call>" * 50_000)
    FMT.parse("[" * 100_000 + "]" * 100_000)
    FMT.parse("[f(a=" + "[" * 5000 + "]" * 5000 + ")]")
    FMT.parse("\udcff<tool_call>\ud800</tool_call>")


def test_render_history_as_text():
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "add 1 and 2, and 3 and 4"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "add", "arguments": '{"a": 1}'},
                },
                {
                    "id": "c2",
                    "type": "function",
                    "function": {"name": "add", "arguments": '{"a": 3}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "name": "add", "content": "3"},
        {"role": "tool", "tool_call_id": "c2", "name": "add", "content": "7"},
        {"role": "assistant", "content": "3 and 7."},
    ]
    rendered = FMT.render(messages, TOOLS)
    assert [m["role"] for m in rendered] == ["system", "user", "assistant", "user", "assistant"]
    assert rendered[0]["content"].startswith("Be brief.\n\n# Tools")
    assert '"name": "add"' in rendered[0]["content"] and "<tools>" in rendered[0]["content"]
    assert rendered[2]["content"].count("<tool_call>") == 2
    assert '{"name": "add", "arguments": {"a": 1}}' in rendered[2]["content"]
    assert (
        rendered[3]["content"]
        == "<tool_response>\n3\n</tool_response>\n<tool_response>\n7\n</tool_response>"
    )
    assert all("tool_calls" not in m and set(m) == {"role", "content"} for m in rendered)
    # Rendered calls parse back to the same calls.
    _, calls = FMT.parse(rendered[2]["content"])
    assert [c.arguments for c in calls] == [{"a": 1}, {"a": 3}]


def test_render_without_system_message_inserts_one():
    rendered = FMT.render([{"role": "user", "content": "hi"}], TOOLS)
    assert rendered[0]["role"] == "system" and "<tools>" in rendered[0]["content"]
    assert FMT.render([{"role": "user", "content": "hi"}], []) == [
        {"role": "user", "content": "hi"}
    ]


def test_client_sends_no_native_tools_and_keeps_reasoning():
    inner = EchoClient(
        '<think>adding</think><tool_call>{"name": "add", "arguments": {"a": 1}}</tool_call>',
        reasoning="field thought",
    )
    turn = run(PromptModeClient(inner))
    sent_messages, sent_tools = inner.sent[0]
    assert sent_tools == []
    assert "<tools>" in sent_messages[0]["content"]
    assert turn.reasoning == "field thought\nadding"
    assert [(c.name, c.arguments, c.id) for c in turn.tool_calls] == [("add", {"a": 1}, "")]
    assert turn.content is None and turn.usage.calls == 1


def test_reasoning_is_not_parsed_for_calls():
    inner = EchoClient("<think>[add(a=1)]</think>No call needed.")
    turn = run(PromptModeClient(inner))
    assert turn.tool_calls == [] and turn.content == "No call needed."


class ExplodingFormat(PromptFormat):
    name = "exploding"

    def render(self, messages, tools):
        return messages

    def parse(self, text):
        raise RuntimeError("broken format")


class ListFormat(PromptFormat):
    name = "list"

    def render(self, messages, tools):
        return [{"role": "system", "content": "LIST FORMAT"}, *messages]

    def parse(self, text):
        return None, [ToolCall(id="", name="f", arguments={})]


def test_a_failing_format_leaves_the_text():
    turn = run(PromptModeClient(EchoClient("some reply"), ExplodingFormat()))
    assert turn.content == "some reply" and turn.tool_calls == []
    assert "broken" not in str(turn.raw) and "exploding" in str(turn.raw)


def test_with_format_swaps_only_the_format():
    inner = EchoClient("x")
    base = PromptModeClient(inner)
    other = base.with_format(ListFormat())
    assert other.inner is inner and base.format.name == "hermes"
    turn = run(other)
    assert inner.sent[0][0][0]["content"] == "LIST FORMAT"
    assert [c.name for c in turn.tool_calls] == ["f"]
    assert other.describe()["prompt_format"] == "list"
