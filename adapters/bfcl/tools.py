"""Function docs -> OpenAI tool schemas, the way BFCL's FC mode presents them.

BFCL's OpenAI-style handlers convert each function doc with the package's
``convert_to_tool`` (chat-completions style). The rules, applied here to a fresh
copy so that the (shared) docs stay untouched:
- "." in a function name becomes "_" (OpenAI names allow neither "." nor spaces);
- the parameters object gets ``type: object``;
- each property's BFCL type maps to a JSON-schema type ("dict" -> "object",
  "float" -> "number", "tuple" -> "array", "any" -> "string", Java/JS names...);
  a missing or unknown type becomes "string"; a "float" property also gets
  ``format: float`` and " This is a float type value." after its description;
- nested properties of objects and arrays are converted the same way, item
  types of arrays (and of arrays of arrays) are mapped;
- everything else (descriptions, enums, defaults, required, the "response"
  field) is kept.
Java/JavaScript parameters arrive typed as strings by the language hints.
``tests/adapters/bfcl/test_bfcl_data.py`` checks this against the package's converter on every
entry of every category. The model's call names are checked as written; the AST
checker maps the docs' names the same way.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from harness.boundary.json_value import JsonObject
from harness.types import ToolSchema

from . import official


def _type_map() -> dict[str, str]:
    return official.module("bfcl_eval.constants.type_mappings").GORILLA_TO_OPENAPI


# The docs as json.loads gives them: converted in place, a doc of another shape
# fails as the package's converter fails on it.
def _convert_properties(properties: dict[str, Any], types: dict[str, str]) -> dict[str, Any]:
    for schema in properties.values():
        declared = schema.get("type")
        if declared is None:
            schema["type"] = "string"
        else:
            if declared == "float":
                schema["format"] = "float"
                schema["description"] += " This is a float type value."
            schema["type"] = types.get(declared, "string")
        if schema["type"] in ("array", "object"):
            if "properties" in schema:
                schema["properties"] = _convert_properties(schema["properties"], types)
            elif "items" in schema:
                items = schema["items"]
                # An unknown item type is an error in the package as well.
                items["type"] = types[items["type"]]
                if items["type"] == "array" and "items" in items:
                    items["items"]["type"] = types[items["items"]["type"]]
                elif items["type"] == "object" and "properties" in items:
                    items["properties"] = _convert_properties(items["properties"], types)
    return properties


def openai_tools(functions: list[JsonObject]) -> list[ToolSchema]:
    """OpenAI ``tools`` entries for BFCL function docs (the input is not modified).

    Equal doc lists share one converted list (multi-turn and live entries reuse
    the same docs many times): callers must not modify it."""
    return _converted(json.dumps(functions))


@lru_cache(maxsize=2048)
def _converted(functions_json: str) -> list[ToolSchema]:
    types = _type_map()
    tools = []
    for doc in json.loads(functions_json):  # a fresh copy to convert in place
        doc["name"] = doc["name"].replace(".", "_")
        doc["parameters"]["type"] = "object"
        doc["parameters"]["properties"] = _convert_properties(
            doc["parameters"]["properties"], types
        )
        tools.append({"type": "function", "function": doc})
    return tools


def official_tools(functions: list[JsonObject]) -> list[ToolSchema]:
    """The package's own conversion (reference for tests)."""
    utils = official.module("bfcl_eval.model_handler.utils")
    enums = official.module("bfcl_eval.constants.enums")
    mappings = official.module("bfcl_eval.constants.type_mappings")
    return utils.convert_to_tool(
        functions, mappings.GORILLA_TO_OPENAPI, enums.ModelStyle.OPENAI_COMPLETIONS
    )
