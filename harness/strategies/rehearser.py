"""The rehearser: a model that imagines what the environment answers to a tool call.

A call is first checked here, cheaply and without a model: a tool off the whitelist
or arguments that break the tool's JSON schema get the simulator's validation error
(``TOOL_NOT_AVAILABLE`` / ``INVALID_PARAMETERS``). Otherwise the rehearser model is
asked (prompts.simulate_prompt) and its answer parsed: an ``<execution_result>``
holding one non-empty JSON value, or an error object with one of the three codes.
Anything else is a *format error*: the actor is told the simulation failed, the raw
output is recorded, and nothing raises.

``ConversationTap`` lets an environment see what the actor saw: the episode loop
hands environments only the call, but the rehearser's prompt needs the conversation
so far and the actor's latest reply.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from typing import Any

from harness.models.base import ModelClient, WrappedClient
from harness.strategies import prompts
from harness.types import AssistantTurn, Message, SamplingParams, ToolCall, ToolResult, ToolSchema

# What the actor sees when the rehearser's answer could not be read.
SIMULATION_FAILED = "Error: the tool gave no readable answer to this call."

_THINK = re.compile(r"<think>.*?(</think>|$)", re.DOTALL | re.IGNORECASE)
_RESULT = re.compile(
    re.escape(prompts.RESULT_OPEN) + r"(.*?)(?:" + re.escape(prompts.RESULT_CLOSE) + r"|$)",
    re.DOTALL,
)
_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")


def strip_thinking(text: str | None) -> str:
    """Model text without reasoning blocks a server did not split off."""
    return _THINK.sub("", text or "").strip()


# ---------------------------------------------------------------- validation


def _type_ok(value: Any, expected: str) -> bool | None:
    """Whether ``value`` has JSON-schema type ``expected`` (None: type unknown here)."""
    if expected == "string":
        return isinstance(value, str)
    if expected == "integer":
        if isinstance(value, bool):
            return False
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if expected == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if expected == "boolean":
        return isinstance(value, bool)
    if expected == "array":
        return isinstance(value, list)
    if expected == "object":
        return isinstance(value, dict)
    if expected == "null":
        return value is None
    return None


def schema_problem(value: Any, schema: Any, path: str) -> str | None:
    """The first way ``value`` breaks ``schema``, or None.

    Only the common, unambiguous keywords are checked (type, enum, required,
    properties, additionalProperties: false, items, anyOf/oneOf); anything else is
    accepted, so an unusual schema never makes a good call look bad.
    """
    if not isinstance(schema, dict):
        return None
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            if all(schema_problem(value, option, path) is not None for option in options):
                return f"'{path}' matches none of the allowed forms"
    expected = schema.get("type")
    if isinstance(expected, str | list):
        names = [expected] if isinstance(expected, str) else expected
        verdicts = [_type_ok(value, name) for name in names if isinstance(name, str)]
        if verdicts and None not in verdicts and not any(verdicts):
            return f"'{path}' must be of type {' or '.join(map(str, names))}"
    enum = schema.get("enum")
    if isinstance(enum, list) and enum and value not in enum:
        return f"'{path}' must be one of {json.dumps(enum, ensure_ascii=False)}"
    if isinstance(value, dict):
        return _object_problem(value, schema, path)
    items = schema.get("items")
    if isinstance(value, list) and isinstance(items, dict):
        for index, item in enumerate(value):
            problem = schema_problem(item, items, f"{path}[{index}]")
            if problem:
                return problem
    return None


def _object_problem(value: dict[str, Any], schema: dict[str, Any], path: str) -> str | None:
    prefix = f"{path}." if path else ""
    for name in schema.get("required") or []:
        if isinstance(name, str) and name not in value:
            return f"missing required argument '{prefix}{name}'"
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return None
    if schema.get("additionalProperties") is False:
        extra = sorted(set(value) - set(properties))
        if extra:
            return f"unexpected argument '{prefix}{extra[0]}'"
    for name, item in value.items():
        if name in properties:
            problem = schema_problem(item, properties[name], f"{prefix}{name}")
            if problem:
                return problem
    return None


def tool_parameters(tools: list[ToolSchema]) -> dict[str, Any]:
    """Tool name -> its parameters schema."""
    table = {}
    for tool in tools:
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and function.get("name"):
            table[str(function["name"])] = function.get("parameters") or {}
    return table


def validation_error(call: ToolCall, tools: list[ToolSchema]) -> tuple[str, str] | None:
    """(code, message) when the simulator must refuse the call before running it."""
    if call.parse_error is not None or call.arguments is None or not call.name:
        reason = call.parse_error or "the call has no name or no arguments"
        return prompts.INVALID_TOOL_CALL_FORMAT, reason
    table = tool_parameters(tools)
    if call.name not in table:
        return prompts.TOOL_NOT_AVAILABLE, f"Tool '{call.name}' is not available."
    schema = dict(table[call.name])
    if isinstance(schema.get("properties"), dict) and "additionalProperties" not in schema:
        # Real tools are functions: an argument they do not declare is refused.
        schema["additionalProperties"] = False
    problem = schema_problem(call.arguments, schema, "")
    if problem:
        return prompts.INVALID_PARAMETERS, problem[0].upper() + problem[1:] + "."
    return None


def error_object(code: str, message: str) -> str:
    return json.dumps({"error": {"code": code, "message": message}}, ensure_ascii=False)


# ---------------------------------------------------------------- results


def parse_json_value(text: str) -> tuple[bool, Any]:
    """(ok, value) of the first JSON value in ``text`` (code fences allowed)."""
    text = _FENCE.sub("", text.strip()).strip()
    if not text:
        return False, None
    try:
        return True, json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        pass
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        return False, None
    try:
        value, _end = json.JSONDecoder().raw_decode(text[min(starts) :])
    except (json.JSONDecodeError, RecursionError):
        return False, None
    return True, value


def result_status(content: str, is_error: bool) -> str:
    """'error' or 'ok' for any tool result, real or imagined, by the same rule:
    flagged as an error, an ``Error...`` text, or a JSON object with an error key."""
    if is_error:
        return "error"
    text = content.strip()
    if text.lower().startswith("error"):
        return "error"
    ok, value = parse_json_value(text) if text[:1] in "{[" else (False, None)
    if ok and isinstance(value, dict) and value.get("error") not in (None, False, ""):
        return "error"
    return "ok"


def _validation_code(value: Any) -> tuple[str, str] | None:
    if isinstance(value, dict) and isinstance(value.get("error"), dict):
        code = value["error"].get("code")
        if code in prompts.ERROR_CODES:
            return str(code), str(value["error"].get("message") or "")
    return None


def _is_empty(value: Any) -> bool:
    return value is None or value == "" or value == {} or value == []


@dataclass
class Prediction:
    """What the rehearser answered to one call.

    ``kind``: "result" (an imagined result), "validation_error" (one of the three
    codes, from the local check or the model) or "format_error" (unreadable answer).
    ``content`` is what the actor is shown; ``raw`` the model's text ("" if local).
    """

    kind: str
    content: str
    code: str | None = None
    raw: str = ""

    @property
    def is_error(self) -> bool:
        return self.kind != "result" or result_status(self.content, False) == "error"

    @property
    def status(self) -> str:
        if self.kind == "format_error":
            return "format_error"
        return "error" if self.is_error else "ok"

    def to_result(self) -> ToolResult:
        return ToolResult(self.content, self.is_error)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["status"] = self.status
        data["raw"] = prompts.clip(self.raw, 4000)
        return data


def parse_simulation(text: str | None) -> Prediction:
    """The rehearser's answer, read robustly; never raises."""
    raw = text or ""
    body = strip_thinking(raw)
    matches = _RESULT.findall(body)
    if matches:
        ok, value = parse_json_value(matches[-1])
        if not ok or _is_empty(value):
            return Prediction("format_error", SIMULATION_FAILED, raw=raw)
        refused = _validation_code(value)
        if refused:
            return Prediction("validation_error", error_object(*refused), refused[0], raw)
        content = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        return Prediction("result", content, raw=raw)
    ok, value = parse_json_value(body)
    refused = _validation_code(value) if ok else None
    if refused:
        return Prediction("validation_error", error_object(*refused), refused[0], raw)
    return Prediction("format_error", SIMULATION_FAILED, raw=raw)


# ---------------------------------------------------------------- the model


def call_dict(call: ToolCall) -> dict[str, Any]:
    """A tool call as stored in records."""
    return {"name": call.name, "arguments": call.arguments, "raw_arguments": call.raw_arguments}


def reply_text(turn: AssistantTurn | None) -> str:
    """The actor's reply as the rehearser reads it: its text and its tool calls."""
    if turn is None:
        return ""
    lines = [turn.content.strip()] if turn.content and turn.content.strip() else []
    lines.extend(f"-> calls {prompts.render_call(call)}" for call in turn.tool_calls)
    return "\n".join(lines)


@dataclass
class RehearserConfig:
    think_switch: str = ""
    max_examples: int = 8
    max_prompt_chars: int = 60_000


class Rehearser:
    """Predicts tool results with a model (the actor's own weights by default)."""

    def __init__(self, client: ModelClient, params: SamplingParams, config: RehearserConfig):
        self.client = client
        self.params = params
        self.config = config

    async def predict(
        self,
        call: ToolCall,
        tools: list[ToolSchema],
        conversation: list[Message],
        latest_reply: str,
        examples: list[tuple[ToolCall, str]],
    ) -> Prediction:
        refused = validation_error(call, tools)
        if refused:
            return Prediction("validation_error", error_object(*refused), refused[0])
        shown = examples[-self.config.max_examples :] if self.config.max_examples else []
        messages = prompts.simulate_prompt(
            tools,
            shown,
            conversation,
            latest_reply,
            call,
            self.config.think_switch,
            self.config.max_prompt_chars,
        )
        turn = await self.client.complete(messages, [], self.params)
        return parse_simulation(turn.content)


class ConversationTap(WrappedClient):
    """Passes calls through to the actor model and remembers the latest exchange.

    ``abort``: set by a simulated environment whose rehearser failed for good; the
    actor's next call then raises it, so the episode ends as an infrastructure
    error instead of continuing on error results that hide the failure.
    """

    def __init__(self, inner: ModelClient):
        super().__init__(inner)
        self.messages: list[Message] = []
        self.tools: list[ToolSchema] = []
        self.reply: AssistantTurn | None = None
        self.abort: BaseException | None = None

    async def complete(self, messages, tools, params) -> AssistantTurn:
        if self.abort is not None:
            raise self.abort
        self.messages = list(messages)
        self.tools = list(tools)
        self.reply = await self.inner.complete(messages, tools, params)
        return self.reply
