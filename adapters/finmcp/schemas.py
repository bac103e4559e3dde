"""The tool list the model sees.

The MCP server's own schema is not shipped with the benchmark, so it is rebuilt
from the data: every tool name in ``tool_list`` or in a gold call; for each tool,
the union of the argument names of its gold calls over all items, each with the
JSON type(s) its values had (integer and number merge into number); an argument
is required only if every gold call of that tool has it.

A user-supplied schema file (``options["tool_schemas"]``) overrides this by tool
name. It may hold OpenAI tools (``{"type": "function", "function": {...}}``),
bare functions (``{"name", "description", "parameters"}``) or MCP tools
(``{"name", "description", "inputSchema"}``), as a list or under a ``tools`` key.
Reconstructed tools the file does not name are kept, so every gold tool stays
callable.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from harness.boundary.json_value import JsonList, JsonObject, JsonValue
from harness.errors import ConfigError
from harness.types import ToolSchema

from .data import Item
from .gold import recorded_calls


def json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _merged_type(types: set[str]) -> JsonValue:
    """One type name, a sorted list of them, or None when there is none."""
    if {"integer", "number"} <= types:
        types = types - {"integer"}
    if not types:
        return None
    if len(types) == 1:
        return next(iter(types))
    names: JsonList = [*sorted(types)]
    return names


def _property_schema(values: list[JsonValue]) -> JsonObject:
    schema: JsonObject = {}
    merged = _merged_type({json_type(v) for v in values})
    if merged is not None:
        schema["type"] = merged
    elements = [e for v in values if isinstance(v, list) for e in v]
    if any(isinstance(v, list) for v in values):
        item_type = _merged_type({json_type(e) for e in elements})
        items: JsonObject = {"type": item_type} if item_type is not None else {}
        schema["items"] = items
    return schema


def _names_in_tool_list(item: Item) -> list[str]:
    """``tool_list`` is a list of parallel groups (lists) or a flat list of names."""
    names: list[str] = []
    tool_list = item.get("tool_list") or []
    if not isinstance(tool_list, (list, str, dict)):
        raise TypeError(f"'{type(tool_list).__name__}' object is not iterable")
    for entry in tool_list:
        group = entry if isinstance(entry, list) else [entry]
        names.extend(str(name) for name in group if isinstance(name, str) and name)
    return names


def reconstruct_tools(items: list[Item]) -> list[ToolSchema]:
    """OpenAI tool schemas rebuilt from the gold calls of the given items (sorted by name)."""
    names: set[str] = set()
    values: dict[str, dict[str, list[JsonValue]]] = defaultdict(lambda: defaultdict(list))
    call_keys: dict[str, list[set[str]]] = defaultdict(list)
    for item in items:
        names.update(_names_in_tool_list(item))
        for call in recorded_calls(item["messages"]):
            if not call.name:
                continue
            names.add(call.name)
            arguments = call.arguments or {}
            call_keys[call.name].append(set(arguments))
            for key, value in arguments.items():
                values[call.name][key].append(value)
    tools = []
    for name in sorted(names):
        properties: JsonObject = {
            key: _property_schema(vals) for key, vals in sorted(values[name].items())
        }
        seen = call_keys[name]
        required = sorted(set.intersection(*seen)) if seen else []
        parameters: JsonObject = {"type": "object", "properties": properties}
        if required:
            parameters["required"] = list(required)
        description = (
            f"Financial data tool '{name}' of the Qieman MCP server. "
            "Argument names and types are inferred from benchmark usage."
        )
        tools.append(
            {
                "type": "function",
                "function": {"name": name, "description": description, "parameters": parameters},
            }
        )
    return tools


def _as_openai_tool(entry: JsonValue, where: str) -> ToolSchema:
    if not isinstance(entry, dict):
        raise ConfigError(f"{where}: every tool must be a JSON object")
    given = entry.get("function")
    function: JsonObject
    if entry.get("type") == "function" and isinstance(given, dict):
        function = given
    elif "inputSchema" in entry:
        function = {
            "name": entry.get("name"),
            "description": entry.get("description", ""),
            "parameters": entry.get("inputSchema") or {"type": "object", "properties": {}},
        }
    else:
        function = entry
    if not isinstance(function.get("name"), str) or not function["name"]:
        raise ConfigError(f"{where}: a tool has no name")
    function = dict(function)
    function.setdefault("parameters", {"type": "object", "properties": {}})
    return {"type": "function", "function": function}


def load_schema_file(path: Path) -> list[ToolSchema]:
    """The tools of a user-supplied schema file (formats in the module docstring)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"FinMCP-Bench tool schema file {path}: {exc}") from exc
    if isinstance(data, dict):
        data = data.get("tools")
    if not isinstance(data, list):
        raise ConfigError(f"FinMCP-Bench tool schema file {path}: expected a list of tools")
    return [_as_openai_tool(entry, f"tool schema file {path}") for entry in data]


def merge_tools(reconstructed: list[ToolSchema], supplied: list[ToolSchema]) -> list[ToolSchema]:
    """Supplied tools replace reconstructed ones of the same name; order: supplied first."""
    supplied_names = {tool["function"]["name"] for tool in supplied}
    kept = [tool for tool in reconstructed if tool["function"]["name"] not in supplied_names]
    return list(supplied) + kept
