"""The OpenAI chat-completions wire format: requests, replies and HTTP errors.

Shared by every client that talks to an OpenAI-compatible endpoint (the direct
HTTP client, the litellm client, the replica pool), so that a request is the
same bytes and a reply means the same AssistantTurn whichever client is used.

Outbound (``chat_request``): the strictest common form that every server
accepts. Servers differ in what they tolerate: llama-cpp-python rejects an
assistant ``content: null`` beside ``tool_calls`` and shows the model its tools
only when ``tool_choice`` is present; vLLM and OpenAI default ``tool_choice`` to
"auto". So an assistant message always carries a string ``content``, tool calls
carry only ``id``/``type``/``function{name, arguments}``, tool messages carry
``tool_call_id``, keys that dataset records bring along are dropped, and
``tool_choice`` is sent whenever tools are (``TOOL_CHOICES``).

Inbound: reading a reply never raises for bad model output: malformed tool
calls become ToolCalls with ``parse_error``; only a reply without any choice is
an error (of the server).
"""

from __future__ import annotations

import email.utils
import json
import re
import time
from collections.abc import Callable, Iterable, Mapping

from harness.boundary.json_value import JsonObject, JsonValue
from harness.boundary.sanitise import Cleaned, clean_str, dumps_safe, json_ready, sanitise
from harness.models.base import CONTEXT_OVERFLOW, ModelError
from harness.models.reasoning import SPLIT, join_reasoning, read_inline_reasoning
from harness.models.redact import mask, may_need_masking, redact_url, scrub_secrets
from harness.types import AssistantTurn, Message, SamplingParams, ToolCall, ToolSchema, Usage

# Reply text longer than this is cut (with a note) so that one runaway reply
# cannot exhaust memory or bloat the records; no real answer is this long.
MAX_CONTENT_CHARS = 2_000_000
# --tool-choice values; "omit" sends no tool_choice at all (the server's default).
TOOL_CHOICES = ("auto", "required", "none", "omit")
DEFAULT_TOOL_CHOICE = "auto"
# Sampling fields that go into the request when set.
SAMPLING_FIELDS = ("temperature", "top_p", "max_tokens", "seed")
# HTTP statuses worth retrying: timeouts, conflicts, rate limits, server errors.
TRANSIENT_STATUSES = frozenset({408, 409, 425, 429})


# -- outbound -------------------------------------------------------------------


def _text(value: object) -> str:
    """Message content as one string (None -> "", text parts joined)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(
            str(part.get("text") or "") if isinstance(part, dict) else str(part) for part in value
        )
    return json.dumps(value, ensure_ascii=False, default=str)


def _content(value: object) -> str | list[object]:
    """User/system content: a string, or content parts kept as they are."""
    if isinstance(value, list):
        return value
    return _text(value)


def wire_tool_call(entry: object, index: int) -> JsonObject:
    """One ``tool_calls`` entry with only the keys the protocol defines."""
    if isinstance(entry, ToolCall):
        entry = entry.to_openai()
    call: Mapping[str, object] = entry if isinstance(entry, dict) else {}
    nested = call.get("function")
    function: Mapping[str, object] = nested if isinstance(nested, dict) else {}
    arguments = function.get("arguments")
    if not isinstance(arguments, str):
        arguments = "{}" if arguments is None else json.dumps(arguments, ensure_ascii=False)
    return {
        "id": str(call.get("id") or f"call_{index}"),
        "type": "function",
        "function": {"name": str(function.get("name") or ""), "arguments": arguments},
    }


def wire_message(message: Message) -> Message:
    """One message in the form every OpenAI-compatible server accepts."""
    role = str(message.get("role") or "user")
    if role == "assistant":
        out: Message = {"role": role, "content": _text(message.get("content"))}
        calls = message.get("tool_calls")
        if isinstance(calls, list) and calls:
            out["tool_calls"] = [wire_tool_call(c, i) for i, c in enumerate(calls)]
        return out
    if role == "tool":
        return {
            "role": role,
            "content": _text(message.get("content")),
            "tool_call_id": str(message.get("tool_call_id") or ""),
        }
    return {"role": role, "content": _content(message.get("content"))}


def wire_messages(messages: list[Message]) -> list[Message]:
    return [wire_message(message) for message in messages]


_FUNCTION_KEYS = ("name", "description", "parameters", "strict")


def wire_tools(tools: list[ToolSchema]) -> list[ToolSchema]:
    """Tool schemas as ``{"type": "function", "function": {name, description, parameters}}``."""
    out = []
    for tool in tools:
        nested = tool.get("function")
        function: Mapping[str, object] = nested if isinstance(nested, dict) else tool
        out.append(
            {
                "type": "function",
                "function": {key: function[key] for key in _FUNCTION_KEYS if key in function},
            }
        )
    return out


def check_tool_choice(value: str) -> str:
    if value not in TOOL_CHOICES:
        raise ValueError(f"unknown tool_choice '{value}' (known: {', '.join(TOOL_CHOICES)})")
    return value


def endpoint_identity(
    model: str, api_base: str | None, tool_choice: str, inline_reasoning: str = SPLIT
) -> dict[str, object]:
    """The cache identity of a client sending ``chat_request``'s requests to one
    endpoint: what, besides the request, decides the reply (the cached turn).
    ``inline_reasoning`` is named only when not the default, so that the keys of
    existing caches stay valid."""
    identity: dict[str, object] = {
        "model": model,
        "api_base": redact_url(api_base),
        "tool_choice": tool_choice,
    }
    if inline_reasoning != SPLIT:
        identity["inline_reasoning"] = inline_reasoning
    return identity


def chat_request(
    model: str,
    messages: list[Message],
    tools: list[ToolSchema],
    params: SamplingParams,
    tool_choice: str = DEFAULT_TOOL_CHOICE,
    tools_on_wire: Callable[[list[ToolSchema]], list[ToolSchema]] = wire_tools,
) -> dict[str, object]:
    """The body of one ``/chat/completions`` request.

    ``params.extra`` is merged into the body last (it may override anything);
    an ``extra_body`` entry is kept as it is, for the caller to merge (the OpenAI
    SDK and litellm merge it themselves; the direct client does it by hand).
    ``tools_on_wire``: how the tools get their wire form (a client that keeps
    each list's form passes its own; request_text.py).
    """
    body: dict[str, object] = {"model": model, "messages": wire_messages(messages)}
    if tools:
        body["tools"] = tools_on_wire(tools)
        if tool_choice != "omit":
            body["tool_choice"] = tool_choice
    for field_name in SAMPLING_FIELDS:
        value = getattr(params, field_name)
        if value is not None:
            body[field_name] = value
    body.update(params.extra)
    return body


# -- inbound --------------------------------------------------------------------


def is_transient_status(status: int) -> bool:
    return status in TRANSIENT_STATUSES or status >= 500


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` / ``retry-after`` (seconds or a date)."""
    if not headers:
        return None
    lowered = {str(k).lower(): str(v) for k, v in headers.items()}
    millis = lowered.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000.0)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


# How OpenAI-compatible servers (OpenAI, vLLM, SGLang, llama.cpp) word a request
# that does not fit the context window.
_CONTEXT_OVERFLOW_WORDING = re.compile(
    r"maximum context length|context length|context window|too many tokens|exceeds? the context",
    re.IGNORECASE,
)


def is_context_overflow(status: int, message: str) -> bool:
    return status in (400, 413) and bool(_CONTEXT_OVERFLOW_WORDING.search(message))


def http_error(
    status: int,
    message: str,
    headers: Mapping[str, str] | None = None,
    secrets: Iterable[str | None] = (),
) -> ModelError:
    """A ModelError for an HTTP error status, classified and scrubbed."""
    text = scrub_secrets(f"HTTP {status}: {message}", secrets)[:1000]
    return ModelError(
        text,
        transient=is_transient_status(status),
        retry_after=parse_retry_after(headers),
        kind=CONTEXT_OVERFLOW if is_context_overflow(status, message) else None,
    )


def clean_text(value: object) -> str | None:
    """Reply text as valid, bounded UTF-8 text (content parts joined)."""
    if value is None:
        return None
    if isinstance(value, list):  # content parts: [{"type": "text", "text": ...}, ...]
        value = "".join(
            str(part.get("text") or "") if isinstance(part, dict) else str(part) for part in value
        )
    text = value if isinstance(value, str) else str(value)
    # Lone surrogates (from "\ud800" escapes) cannot be stored as UTF-8.
    text = clean_str(text)[0]
    if len(text) > MAX_CONTENT_CHARS:
        cut = len(text) - MAX_CONTENT_CHARS
        text = text[:MAX_CONTENT_CHARS] + f"\n[reply truncated: {cut} more characters]"
    return text


def _tool_call(entry: object, index: int) -> ToolCall:
    """One tool call of a model's reply, its arguments text the model's own
    (``raw_verbatim``: later requests carry it as it came, "" included)."""
    if not isinstance(entry, dict):
        return ToolCall(
            id=f"call_{index}",
            name="",
            arguments=None,
            raw_arguments=clean_text(entry) or "",
            parse_error="tool call is not an object",
            raw_verbatim=True,
        )
    try:
        call = ToolCall.from_openai(entry)
    except Exception as exc:  # any shape of garbage becomes a parse error
        return ToolCall(
            id=f"call_{index}",
            name="",
            arguments=None,
            raw_arguments=clean_text(dumps_safe(entry, default=str)) or "",
            parse_error=f"unreadable tool call: {type(exc).__name__}",
            raw_verbatim=True,
        )
    call.name = clean_text(call.name) or ""
    call.raw_arguments = clean_text(call.raw_arguments) or ""
    return call


def _usage(data: JsonValue) -> Usage:
    counts: Mapping[str, JsonValue] = data if isinstance(data, dict) else {}

    def count(key: str) -> int:
        value = counts.get(key) or 0
        try:
            return max(0, int(value)) if isinstance(value, int | float | str) else 0
        except ValueError:
            return 0

    return Usage(
        calls=1, prompt_tokens=count("prompt_tokens"), completion_tokens=count("completion_tokens")
    )


def json_safe(value: object, secrets: Iterable[str | None] = ()) -> JsonValue:
    """A JSON-serialisable, secret-free copy of a provider reply (for ``raw``).
    Masked as data, not as JSON text (a pattern over JSON text can break it)."""
    return mask(json_ready(value), secrets)


def _masked(
    response: JsonValue, secrets: Iterable[str | None], reply_text: str | None
) -> JsonValue:
    """``mask(response, secrets)``; given the JSON text ``response`` is the value of,
    the text is searched (the common answer: nothing to mask, ``response`` as it is)."""
    secrets = list(secrets)  # read twice when the text may hold one
    if reply_text is not None and not may_need_masking(reply_text, secrets):
        return response
    return mask(response, secrets)


def turn_from_response(
    response: JsonObject,
    secrets: Iterable[str | None] = (),
    text_repairs: int = 0,
    sanitised: bool = False,
    inline_reasoning: str = SPLIT,
    reply_text: str | None = None,
) -> AssistantTurn:
    """An AssistantTurn from a ``chat.completion`` object (as a dict).

    Inline ``<think>`` reasoning in the text is set apart (``split``) or left in
    the text (``keep``; harness/models/reasoning.py).

    The reply is made safe first (harness.boundary.sanitise.sanitise: valid text in every
    string and key, bounded nesting, no non-finite numbers); the characters that
    had to be replaced, plus ``text_repairs`` already replaced while decoding the
    body, are counted in the turn. ``sanitised``: the caller found that sanitise
    would not change it (boundary.loads_gives_sanitised), so it is not walked again;
    then ``reply_text``, the JSON text it was read from, is what the search for
    credentials reads (instead of the reply written out as JSON once more).
    """
    cleaned = Cleaned(response) if sanitised else sanitise(response)
    reply: JsonValue = cleaned.value
    if not isinstance(reply, dict):
        raise ModelError("the reply has no choices", transient=True)
    choices = reply.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ModelError("the reply has no choices", transient=True)
    choice = choices[0]
    given = choice.get("message")
    message: JsonObject = given if isinstance(given, dict) else {}
    field_reasoning = clean_text(message.get("reasoning_content") or message.get("reasoning"))
    content, inline = read_inline_reasoning(clean_text(message.get("content")), inline_reasoning)
    entries = message.get("tool_calls")
    if not entries and isinstance(message.get("function_call"), dict):
        entries = [{"id": "", "function": message["function_call"]}]  # legacy single call
    tool_calls = [
        _tool_call(entry, i) for i, entry in enumerate(entries if isinstance(entries, list) else [])
    ]
    finish = choice.get("finish_reason")
    return AssistantTurn(
        content=content,
        tool_calls=tool_calls,
        reasoning=join_reasoning(field_reasoning, inline),
        usage=_usage(reply.get("usage")),
        # ``response`` is sanitised already: masked only (json_safe would copy it again).
        raw=_masked(reply, secrets, reply_text if sanitised else None),
        finish_reason=(clean_text(finish) or "")[:200] if finish is not None else None,
        text_repairs=cleaned.replaced + text_repairs + sum(c.text_repairs for c in tool_calls),
    )
