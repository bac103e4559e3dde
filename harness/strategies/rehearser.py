"""The rehearser: a model that imagines what the environment answers to a tool call.

A call is first checked here, cheaply and without a model: a tool off the whitelist
or arguments that break the tool's JSON schema get the simulator's validation error
(``TOOL_NOT_AVAILABLE`` / ``INVALID_PARAMETERS``). Otherwise the rehearser model is
asked (prompts.simulate_prompt) and its answer parsed: an ``<execution_result>``
holding one non-empty JSON value, or an error object with one of the three codes.
Anything else is a *format error*: the actor is told the simulation failed, the raw
output is recorded, and nothing raises. The rehearser's prompt needs the
conversation so far and the actor's latest reply: an environment reads them from
the actor's ``ConversationTap`` (harness/episode/tap.py).
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass

from harness.boundary.json_value import JsonObject, JsonValue
from harness.boundary.tool_checks import (
    parse_json_value,
    result_status,
    schema_problem,
    tool_parameters,
)
from harness.models.base import ModelClient
from harness.strategies import prompts
from harness.strategies.costs import CostLedger, MeteredClient
from harness.strategies.settings import StrategySettings
from harness.types import AssistantTurn, Message, SamplingParams, ToolCall, ToolResult, ToolSchema

# What the actor sees when the rehearser's answer could not be read.
SIMULATION_FAILED = "Error: the tool gave no readable answer to this call."

_THINK = re.compile(r"<think>.*?(</think>|$)", re.DOTALL | re.IGNORECASE)
_RESULT = re.compile(
    re.escape(prompts.RESULT_OPEN) + r"(.*?)(?:" + re.escape(prompts.RESULT_CLOSE) + r"|$)",
    re.DOTALL,
)


def strip_thinking(text: str | None) -> str:
    """Model text without reasoning blocks a server did not split off."""
    return _THINK.sub("", text or "").strip()


# ---------------------------------------------------------------- validation


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


def _validation_code(value: JsonValue) -> tuple[str, str] | None:
    error = value.get("error") if isinstance(value, dict) else None
    if isinstance(error, dict):
        code = error.get("code")
        if code in prompts.ERROR_CODES:
            return str(code), str(error.get("message") or "")
    return None


def _is_empty(value: JsonValue) -> bool:
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

    def to_dict(self) -> JsonObject:
        data: JsonObject = asdict(self)
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


def call_dict(call: ToolCall) -> JsonObject:
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


def rehearser_for(
    model: ModelClient, settings: StrategySettings, ledger: CostLedger, params: SamplingParams
) -> Rehearser:
    """The rehearser of a strategy run: ``model`` metered as the rehearser role."""
    config = RehearserConfig(
        think_switch=settings.think_switch,
        max_examples=settings.max_examples,
        max_prompt_chars=settings.max_prompt_chars,
    )
    return Rehearser(MeteredClient(model, "rehearser", ledger), params, config)
