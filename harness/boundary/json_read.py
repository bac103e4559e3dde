"""``read_json(line)``: what ``json.loads`` returns for a line of UTF-8, in about
half its time.

A run's samples.jsonl is read whole at its end and by every command that reads
numbers (tens of MB for a large run). orjson parses it in about half of json's
time, and gives the same values except where it refuses, or reads otherwise,
what json reads:

- NaN and the infinities (json writes them; orjson refuses them), a lone
  surrogate escape, an exponent past a float's range, nesting past 1,024 levels,
  bytes that are not UTF-8: refused, so read by json (which may then raise as
  before);
- an integer past 64 bits: orjson gives a float. A line holding 19 digits in a
  row is read by json (a long id in a string sends a line there too: slower,
  never different). The digits are found on the bytes with one ``translate``
  (a regular expression took longer than the parse).

Any error is json's own: what orjson refuses is read again by json, which raises
its ValueError (or RecursionError) as a caller expects. Bytes that are not UTF-8
are read as text with U+FFFD in their place, as a file opened with
``errors="replace"`` reads them.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
# 19 digits in a row may be an integer past what orjson reads as one.
_LONG_DIGITS = b"0" * 19


def read_json(line: bytes) -> Any:
    """``json.loads`` of ``line`` decoded (bad UTF-8 replaced), by orjson where it
    reads the same."""
    if _LONG_DIGITS not in line.translate(_AS_ZERO):
        try:
            return orjson.loads(line)
        except orjson.JSONDecodeError:
            pass  # json's reading, or json's error
    return json.loads(line.decode("utf-8", "replace"))
