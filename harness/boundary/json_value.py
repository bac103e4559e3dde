"""Names for JSON data: what a record, a request body or a data file holds.

``JsonValue`` is any value ``json.loads`` can return, spelled out, so that code
which reads JSON says so and the type checker makes it look before it uses a
value (``isinstance`` narrows a ``JsonValue`` to one of its kinds). A function
that only reads an object takes a ``JsonMapping``: a ``Mapping`` is read-only,
so a ``dict[str, str]`` is accepted where a ``dict[str, JsonValue]`` would not
be (a ``dict`` may be written to, so its value type must match exactly).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias

JsonScalar: TypeAlias = None | bool | int | float | str
JsonValue: TypeAlias = JsonScalar | list["JsonValue"] | dict[str, "JsonValue"]
JsonObject: TypeAlias = dict[str, JsonValue]
JsonList: TypeAlias = list[JsonValue]
# Read-only views: a Mapping or Sequence is covariant, so a dict[str, str] or a
# list[int] is one.
JsonMapping: TypeAlias = Mapping[str, JsonValue]
JsonSequence: TypeAlias = Sequence[JsonValue]


# Reads of one field of stored JSON: an absent (or empty) field is empty, a field of
# another JSON kind than expected raises TypeError naming the value.


def object_field(value: object) -> JsonMapping:
    """A JSON object field; an absent (or empty) one is ``{}``."""
    if not value:
        return {}
    if isinstance(value, dict):
        return value
    raise TypeError(f"not an object: {value!r}")


def list_field(value: object) -> JsonList:
    """A JSON list field; an absent (or empty) one is ``[]``."""
    if not value:
        return []
    if isinstance(value, list):
        return value
    raise TypeError(f"not a list: {value!r}")


def count_field(value: object) -> int:
    """``int()`` of a count field (a number or numeric text); an absent one is 0."""
    if not value:
        return 0
    if isinstance(value, (int, float, str)):
        return int(value)
    raise TypeError(f"not a count: {value!r}")
