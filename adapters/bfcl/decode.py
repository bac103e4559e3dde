"""Model replies -> BFCL's decoded call format ``[{name: {arg: value}}, ...]``.

Function-calling (FC) mode reads the reply's tool calls, as the official FC
handlers do: each call's JSON arguments are parsed, and one unparseable call
makes the whole reply undecodable. A reply without tool calls decodes to no
calls.

Prompt mode reads the reply text, normalised the way BFCL's prompt decoder does
(strip backticks/newlines/spaces, wrap in brackets). Python calls are parsed by
``harness.calls`` (literal arguments only, positional arguments dropped as the
official decoder drops them); the official decoder would also accept bare names,
arithmetic and nested calls as argument values, which we refuse because reading
them safely is impossible for arithmetic and lambdas (the official code
``eval()``s them). Java and JavaScript replies go through the package's own
tree-sitter parsers, which only read text.
"""

from __future__ import annotations

import json
from typing import Any

from harness.calls import UnsafeCallError, parse_python_calls
from harness.types import Message, ToolCall

from . import official

Decoded = list[dict[str, dict[str, Any]]]


class DecodeError(ValueError):
    """The reply holds no well-formed function calls."""


def tool_calls_of(message: Message) -> list[ToolCall]:
    return [ToolCall.from_openai(item) for item in message.get("tool_calls") or []]


def decode_tool_calls(calls: list[ToolCall]) -> Decoded:
    """FC mode: the calls as decoded dicts (raises if one has unparseable arguments)."""
    decoded: Decoded = []
    for call in calls:
        if call.parse_error is not None or call.arguments is None:
            raise DecodeError(call.parse_error or "arguments missing")
        decoded.append({call.name: call.arguments})
    return decoded


def _normalise_prompt_text(text: str) -> str:
    cleaned = text.strip("`\n ")
    if not cleaned.startswith("["):
        cleaned = "[" + cleaned
    if not cleaned.endswith("]"):
        cleaned = cleaned + "]"
    return cleaned


def _is_call_format(decoded: Any) -> bool:
    return isinstance(decoded, list) and all(
        isinstance(item, dict) and len(item) == 1 and isinstance(next(iter(item.values())), dict)
        for item in decoded
    )


def decode_prompt_text(text: str | None, language: str = "python") -> Decoded:
    """Prompt mode: the calls written in the reply text (raises DecodeError)."""
    if text is None:
        raise DecodeError("no reply text")
    if language == "python":
        cleaned = _normalise_prompt_text(text).strip().strip("'")
        try:
            calls = parse_python_calls(cleaned, drop_positional=True)
        except UnsafeCallError as exc:
            raise DecodeError(str(exc)) from None
        return [{call.name: call.arguments or {}} for call in calls]
    utils = official.module("bfcl_eval.model_handler.utils")
    enums = official.module("bfcl_eval.constants.enums")
    fmt = enums.ReturnFormat.JAVA if language == "java" else enums.ReturnFormat.JAVASCRIPT
    try:
        decoded = utils.default_decode_ast_prompting(text, fmt, has_tool_call_tag=False)
    except Exception as exc:  # the parsers raise plain exceptions on bad text
        raise DecodeError(f"{type(exc).__name__}: {exc}") from None
    if not _is_call_format(decoded):
        raise DecodeError("reply is not a list of function calls")
    return decoded


def decode_message(message: Message, prompt_mode: bool, language: str = "python") -> Decoded:
    """One assistant message as decoded calls (raises DecodeError)."""
    if prompt_mode:
        return decode_prompt_text(message.get("content"), language)
    return decode_tool_calls(tool_calls_of(message))


def decoded_to_tool_calls(decoded: Decoded, id_prefix: str = "call") -> list[ToolCall]:
    calls = []
    for index, item in enumerate(decoded):
        name, arguments = next(iter(item.items()))
        raw = json.dumps(arguments, ensure_ascii=False, default=str)
        calls.append(
            ToolCall(id=f"{id_prefix}_{index}", name=name, arguments=arguments, raw_arguments=raw)
        )
    return calls


def written_as_text(messages: list[Message], language: str = "python") -> bool:
    """Whether the replies came through BFCL's prompt mode: the first reply with
    tool calls holds, as its text, exactly those calls in BFCL's text format
    (function-calling replies carry their calls apart from the text)."""
    for message in messages:
        if message.get("role") != "assistant" or not message.get("tool_calls"):
            continue
        try:
            from_text = decode_prompt_text(message.get("content"), language)
            return from_text == decode_tool_calls(tool_calls_of(message))
        except DecodeError:
            return False
    return False
