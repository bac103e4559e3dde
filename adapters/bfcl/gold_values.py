"""Concrete argument values from BFCL's possible answers (for the oracle).

A possible answer lists, per parameter, every accepted value ("" marks an
optional parameter that may be left out). For "dict" parameters each accepted
value is itself a dict of key -> accepted values, and for lists of dicts each
item is such a dict. Java and JavaScript functions take every argument as
source text, which the official checker converts back with its type
converters; ``java_text`` / ``js_text`` write a value so that it converts back
to the same value.
"""

from __future__ import annotations

import json

from harness.boundary.json_value import JsonMapping, JsonObject, JsonSequence, JsonValue

OMITTED = ""


def first_choice(choices: JsonSequence) -> JsonValue:
    return choices[0] if choices else OMITTED


def gold_choice(choices: JsonSequence, required: bool, documented: bool) -> JsonValue:
    """The accepted value the oracle passes for a parameter, or OMITTED.

    The first accepted value, except: a parameter that may be left out ("" among
    its values) is left out when the function doc does not define it, and given
    its first real value when the doc requires it.
    """
    optional = OMITTED in choices
    if optional and not documented:
        return OMITTED
    first = first_choice(choices)
    if first == OMITTED and required:
        return next((choice for choice in choices if choice != OMITTED), OMITTED)
    return first


def _accepted(values: JsonValue) -> JsonSequence:
    """The accepted values of one key of a dict answer (a list; a text is read as
    its characters, as indexing it would)."""
    if isinstance(values, (list, str)):
        return values
    raise TypeError(f"accepted values are not a list: {values!r}")


def concrete_dict(spec: JsonMapping) -> JsonObject:
    """A dict answer ``{key: [accepted values]}`` -> ``{key: first value}``."""
    return {
        key: first_choice(_accepted(values))
        for key, values in spec.items()
        if first_choice(_accepted(values)) != OMITTED
    }


def _schema_type(schema: JsonMapping) -> JsonValue:
    return schema.get("type")


def _item_type(schema: JsonMapping) -> str | None:
    """The declared type of an array's items (None when not declared as text)."""
    items = schema.get("items") or {}
    kind = items.get("type") if isinstance(items, dict) else None
    return kind if isinstance(kind, str) else None


def concrete_value(value: JsonValue, schema: JsonMapping, language: str) -> JsonValue:
    """The argument the oracle passes for a parameter's first accepted value."""
    if language == "java":
        return java_text(value, schema)
    if language == "javascript":
        return js_text(value, schema)
    return concrete_python(value, schema)


def concrete_python(value: JsonValue, schema: JsonMapping) -> JsonValue:
    """The first accepted value of a Python-typed parameter as a real value."""
    kind = _schema_type(schema)
    if kind == "dict" and isinstance(value, dict):
        return concrete_dict(value)
    if kind == "array" and _item_type(schema) == "dict" and isinstance(value, list):
        return [concrete_dict(item) if isinstance(item, dict) else item for item in value]
    return value


def _scalar_java(value: JsonValue) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    return repr(value)


def java_text(value: JsonValue, schema: JsonMapping) -> str:
    """Java source for a value of the declared Java type."""
    kind = _schema_type(schema)
    nested = _item_type(schema)
    if isinstance(value, str):
        return value  # strings (and variable names) are passed as written
    if isinstance(value, bool):
        return "true" if value else "false"
    if kind == "long" and isinstance(value, int):
        return f"{value}L"
    if kind == "float" and isinstance(value, (int, float)):
        return f"{float(value)}f"
    if kind in ("Array", "ArrayList") and isinstance(value, list):
        if kind == "Array":
            # Array elements are converted one by one by the element type;
            # strings stay unquoted because the String converter keeps quotes.
            items = [java_text(item, {"type": nested}) for item in value]
            return f"new {nested or 'Object'}[]{{{', '.join(items)}}}"
        items = [_arraylist_item(item, nested) for item in value]
        return f"new ArrayList<>(Arrays.asList({', '.join(items)}))"
    if kind == "HashMap" and isinstance(value, dict):
        entries = concrete_dict(value).items()
        puts = " ".join(f"put({json.dumps(str(k))}, {_scalar_java(v)});" for k, v in entries)
        return f"new HashMap<String, Object>() {{{{ {puts} }}}}"
    return str(value)


def _arraylist_item(value: JsonValue, nested: str | None) -> str:
    if nested in ("String", "char") and isinstance(value, str):
        return json.dumps(value) if nested == "String" else f"'{value}'"
    if nested is None:
        return _scalar_java(value)
    return java_text(value, {"type": nested})


def _scalar_js(value: JsonValue) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_scalar_js(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_scalar_js(v)}" for k, v in value.items()) + "}"
    return repr(value)


def js_text(value: JsonValue, schema: JsonMapping) -> str:
    """JavaScript source for a value of the declared JavaScript type."""
    kind = _schema_type(schema)
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if kind == "Bigint" and isinstance(value, int):
        return f"{value}n"
    if kind == "dict" and isinstance(value, dict):
        pairs = ", ".join(f"{k}: {_scalar_js(v)}" for k, v in concrete_dict(value).items())
        return "{" + pairs + "}"
    if isinstance(value, (list, dict)):
        return _scalar_js(value)
    return repr(value)
