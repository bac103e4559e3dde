"""read_json gives what json.loads gives (or raises what it raises), line by line,
including where orjson alone would refuse or read otherwise; records read back
through it equal json's reading of the file."""

from __future__ import annotations

import json
import math
import random

import pytest

from harness.boundary.json_read import read_json
from harness.store.run_store import read_records

AWKWARD = [
    '{"a": 1, "a": 2}',  # the last of a repeated key
    '{"x": NaN, "y": [Infinity, -Infinity]}',  # json writes them; orjson refuses
    '"\\ud800 lone"',  # a lone surrogate escape
    '"\\ud83d\\ude00"',  # a pair
    "1e400",  # past a float: json gives inf
    "123456789012345678901234567890",  # past 64 bits: orjson alone gives a float
    "-9223372036854775809",  # one below int64
    "18446744073709551615",  # uint64's largest
    '{"id": "1234567890123456789012"}',  # long digits in a string: json reads it
    "[1.0000000000000002, 0.1, 5e-324, -0.0, 1e-7, 12345.678e10]",
    '"\\u0000 and \\n and é"',
    '  {"x": 1}  \n',
]


@pytest.mark.parametrize("text", AWKWARD)
def test_read_json_reads_what_json_reads(text):
    ours, theirs = read_json(text.encode("utf-8")), json.loads(text)
    assert repr(ours) == repr(theirs)  # repr: NaN equals no NaN, and 1 == 1.0


@pytest.mark.parametrize(
    "data", [b'{"a": 1}x', b"", b'{"a": ', b"[" * 5000 + b"]" * 5000, b"\xef\xbb\xbf{}"]
)
def test_read_json_raises_what_json_raises(data):
    with pytest.raises((ValueError, RecursionError)) as ours:
        read_json(data)
    with pytest.raises((ValueError, RecursionError)) as theirs:
        json.loads(data.decode("utf-8", "replace"))
    assert type(ours.value) is type(theirs.value)


def test_bytes_that_are_not_utf8_read_as_replaced_text():
    assert read_json(b'{"t": "caf\xe9"}') == {"t": "caf\ufffd"}


def test_random_numbers_read_exactly():
    rng = random.Random(7)
    values = [rng.uniform(-1e300, 1e300) for _ in range(300)]
    values += [rng.random() * 10 ** rng.randint(-300, 300) for _ in range(300)]
    values += [rng.randint(-(2**70), 2**70) for _ in range(300)]
    text = json.dumps(values)
    ours = read_json(text.encode())
    assert ours == json.loads(text)
    assert all(type(a) is type(b) for a, b in zip(ours, values, strict=True))


def test_records_read_back_equal_json_reading_them(tmp_path):
    base = {"benchmark": "b", "subset": "s", "seed": 0, "status": "ok"}
    lines = []
    for n, extra in enumerate(
        [
            {"metadata": {"temperature": float("nan")}},
            {"score": {"reward": 1.0}, "metadata": {"big": 2**80, "id": "9" * 25}},
            {"error": "caf\u00e9 \U0001f600"},
        ]
    ):
        record = {**base, "key": f"b/s/{n}#0", "sample_id": str(n), "trial": 0, **extra}
        lines.append(json.dumps(record, ensure_ascii=False))
    path = tmp_path / "samples.jsonl"
    path.write_text("\n".join(lines) + '\n{"key": "b/s/9#0", "tor', encoding="utf-8")
    read = read_records(path)
    assert read.torn_lines == 1
    expected = {json.loads(line)["key"]: json.loads(line) for line in lines}
    assert repr(read.latest) == repr(expected)
    assert read.latest["b/s/1#0"]["metadata"]["big"] == 2**80
    assert math.isnan(read.latest["b/s/0#0"]["metadata"]["temperature"])
