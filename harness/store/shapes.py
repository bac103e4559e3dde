"""The shape of a record, field by field, at every level a reader reads.

A record read back from ``samples.jsonl`` may have been edited by hand or
written by something else. Every reader (scoring, the leaderboard, the report,
the exports) reads numbers, text and lists out of it; a field of the wrong type
there (a token count ``"x"``, a trial of ``10**30``, ``null`` in a list of turns,
``NaN``) would fail deep inside whichever reader met it first. The record's
shape is checked once, where it is read (records.parse_record), and the first
field that does not fit is named (``trajectory.turns[0]: null, not an object``).

A shape is a small value: ``Text``, ``Bool``, ``Number``, ``Integer(low, high)``,
``Maybe(shape)`` (may also be null or missing), ``ListOf``, ``MapOf`` (an object
of text keys), ``Object`` (named fields; keys not named are allowed: a record
keeps the keys of other versions), ``Either`` and ``Anything``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field


class Shape:
    """What a value must be; ``problem`` says why it is not, or None."""

    def problem(self, value: object, where: str) -> str | None:
        raise NotImplementedError


def _kind(value: object) -> str:
    if value is None:
        return "null"
    names = {bool: "a boolean", str: "text", dict: "an object", list: "a list"}
    for kind, name in names.items():
        if isinstance(value, kind):
            return name
    if isinstance(value, int | float):
        return f"the number {value!r}" if len(repr(value)) <= 24 else "a huge number"
    return type(value).__name__


@dataclass(frozen=True)
class _Anything(Shape):
    def problem(self, value: object, where: str) -> str | None:
        return None


@dataclass(frozen=True)
class _Text(Shape):
    def problem(self, value: object, where: str) -> str | None:
        return None if isinstance(value, str) else f"{where}: {_kind(value)}, not text"


@dataclass(frozen=True)
class _Bool(Shape):
    def problem(self, value: object, where: str) -> str | None:
        return None if isinstance(value, bool) else f"{where}: {_kind(value)}, not true or false"


# No count, trial, seed or token total of a real run comes near this; a larger
# integer is a typo or an attack, and overflows a float or a table column.
LARGEST_INTEGER = 2**63 - 1
# A finite float: an integer beyond this is not one a number column can hold.
LARGEST_NUMBER = 1e300


@dataclass(frozen=True)
class _Number(Shape):
    """A finite number (an integer or a float, not a boolean, not NaN or infinity)."""

    def problem(self, value: object, where: str) -> str | None:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return f"{where}: {_kind(value)}, not a number"
        if isinstance(value, int) and abs(value) > LARGEST_NUMBER:
            return f"{where}: a huge number"
        if isinstance(value, float) and not math.isfinite(value):
            return f"{where}: {value!r}, not a finite number"
        return None


@dataclass(frozen=True)
class Integer(Shape):
    low: int = 0
    high: int = LARGEST_INTEGER

    def problem(self, value: object, where: str) -> str | None:
        if isinstance(value, bool) or not isinstance(value, int):
            return f"{where}: {_kind(value)}, not a whole number"
        if not self.low <= value <= self.high:
            shown = value if len(str(value)) <= 24 else "a huge number"
            return f"{where}: {shown}, not from {self.low} to {self.high:,}"
        return None


@dataclass(frozen=True)
class Maybe(Shape):
    """``shape``, or null (a missing key reads as null)."""

    shape: Shape

    def problem(self, value: object, where: str) -> str | None:
        return None if value is None else self.shape.problem(value, where)


@dataclass(frozen=True)
class Either(Shape):
    shapes: tuple[Shape, ...]
    says: str  # what a value must be, in the message

    def problem(self, value: object, where: str) -> str | None:
        for shape in self.shapes:
            if shape.problem(value, where) is None:
                return None
        return f"{where}: {_kind(value)}, not {self.says}"


@dataclass(frozen=True)
class ListOf(Shape):
    item: Shape

    def problem(self, value: object, where: str) -> str | None:
        if not isinstance(value, list):
            return f"{where}: {_kind(value)}, not a list"
        for index, item in enumerate(value):
            found = self.item.problem(item, f"{where}[{index}]")
            if found is not None:
                return found
        return None


@dataclass(frozen=True)
class MapOf(Shape):
    """An object whose every value has ``value``'s shape."""

    value: Shape

    def problem(self, value: object, where: str) -> str | None:
        if not isinstance(value, dict):
            return f"{where}: {_kind(value)}, not an object"
        for key, item in value.items():
            found = self.value.problem(item, f"{where}.{key}")
            if found is not None:
                return found
        return None


@dataclass(frozen=True)
class Object(Shape):
    """An object with these fields (each checked when present and not null,
    unless its shape says otherwise); ``required`` must be present."""

    fields: dict[str, Shape] = field(default_factory=dict)
    required: tuple[str, ...] = ()

    def problem(self, value: object, where: str) -> str | None:
        if not isinstance(value, dict):
            return f"{where}: {_kind(value)}, not an object"
        for name in self.required:
            if name not in value:
                return f"{_join(where, name)}: missing"
        for name, shape in self.fields.items():
            if name in value:
                found = shape.problem(value[name], _join(where, name))
                if found is not None:
                    return found
        return None


def _join(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name


Anything = _Anything()
Text = _Text()
Bool = _Bool()
Number = _Number()
Count = Integer(0)
AnyObject = Object()

# Trials are numbered from 0; more than harness.config.validate.MAX_TRIALS is a typo.
LARGEST_TRIAL = 1_000_000

USAGE = Object(
    {name: Maybe(Count) for name in ("calls", "prompt_tokens", "completion_tokens", "cached_calls")}
)
TOOL_CALL = Object(
    {
        "id": Text,
        "name": Text,
        "arguments": Maybe(AnyObject),
        "raw_arguments": Text,
        "parse_error": Maybe(Text),
        "text_repairs": Count,
    },
    required=("id", "name", "arguments"),
)
TURN = Object(
    {
        "content": Maybe(Text),
        "tool_calls": Maybe(ListOf(TOOL_CALL)),
        "reasoning": Maybe(Text),
        "usage": Maybe(USAGE),
        "finish_reason": Maybe(Text),
        "text_repairs": Maybe(Count),
    }
)
MESSAGE = Object({"role": Maybe(Text), "tool_calls": Maybe(ListOf(AnyObject))})
TRAJECTORY = Object(
    {
        "messages": Maybe(ListOf(MESSAGE)),
        "turns": Maybe(ListOf(TURN)),
        "termination": Maybe(Text),
        "tool_calls": Count,
        "tool_errors": Count,
        "usage": Maybe(MapOf(USAGE)),
        "context_resets": Maybe(ListOf(Count)),
        "reset_histories": Maybe(ListOf(ListOf(MESSAGE))),
        "extra": Maybe(AnyObject),
    }
)
SCORE = Object(
    {
        "passed": Maybe(Bool),
        "reward": Maybe(Number),
        "progress": Maybe(Number),
        "tool_tp": Maybe(Count),
        "tool_fp": Maybe(Count),
        "tool_fn": Maybe(Count),
        "details": Maybe(AnyObject),
        "excluded": Maybe(Text),
    }
)
RECORD = Object(
    {
        "key": Text,
        "benchmark": Text,
        "subset": Text,
        "sample_id": Either((Text, Integer(-LARGEST_INTEGER)), "text or a whole number"),
        "trial": Integer(0, LARGEST_TRIAL),
        "status": Text,
        "seed": Maybe(Integer(-LARGEST_INTEGER)),
        "error": Maybe(Either((AnyObject, Text), "an object or text")),
        "score": Maybe(SCORE),
        "metadata": Maybe(AnyObject),
        "load_options": Maybe(AnyObject),
        "started_at": Maybe(Text),
        "latency_s": Maybe(Number),
        "trajectory": Maybe(TRAJECTORY),
    },
    required=("key", "benchmark", "subset", "sample_id", "trial", "status"),
)
# What scores.json keeps of each record (its current status and score).
SCORED_RECORD = Object(
    {
        "status": Maybe(Text),
        "score": Maybe(SCORE),
        "score_error": Maybe(Either((Text, AnyObject), "text or an object")),
    }
)
