"""Model-made tool calls and tool results, read by their schemas.

``schema_problem`` checks a value against a JSON schema's basic shape,
``tool_parameters`` maps tool names to their parameter schemas, and
``result_status`` says whether a tool result (real or imagined) is an error, by
one rule for every strategy and the world-model measurement.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence

from harness.boundary.json_value import JsonValue

_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")


def _type_ok(value: object, expected: str) -> bool | None:
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


def schema_problem(value: object, schema: object, path: str) -> str | None:
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


def _object_problem(
    value: Mapping[str, object], schema: Mapping[str, object], path: str
) -> str | None:
    prefix = f"{path}." if path else ""
    required = schema.get("required")
    for name in required if isinstance(required, list) else []:
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


def tool_parameters(tools: Sequence[object]) -> dict[str, Mapping[str, object]]:
    """Tool name -> its parameters schema."""
    table: dict[str, Mapping[str, object]] = {}
    for tool in tools:
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and function.get("name"):
            parameters = function.get("parameters")
            table[str(function["name"])] = parameters if isinstance(parameters, dict) else {}
    return table


def parse_json_value(text: str) -> tuple[bool, JsonValue]:
    """(ok, value) of the first JSON value in ``text`` (code fences allowed)."""
    text = _FENCE.sub("", text.strip()).strip()
    if not text:
        return False, None
    try:
        parsed: JsonValue = json.loads(text)
        return True, parsed
    except (json.JSONDecodeError, RecursionError):
        pass
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        return False, None
    try:
        value: JsonValue
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
