"""A length bound on the string arguments of the offered tools (``--argument-max-length``).

Some servers write tool arguments under a grammar built from the tool's JSON
schema and give that step no token cap: llama-cpp-python's
``chatml-function-calling`` ignores ``max_tokens`` there, so a small model that
never closes a string (``"order_id": "1234567890123…``) writes until the
context window is full, which takes minutes on a CPU. Such a grammar honours a
schema's ``maxLength``, so a bound written into the schema ends the reply.

This changes what the model is shown (the schema is part of the prompt), so it
is off unless asked for, recorded in the manifest and part of the cache key.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping

from harness.boundary.json_value import JsonObject
from harness.models.base import ModelClient, WrappedClient
from harness.types import AssistantTurn, Message, SamplingParams, ToolSchema

# Schema keys whose values are schemas, or lists or mappings of schemas.
_SUBSCHEMA_KEYS = ("items", "additionalProperties", "not")
_SUBSCHEMA_LIST_KEYS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUBSCHEMA_MAP_KEYS = ("properties", "$defs", "definitions")


def _is_free_string(schema: Mapping[str, object]) -> bool:
    """A string with no bound of its own (an enum or const is bounded already)."""
    kind = schema.get("type")
    is_string = kind == "string" or (isinstance(kind, list) and "string" in kind)
    return is_string and not any(key in schema for key in ("maxLength", "enum", "const"))


def _bound(schema: object, max_length: int) -> None:
    if not isinstance(schema, dict):
        return
    if _is_free_string(schema):
        schema["maxLength"] = max_length
    for key in _SUBSCHEMA_KEYS:
        _bound(schema.get(key), max_length)
    for key in _SUBSCHEMA_LIST_KEYS:
        for part in schema.get(key) or []:
            _bound(part, max_length)
    for key in _SUBSCHEMA_MAP_KEYS:
        mapping = schema.get(key)
        if isinstance(mapping, dict):
            for part in mapping.values():
                _bound(part, max_length)


def bound_string_arguments(tools: list[ToolSchema], max_length: int) -> list[ToolSchema]:
    """Copies of ``tools`` whose unbounded string parameters get ``maxLength``."""
    bounded = copy.deepcopy(tools)
    for tool in bounded:
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict):
            _bound(function.get("parameters"), max_length)
    return bounded


class BoundedStringArguments(WrappedClient):
    """Offers the tools with their string parameters bounded to ``max_length`` characters."""

    def __init__(self, inner: ModelClient, max_length: int):
        super().__init__(inner)
        self.max_length = max_length

    async def complete(
        self, messages: list[Message], tools: list[ToolSchema], params: SamplingParams
    ) -> AssistantTurn:
        if tools:
            tools = bound_string_arguments(tools, self.max_length)
        return await self.inner.complete(messages, tools, params)

    def cache_identity(self) -> dict[str, object]:
        return {**self.inner.cache_identity(), "argument_max_length": self.max_length}

    def describe(self) -> JsonObject:
        return {**self.inner.describe(), "argument_max_length": self.max_length}
