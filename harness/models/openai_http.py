"""A direct HTTP client for OpenAI-compatible local servers (vLLM, SGLang, llama.cpp).

litellm spends several milliseconds of CPU per call (cost lookup, logging,
response objects); with dozens of calls in flight against a fast local server
that, not the server, becomes the limit. This client posts the chat request
itself over http1.py's small HTTP/1.1 client and reads the reply with the same
code as LiteLLMClient (openai_wire.py), so both clients give the same turns,
errors and records. It supports only the OpenAI chat wire format; API providers
go through LiteLLMClient.

Not httpx: its connection pool does work proportional to pending requests times
open connections on every request, which at 64 concurrent calls costs more CPU
than litellm itself. Not aiohttp: its request and reply objects cost twice this
client's CPU per request (http1.py). The number of connections is bounded by the
calls in flight (ConcurrencyLimitedClient).

A connection pool is opened per event loop on first use; call ``aclose()`` when
done to close its idle connections.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable

from harness.boundary.deadline import Deadline
from harness.boundary.json_value import JsonObject
from harness.boundary.sanitise import MAX_INT_DIGITS, decode_bytes, loads_gives_sanitised
from harness.models.base import ModelClient, ModelError
from harness.models.http1 import Http1Client
from harness.models.openai_wire import (
    DEFAULT_TOOL_CHOICE,
    chat_request,
    check_tool_choice,
    endpoint_identity,
    http_error,
    turn_from_response,
)
from harness.models.reasoning import SPLIT, check_inline_reasoning
from harness.models.redact import redact_url, scrub_secrets
from harness.models.reply_body import (
    ACCEPT_ENCODING,
    MAX_ERROR_BYTES,
    MAX_REPLY_BYTES,
    decompressed,
)
from harness.models.request_text import RequestText
from harness.models.urls import join_url
from harness.types import AssistantTurn, Message, SamplingParams, ToolSchema

# litellm-style provider prefixes that name an OpenAI-compatible server.
LOCAL_PREFIXES = ("openai/", "hosted_vllm/", "openai_compatible/")


def served_name(model: str) -> str:
    """The model name the server knows (``openai/qwen`` -> ``qwen``)."""
    for prefix in LOCAL_PREFIXES:
        if model.startswith(prefix):
            return model[len(prefix) :]
    return model


def _reply_int(text: str) -> int | str:
    # An integer too long for Python's int-string limit stays text (a marker)
    # rather than failing the whole reply.
    if len(text) > MAX_INT_DIGITS:
        return f"[integer of {len(text)} digits]"
    return int(text)


def parse_reply_body(
    body: bytes, secrets: Iterable[str | None] = (), inline_reasoning: str = SPLIT
) -> AssistantTurn:
    """The turn in a 200 reply's body. Invalid UTF-8 is replaced (and counted in
    the turn); a body that is not a JSON object is a (transient) server error."""
    text, replaced = decode_bytes(body)
    try:
        try:
            data = json.loads(text)
        except ValueError as exc:
            if "integer string conversion" not in str(exc):
                raise
            data = json.loads(text, parse_int=_reply_int)  # slower; only for such replies
    except (ValueError, RecursionError):
        raise ModelError("the reply is not JSON", transient=True) from None
    if not isinstance(data, dict):
        raise ModelError("the reply is not a JSON object", transient=True)
    return turn_from_response(
        data,
        secrets,
        text_repairs=replaced,
        sanitised=loads_gives_sanitised(text),
        inline_reasoning=inline_reasoning,
        reply_text=text,
    )


def _error_message(body: bytes) -> str:
    text = body[:4000].decode("utf-8", errors="replace")
    try:
        data = json.loads(text)
    except ValueError:
        return text[:1000]
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict) and error.get("message"):
        return str(error["message"])[:1000]
    if isinstance(data, dict) and data.get("message"):
        return str(data["message"])[:1000]
    return text[:1000]


class OpenAIHTTPClient(ModelClient):
    """Posts chat completions to ``api_base`` directly (no litellm).

    The request is ``openai_wire.chat_request``'s; ``tool_choice`` is sent with
    every request that offers tools (``"omit"``: never); ``inline_reasoning``
    says what happens to ``<think>`` tags in reply text (models/reasoning.py). ``params.extra`` is merged into the request body; an ``extra_body`` entry in
    it is merged too (as the OpenAI SDK does), so the same settings work with
    both clients.
    """

    def __init__(
        self,
        model: str,
        api_base: str,
        api_key: str | None = None,
        timeout: float = 600.0,
        name: str | None = None,
        tool_choice: str = DEFAULT_TOOL_CHOICE,
        inline_reasoning: str = SPLIT,
    ):
        self.model = model
        self.name = name or model
        self.api_base = api_base.rstrip("/")
        self.tool_choice = check_tool_choice(tool_choice)
        self.inline_reasoning = check_inline_reasoning(inline_reasoning)
        self.timeout = timeout
        self._api_key = api_key
        self._request_text = RequestText()
        self._url = join_url(self.api_base, "chat/completions")
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "Accept-Encoding": ACCEPT_ENCODING,
            "User-Agent": "harness",
        }
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._http = Http1Client(self._url, headers)

    async def aclose(self) -> None:
        """Close this event loop's idle connections."""
        self._http.close()

    def request_body(
        self, messages: list[Message], tools: list[ToolSchema], params: SamplingParams
    ) -> dict[str, object]:
        body = chat_request(
            served_name(self.model),
            messages,
            tools,
            params,
            self.tool_choice,
            tools_on_wire=self._request_text.wire_tools,
        )
        extra_body = body.pop("extra_body", None)
        if isinstance(extra_body, dict):
            body.update(extra_body)
        return body

    def request_payload(
        self, messages: list[Message], tools: list[ToolSchema], params: SamplingParams
    ) -> bytes:
        """``request_body(...)`` as JSON in UTF-8, the tools' part encoded once per
        tool list (request_text.py)."""
        return self._request_text.payload(self.request_body(messages, tools, params), tools)

    async def complete(
        self, messages: list[Message], tools: list[ToolSchema], params: SamplingParams
    ) -> AssistantTurn:
        payload = self.request_payload(messages, tools, params)
        deadline = asyncio.get_running_loop().time() + self.timeout
        try:
            with Deadline(deadline, f"no reply within {self.timeout:g} s"):
                # Of an error reply only the start is kept (for its message).
                reply = await self._http.post(
                    payload, MAX_REPLY_BYTES, error_body_limit=MAX_ERROR_BYTES
                )
                encoding = reply.headers.get("content-encoding", "")
                if reply.status == 200:
                    body = await decompressed(reply.body, encoding, MAX_REPLY_BYTES)
                else:
                    body = await decompressed(reply.body, encoding, MAX_ERROR_BYTES, truncate=True)
        except asyncio.TimeoutError:
            raise ModelError(f"no reply within {self.timeout:g} s", transient=True) from None
        except OSError as exc:
            # Where it failed, for the reader: a run's error lines name the URL.
            where = redact_url(self._url)
            message = scrub_secrets(f"{type(exc).__name__} at {where}: {exc}", [self._api_key])
            raise ModelError(message[:1000], transient=True) from None
        if reply.status != 200:
            message = _error_message(body)
            raise http_error(reply.status, message, reply.headers, [self._api_key])
        return parse_reply_body(body, [self._api_key], self.inline_reasoning)

    def cache_identity(self) -> dict[str, object]:
        return endpoint_identity(self.model, self.api_base, self.tool_choice, self.inline_reasoning)

    def endpoint(self) -> str | None:
        return self.api_base

    def describe(self) -> JsonObject:
        return {
            "name": self.name,
            "kind": type(self).__name__,
            "model": self.model,
            "provider": "openai-compatible",
            "api_base": redact_url(self.api_base),
            "timeout_s": self.timeout,
            "tool_choice": self.tool_choice,
            "inline_reasoning": self.inline_reasoning,
            "http_client": "harness.models.http1",
        }
