"""Models that play an entry's gold answers through the normal model interface.

- AST categories: the first possible value of every parameter (parameters whose
  first possible value is "" are optional and left out), one call per gold call.
- irrelevance: a text reply; live_relevance: a call of the first offered tool.
- multi-turn: each turn's gold calls in one reply, then a text reply ending the
  turn; a turn with empty gold gets a text reply. The turn is the number of user
  messages seen so far.
- memory and web search: a text reply in the requested answer format holding the
  first possible answer (no tool calls, so no live search is needed).
"""

from __future__ import annotations

import inspect
import json
from typing import cast

from harness.boundary.json_value import JsonMapping, JsonObject, JsonSequence, JsonValue
from harness.models.base import ModelClient
from harness.types import AssistantTurn, Message, SamplingParams, ToolCall, ToolSchema

from .categories import Kind, kind_of, language_of
from .data import Entry
from .gold_values import OMITTED, concrete_value, gold_choice
from .multi_turn import parse_gold_call
from .simulators import simulator_class

TEXT_REPLY = "I have nothing to call for this."


def _tool_call(index: int, name: str, arguments: JsonObject | dict[str, object]) -> ToolCall:
    raw = json.dumps(arguments, ensure_ascii=False)
    # Gold arguments are literals parsed from the gold call text (json.dumps above
    # proves them JSON); they stay as parsed so that execution sees the same values.
    return ToolCall(
        id=f"oracle_{index}", name=name, arguments=cast(JsonObject, arguments), raw_arguments=raw
    )


def _fc_name(name: str) -> str:
    # FC mode offers "a.b" as "a_b" (see tools.py).
    return name.replace(".", "_")


def _object(value: JsonValue, what: str) -> JsonObject:
    if not isinstance(value, dict):
        raise ValueError(f"{what} is not an object: {value!r}")
    return value


def _sequence(value: JsonValue, what: str) -> JsonSequence:
    if not isinstance(value, list):
        raise ValueError(f"{what} is not a list: {value!r}")
    return value


def _doc(entry: Entry, function_name: str) -> JsonMapping:
    for doc in entry.checker_functions:
        if doc["name"] == function_name:
            return _object(doc["parameters"], "function parameters")
    return {}


def ast_gold_calls(entry: Entry) -> list[ToolCall]:
    language = language_of(entry.category)
    calls = []
    for index, gold in enumerate(entry.gold_items()):
        name, params = next(iter(_object(gold, "gold call").items()))
        doc = _doc(entry, name)
        schemas = _object(doc.get("properties", {}), "parameter schemas")
        required = set(_sequence(doc.get("required", []), "required parameters"))
        arguments: JsonObject = {}
        for param, choices in _object(params, "gold arguments").items():
            accepted = _sequence(choices, "accepted values")
            choice = gold_choice(accepted, param in required, param in schemas)
            if choice is not OMITTED:
                schema = _object(schemas.get(param, {}), "parameter schema")
                arguments[param] = concrete_value(choice, schema, language)
        calls.append(_tool_call(index, _fc_name(name), arguments))
    return calls


def bind_gold_positional(entry: Entry, text: str) -> tuple[str, dict[str, object]]:
    """A gold call with positional arguments named after the method's parameters."""
    call = parse_gold_call(text)
    if not call.args:
        return call.name, call.kwargs
    for class_name in reversed(entry.involved_classes):
        method = getattr(simulator_class(class_name), call.name, None)
        if method is not None and not call.name.startswith("_"):
            parameters = [p for p in inspect.signature(method).parameters if p != "self"]
            named = dict(zip(parameters, call.args, strict=False))
            return call.name, {**named, **call.kwargs}
    raise ValueError(f"gold call {text} names no method of {entry.involved_classes}")


def multi_turn_gold_calls(entry: Entry, turn: int) -> list[ToolCall]:
    calls = []
    for index, text in enumerate(entry.gold_turns()[turn]):
        name, arguments = bind_gold_positional(entry, text)
        calls.append(_tool_call(index, name, arguments))
    return calls


def answer_text(entry: Entry) -> str:
    answer = entry.gold_items()[0]
    return str({"answer": answer, "context": "From the gold answer."})


class OracleClient(ModelClient):
    """Plays one entry's gold answers."""

    def __init__(self, entry: Entry):
        self.entry = entry
        self.name = f"oracle:{entry.id}"

    async def complete(
        self, messages: list[Message], tools: list[ToolSchema], params: SamplingParams
    ) -> AssistantTurn:
        kind = kind_of(self.entry.category)
        if kind is Kind.AST:
            return AssistantTurn(tool_calls=ast_gold_calls(self.entry), finish_reason="tool_calls")
        if kind is Kind.RELEVANCE:
            first = tools[0]["function"]["name"]
            return AssistantTurn(tool_calls=[_tool_call(0, first, {})], finish_reason="tool_calls")
        if kind in (Kind.MEMORY, Kind.WEB_SEARCH):
            return AssistantTurn(content=answer_text(self.entry), finish_reason="stop")
        if kind is Kind.MULTI_TURN:
            return self._multi_turn_step(messages)
        return AssistantTurn(content=TEXT_REPLY, finish_reason="stop")

    def _multi_turn_step(self, messages: list[Message]) -> AssistantTurn:
        turn = sum(1 for message in messages if message.get("role") == "user") - 1
        already_called = bool(messages) and messages[-1].get("role") == "tool"
        if already_called or turn < 0 or turn >= len(self.entry.gold_items()):
            return AssistantTurn(content="Done.", finish_reason="stop")
        calls = multi_turn_gold_calls(self.entry, turn)
        if not calls:
            return AssistantTurn(content=TEXT_REPLY, finish_reason="stop")
        return AssistantTurn(tool_calls=calls, finish_reason="tool_calls")
