"""Typed reads of the JSON the adapter keeps: run records, a task's dict, a state.

A field that is absent (or empty) reads as an empty object or list; a field of
another JSON kind than the one expected raises TypeError naming the value (as
reading it would have failed anyway, only less clearly).
"""

from __future__ import annotations

from harness.boundary.json_value import JsonMapping, list_field


def objects_field(value: object) -> list[JsonMapping]:
    """A JSON list of objects; an absent (or empty) one has none."""
    items = list_field(value)
    for item in items:
        if not isinstance(item, dict):
            raise TypeError(f"not an object: {item!r}")
    return [item for item in items if isinstance(item, dict)]


def int_value(value: object) -> int:
    """``int()`` of what JSON holds (a number or a numeric string)."""
    if isinstance(value, (int, float, str)):
        return int(value)
    raise TypeError(f"not an integer: {value!r}")


def float_value(value: object) -> float:
    """``float()`` of what JSON holds (a number or a numeric string)."""
    if isinstance(value, (int, float, str)):
        return float(value)
    raise TypeError(f"not a number: {value!r}")
