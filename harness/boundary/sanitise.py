"""Values from outside (models, servers, tools, datasets) made safe where they enter.

Three things break a run long after a value came in, so they are settled at the
boundary instead:

- text that is not valid UTF-8 (lone surrogates from ``"\\ud800"`` escapes,
  invalid bytes) cannot be written to a UTF-8 file: it is replaced with U+FFFD
  and the replacement is counted, so the record says that it happened;
- values nested hundreds deep, or with millions of entries, or integers beyond
  Python's int-string limit, make ``json.dumps``, ``copy.deepcopy`` or ``str``
  raise much later: parsing refuses them (a parse error the agent sees);
- ``NaN`` and ``Infinity`` are not JSON: parsing refuses them, and
  ``json_ready`` turns any that arrive by another path into text before writing.

``loads_bounded`` is the parser for model-written JSON; ``clean_value`` repairs a
value parsed elsewhere; ``json_ready`` is the last resort of every writer. Where a
benchmark reads model text with its own rules (``json.loads`` as its code calls
it, its own decoder), ``loads_within_depth`` and ``check_depth`` apply the same
nesting bound, MAX_DEPTH, so that nothing deeper reaches a scorer's walk.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, NoReturn

from harness.boundary.json_value import JsonValue

# Deeper nesting than this is refused in tool-call arguments (no real call is
# nested a tenth as deep; copy and JSON code recurse once or twice per level and
# fail near 1,000).
MAX_DEPTH = 100
# Entries (list items plus object members, all levels) in one parsed value.
MAX_ENTRIES = 200_000
# Digits of an integer: Python refuses to convert longer ones to and from text.
MAX_INT_DIGITS = 4_300
# Integers this many bits long have at most MAX_INT_DIGITS digits.
MAX_INT_BITS = int(MAX_INT_DIGITS * math.log2(10)) - 1
# Depth at which json_ready stops and writes a marker instead of the value.
MAX_WRITE_DEPTH = 200
REPLACEMENT = "\ufffd"


class BoundsError(ValueError):
    """A value over one of the parse bounds (depth, entries, integer size, non-finite)."""


def clean_str(text: str) -> tuple[str, int]:
    """(valid UTF-8 text, how many characters were replaced).

    Lone surrogates are the only characters a Python string holds that UTF-8
    cannot encode; each becomes U+FFFD.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        replaced = sum(1 for ch in text if "\ud800" <= ch <= "\udfff")
        cleaned = "".join(REPLACEMENT if "\ud800" <= ch <= "\udfff" else ch for ch in text)
        return cleaned, replaced
    return text, 0


def decode_bytes(data: bytes) -> tuple[str, int]:
    """(bytes as UTF-8 text, how many invalid sequences were replaced)."""
    try:
        return data.decode("utf-8"), 0
    except UnicodeDecodeError:
        text = data.decode("utf-8", errors="replace")
        return text, text.count(REPLACEMENT) - data.count(REPLACEMENT.encode("utf-8"))


@dataclass
class Cleaned:
    value: Any
    replaced: int = 0  # characters replaced with U+FFFD


def clean_value(
    value: object, max_depth: int = MAX_DEPTH, max_entries: int = MAX_ENTRIES
) -> Cleaned:
    """A copy of a JSON-like value with valid text (keys too), within the bounds.

    Raises BoundsError for nesting deeper than ``max_depth``, more than
    ``max_entries`` entries, an integer over MAX_INT_DIGITS digits or a
    non-finite float. Tuples become lists; other objects are kept as they are.
    """
    walker = _Walker(max_depth, max_entries)
    value = walker.walk(value, 0)
    return Cleaned(value, walker.replaced)


class _Walker:
    """One ``clean_value`` pass. A class, not nested functions: a nested function
    that calls itself is a reference cycle (it holds its own cell), garbage that
    only the cyclic collector frees, and a run cleans values many times a call."""

    def __init__(self, max_depth: int, max_entries: int):
        self.max_depth = max_depth
        self.max_entries = max_entries
        self.entries = 0
        self.replaced = 0

    def walk(self, item: object, depth: int) -> object:
        if isinstance(item, str):
            text, replaced = clean_str(item)
            self.replaced += replaced
            return text
        if isinstance(item, bool) or item is None:
            return item
        if isinstance(item, int):
            if item.bit_length() > MAX_INT_BITS:
                raise BoundsError(f"an integer has more than {MAX_INT_DIGITS} digits")
            return item
        if isinstance(item, float):
            if not math.isfinite(item):
                raise BoundsError(f"a number is out of range ({item})")
            return item
        if isinstance(item, (dict, list, tuple)):
            if depth >= self.max_depth:
                raise BoundsError(f"values are nested more than {self.max_depth} deep")
            self.entries += len(item)
            if self.entries > self.max_entries:
                raise BoundsError(f"more than {self.max_entries} values")
            if isinstance(item, dict):
                return {self.walk_key(k): self.walk(v, depth + 1) for k, v in item.items()}
            return [self.walk(v, depth + 1) for v in item]
        return item

    def walk_key(self, key: object) -> object:
        if isinstance(key, str):
            text, replaced = clean_str(key)
            self.replaced += replaced
            return text
        return key


def check_depth(value: object, max_depth: int = MAX_DEPTH) -> None:
    """BoundsError when lists and objects in ``value`` nest more than ``max_depth``
    deep, counted as ``clean_value`` counts (the outermost one is level 1).
    Iterative: no depth, and no circular reference, can make it recurse."""
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Iterable[object] = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if depth >= max_depth:
            raise BoundsError(f"values are nested more than {max_depth} deep")
        stack.extend((child, depth + 1) for child in children)


def loads_within_depth(text: str, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads(text)`` with only the nesting bound added, for code that reads
    model text as a benchmark's own code does (its NaN and its big values kept).
    Raises ValueError as json.loads does, BoundsError (a ValueError) for values
    nested deeper than ``max_depth``; never RecursionError."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise BoundsError(f"values are nested more than {max_depth} deep") from None
    check_depth(value, max_depth)
    return value


def _refuse_constant(name: str) -> NoReturn:
    raise BoundsError(f"{name} is not a JSON number")


def loads_bounded(text: str, max_depth: int = MAX_DEPTH, max_entries: int = MAX_ENTRIES) -> Cleaned:
    """Parse model-written JSON within the bounds, with its text made valid.

    Raises ValueError (json.JSONDecodeError or BoundsError) for text that is not
    JSON or is over a bound; never RecursionError.
    """
    try:
        # Python's own int-string limit (MAX_INT_DIGITS) refuses longer integers;
        # 1e999 parses as inf, which clean_value refuses.
        value = json.loads(text, parse_constant=_refuse_constant)
    except RecursionError:
        raise BoundsError(f"values are nested more than {max_depth} deep") from None
    except ValueError as exc:
        if "integer string conversion" in str(exc):
            raise BoundsError(f"an integer has more than {MAX_INT_DIGITS} digits") from None
        raise
    return clean_value(value, max_depth, max_entries)


def _non_finite_text(value: float) -> str:
    return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")


def sanitise(value: object, max_depth: int = MAX_WRITE_DEPTH) -> Cleaned:
    """A copy of any value that ``json.dumps(allow_nan=False)`` writes as valid
    UTF-8, with the number of characters replaced.

    Never raises: invalid text is replaced, non-finite floats and integers too
    long for text become strings, keys become strings, nesting deeper than
    ``max_depth``, circular references and objects JSON has no form for become
    text. It costs a full copy.
    """
    state = Cleaned(None)
    on_path: set[int] = set()

    def text(item: str) -> str:
        cleaned, replaced = clean_str(item)
        state.replaced += replaced
        return cleaned

    def scalar_text(item: object) -> str | None:
        if isinstance(item, float) and not math.isfinite(item):
            return _non_finite_text(item)
        if (
            isinstance(item, int)
            and not isinstance(item, bool)
            and item.bit_length() > MAX_INT_BITS
        ):
            return f"[integer of {item.bit_length()} bits]"
        return None

    def walk(item: object, depth: int) -> JsonValue:
        if isinstance(item, str):
            return text(item)
        if item is None or isinstance(item, (bool, int, float)):
            replacement = scalar_text(item)
            return item if replacement is None else replacement
        if isinstance(item, (dict, list, tuple, set, frozenset)):
            if depth >= max_depth:
                return "[nested too deep]"
            if id(item) in on_path:
                return "[circular reference]"
            on_path.add(id(item))
            try:
                if isinstance(item, dict):
                    return {key_text(k): walk(v, depth + 1) for k, v in item.items()}
                return [walk(v, depth + 1) for v in item]
            finally:
                on_path.discard(id(item))
        return printable(item)

    def key_text(key: object) -> str:
        if isinstance(key, str):
            return text(key)
        if key is None or isinstance(key, (bool, int, float)):
            replacement = scalar_text(key)
            if replacement is not None:
                return replacement
        return printable(key)

    def printable(item: object) -> str:
        try:
            return text(str(item))
        except Exception as exc:  # an object whose str() fails
            return f"[unprintable {type(item).__name__}: {type(exc).__name__}]"

    state.value = walk(value, 0)
    return state


# What in a JSON text can make json.loads give a value sanitise changes: a
# surrogate escape, NaN / Infinity, and what a float needs to overflow to inf or
# an integer to pass MAX_INT_BITS (under 200 digits before the point and an
# exponent under 100 stay below 1e299; an exponent follows a digit in JSON, so an
# id such as "chatcmpl-123" is no exponent). Matches inside strings too: then unsure.
# Three searches, each starting at a character class, scan the text several times
# faster than one alternation of them all (a look-behind first defeats the scan).
_MAY_NEED_SANITISING = (
    re.compile(r"\\u[dD][89a-fA-F]|NaN|Infinity"),
    re.compile(r"[eE](?<=\d[eE])[+-]?\d{3}"),
    re.compile(r"\d{200}"),
)


def loads_gives_sanitised(text: str) -> bool:
    """Whether ``json.loads(text)`` (of text decoded from bytes) is a value that
    ``sanitise`` returns unchanged, found by searches over the text instead of
    a walk over the value: True only when nothing above can occur in it and it
    cannot nest MAX_WRITE_DEPTH deep (fewer brackets than that); False when unsure."""
    if text.count("[") + text.count("{") >= MAX_WRITE_DEPTH:
        return False
    return not any(pattern.search(text) for pattern in _MAY_NEED_SANITISING)


def json_ready(value: object, max_depth: int = MAX_WRITE_DEPTH) -> JsonValue:
    """``sanitise(value).value``: the writers' last resort."""
    return sanitise(value, max_depth).value


def dumps_safe(value: object, **kwargs: Any) -> str:
    """``json.dumps`` that always gives standard JSON in valid UTF-8: the fast
    path first, ``json_ready`` when the value has something JSON cannot hold."""
    kwargs.setdefault("ensure_ascii", False)
    try:
        text = json.dumps(value, allow_nan=False, **kwargs)
        text.encode("utf-8")
        return text
    except (ValueError, TypeError, RecursionError, UnicodeEncodeError):
        kwargs.pop("default", None)
        return json.dumps(json_ready(value), allow_nan=False, **kwargs)
