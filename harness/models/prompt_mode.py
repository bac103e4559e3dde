"""Prompt mode: tool calling through plain text, for endpoints without a tool parser.

``PromptModeClient`` renders the tools into the system prompt with a
PromptFormat, calls the wrapped client without native tools, and parses the
reply text for calls. Reasoning (a reasoning field or ``<think>`` tags) is set
apart before parsing and kept in the turn.

``HermesPromptFormat`` is the default: tools as JSON signatures inside
``<tools></tools>``, calls as ``<tool_call>{"name": ..., "arguments": ...}</tool_call>``
blocks, tool results as ``<tool_response>`` text in a user message (the layout
Qwen and Hermes models are trained on). Its parser also accepts a Python-style
call list such as ``[get_weather(city='Paris')]``, read by the safe parser in
harness.models.calls (literal arguments only, never evaluated).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from harness.boundary.json_value import JsonObject
from harness.boundary.sanitise import loads_bounded
from harness.models.base import ModelClient, WrappedClient
from harness.models.calls import try_parse_python_calls
from harness.models.prompt_format import PromptFormat
from harness.models.reasoning import (
    SPLIT,
    check_inline_reasoning,
    join_reasoning,
    read_inline_reasoning,
)
from harness.types import (
    MAX_RAW_ARGUMENT_CHARS,
    AssistantTurn,
    Message,
    SamplingParams,
    ToolCall,
    ToolSchema,
    parse_arguments,
)

CALL_OPEN = "<tool_call>"
CALL_CLOSE = "</tool_call>"
# Reply text longer than this is not searched for calls (it stays text).
MAX_PARSE_CHARS = 2_000_000
# Text that starts like a Python call list: "[name(" or "name(".
_PYTHONIC_START = re.compile(r"^\[?\s*([A-Za-z_][\w.]*)\s*\(")

_TOOLS_INTRO = (
    "# Tools\n\n"
    "You can call the functions described below. Each signature is a JSON object "
    "on its own line inside <tools></tools>:\n<tools>\n{tools}\n</tools>\n\n"
    "To call a function, write a JSON object with its name and arguments inside "
    "<tool_call></tool_call> tags, one block per call:\n"
    '<tool_call>\n{{"name": "function_name", "arguments": {{"parameter": "value"}}}}\n</tool_call>\n'
    "Write several blocks to call several functions at once. The results come back "
    "inside <tool_response></tool_response> tags. When no call is needed, answer in plain text."
)


def _function_spec(tool: ToolSchema) -> object:
    return tool.get("function", tool) if isinstance(tool, dict) else {"tool": str(tool)}


def render_tools(tools: list[ToolSchema]) -> str:
    lines = "\n".join(json.dumps(_function_spec(tool), ensure_ascii=False) for tool in tools)
    return _TOOLS_INTRO.format(tools=lines)


def _call_block(call: Mapping[str, object]) -> str:
    found = call.get("function")
    function: Mapping[str, object] = found if isinstance(found, dict) else {}
    raw = function.get("arguments")
    arguments: object = raw
    if isinstance(raw, str):
        parsed, error = parse_arguments(raw)
        arguments = parsed if error is None else raw
    body = json.dumps(
        {"name": function.get("name", ""), "arguments": arguments}, ensure_ascii=False
    )
    return f"{CALL_OPEN}\n{body}\n{CALL_CLOSE}"


def _text(content: object) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return json.dumps(content, ensure_ascii=False)


def _block_call(block: str, index: int) -> list[ToolCall]:
    """The calls in one ``<tool_call>`` block (a JSON object, or a list of them)."""
    text = block.strip()
    if text.startswith("```"):
        text = text.strip("`").removeprefix("json").strip()
    try:
        value = loads_bounded(text).value
    except ValueError as exc:  # not JSON, or over the parse bounds
        name_match = re.search(r'"name"\s*:\s*"([^"]{1,200})"', text)
        return [
            ToolCall(
                id=f"call_{index}",
                name=name_match.group(1) if name_match else "",
                arguments=None,
                raw_arguments=text[:MAX_RAW_ARGUMENT_CHARS],
                parse_error=f"tool call is not valid JSON: {exc}",
            )
        ]
    items = value if isinstance(value, list) else [value]
    return [_json_call(item, index + offset, text) for offset, item in enumerate(items)]


def _json_call(item: object, index: int, text: str) -> ToolCall:
    if not isinstance(item, dict) or not isinstance(item.get("name"), str):
        return ToolCall(
            id=f"call_{index}",
            name="",
            arguments=None,
            raw_arguments=text,
            parse_error='tool call must be an object with a "name" string',
        )
    arguments = item.get("arguments", item.get("parameters", {}))
    if isinstance(arguments, str):
        parsed, error = parse_arguments(arguments)
        # The model's own arguments text: rendered back as it came.
        return ToolCall(f"call_{index}", item["name"], parsed, arguments, error, raw_verbatim=True)
    if not isinstance(arguments, dict):
        return ToolCall(
            id=f"call_{index}",
            name=item["name"],
            arguments=None,
            raw_arguments=json.dumps(arguments, ensure_ascii=False),
            parse_error=f"arguments must be a JSON object, got {type(arguments).__name__}",
        )
    raw = json.dumps(arguments, ensure_ascii=False)
    return ToolCall(id=f"call_{index}", name=item["name"], arguments=arguments, raw_arguments=raw)


def _split_blocks(text: str) -> tuple[list[str], str]:
    """(contents of the <tool_call> blocks, the text outside them), in linear time.
    A block left open at the end (a reply cut off) runs to the end of the text."""
    blocks: list[str] = []
    outside: list[str] = []
    position = 0
    while True:
        start = text.find(CALL_OPEN, position)
        if start == -1:
            outside.append(text[position:])
            return blocks, "".join(outside)
        outside.append(text[position:start])
        end = text.find(CALL_CLOSE, start + len(CALL_OPEN))
        if end == -1:
            blocks.append(text[start + len(CALL_OPEN) :])
            return blocks, "".join(outside)
        blocks.append(text[start + len(CALL_OPEN) : end])
        position = end + len(CALL_CLOSE)


def parse_pythonic(text: str) -> list[ToolCall] | None:
    """Calls from a Python-style call list, None when the text is not one.
    Text that starts like a call list but is not a safe one becomes a single
    call with a parse error (the model sees why; nothing runs)."""
    stripped = text.strip()
    match = _PYTHONIC_START.match(stripped)
    if match is None or not stripped.endswith(")" if not stripped.startswith("[") else "]"):
        return None
    parsed = try_parse_python_calls(stripped)
    if parsed.error is None and parsed.calls:
        for call in parsed.calls:
            call.raw_arguments = json.dumps(call.arguments, ensure_ascii=False)
        return parsed.calls
    return [
        ToolCall(
            id="call_0",
            name=match.group(1),
            arguments=None,
            raw_arguments=stripped[:10_000],
            parse_error=f"not a list of calls with literal arguments: {parsed.error}",
        )
    ]


class HermesPromptFormat(PromptFormat):
    """Qwen/Hermes-style ``<tools>`` / ``<tool_call>`` / ``<tool_response>`` text."""

    name = "hermes"

    def render(self, messages: list[Message], tools: list[ToolSchema]) -> list[Message]:
        rendered: list[Message] = []
        for message in messages:
            role = message.get("role")
            if role == "tool":
                response = f"<tool_response>\n{_text(message.get('content'))}\n</tool_response>"
                previous = rendered[-1] if rendered else None
                if previous is not None and previous.get("tool_responses"):
                    previous["content"] += "\n" + response  # results of one turn, one message
                else:
                    rendered.append({"role": "user", "content": response, "tool_responses": True})
            elif role == "assistant":
                parts = [_text(message.get("content"))] if message.get("content") else []
                parts += [_call_block(call) for call in message.get("tool_calls") or []]
                rendered.append({"role": "assistant", "content": "\n".join(parts)})
            else:
                rendered.append({"role": role, "content": message.get("content")})
        for message in rendered:
            message.pop("tool_responses", None)
        if tools:
            intro = render_tools(tools)
            if rendered and rendered[0].get("role") == "system":
                system = _text(rendered[0].get("content"))
                rendered[0] = {
                    "role": "system",
                    "content": f"{system}\n\n{intro}" if system else intro,
                }
            else:
                rendered.insert(0, {"role": "system", "content": intro})
        return rendered

    def parse(self, text: str) -> tuple[str | None, list[ToolCall]]:
        if not text or len(text) > MAX_PARSE_CHARS:
            return (text or None), []
        blocks, outside = _split_blocks(text)
        if blocks:
            calls: list[ToolCall] = []
            for block in blocks:
                calls.extend(_block_call(block, len(calls)))
            return (outside.strip() or None), calls
        pythonic = parse_pythonic(text)
        if pythonic is not None:
            return None, pythonic
        return text, []


def safe_parse(
    fmt: PromptFormat, text: str | None
) -> tuple[str | None, list[ToolCall], str | None]:
    """(text, calls, problem): a format's parse, with any exception it raises
    turned into "no calls" so that bad output never ends a run."""
    if not text:
        return text, [], None
    try:
        content, calls = fmt.parse(text)
    except Exception as exc:
        return text, [], f"prompt format '{fmt.name}' failed to parse: {type(exc).__name__}"
    return content, list(calls), None


class PromptModeClient(WrappedClient):
    """Tool calling through text: ``fmt`` renders tools into the prompt and reads
    calls back from the reply of ``inner`` (called with no native tools).
    ``inline_reasoning``: ``<think>`` tags are set apart before the format reads
    the text (``split``) or read with it (``keep``; models/reasoning.py); the
    inner client should be built with the same choice."""

    def __init__(
        self, inner: ModelClient, fmt: PromptFormat | None = None, inline_reasoning: str = SPLIT
    ):
        super().__init__(inner)
        self.format = fmt or HermesPromptFormat()
        self.inline_reasoning = check_inline_reasoning(inline_reasoning)

    def with_format(self, fmt: PromptFormat) -> PromptModeClient:
        """The same client with another format (cheap: shares ``inner``)."""
        return PromptModeClient(self.inner, fmt, self.inline_reasoning)

    async def complete(
        self, messages: list[Message], tools: list[ToolSchema], params: SamplingParams
    ) -> AssistantTurn:
        rendered = self.format.render(messages, tools)
        reply = await self.inner.complete(rendered, [], params)
        text, inline_reasoning = read_inline_reasoning(reply.content, self.inline_reasoning)
        content, calls, problem = safe_parse(self.format, text)
        for call in calls:
            call.id = ""  # the episode gives each call an id unique in the episode
        # A server that parsed calls itself despite no tools: keep those too.
        calls += reply.tool_calls
        raw = reply.raw
        if problem is not None:
            raw = {"reply": reply.raw, "parse_problem": problem}
        return AssistantTurn(
            content=content,
            tool_calls=calls,
            reasoning=join_reasoning(reply.reasoning, inline_reasoning),
            usage=reply.usage,
            raw=raw,
            finish_reason=reply.finish_reason,
            text_repairs=reply.text_repairs,
        )

    def cache_identity(self) -> dict[str, object]:
        identity = {**self.inner.cache_identity(), "prompt_format": self.format.name}
        if self.inline_reasoning != SPLIT:  # named only when not the default (old keys hold)
            identity["inline_reasoning"] = self.inline_reasoning
        return identity

    def describe(self) -> JsonObject:
        return {
            **self.inner.describe(),
            "prompt_format": self.format.name,
            "inline_reasoning": self.inline_reasoning,
        }
