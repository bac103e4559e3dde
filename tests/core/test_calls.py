"""The safe call parser never evaluates model text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.models.calls import UnsafeCallError, format_python_call, parse_python_calls

HOSTILE = [
    "__import__('os').system('touch /tmp/harness-pwned')",
    "[f(a=__import__('os').system('id'))]",
    "f(a=open('/etc/passwd').read())",
    "f(a=lambda: 1)",
    "f(a=[x for x in range(10)])",
    "f(a=().__class__.__bases__[0].__subclasses__())",
    "os.system(cmd='ls')",  # parses as a name only; dispatch decides (never resolved)
    "f.__init__(a=1)",
    "f(**{'a': 1})",
    "f(a=1 if True else 2)",
    "f(a=b)",
    "f(a={1, 2})",
    "exec('print(1)')",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_text_is_refused_or_inert(text, tmp_path):
    try:
        calls = parse_python_calls(text)
    except UnsafeCallError:
        return
    # What parses is plain data: a dotted name string and literal arguments.
    for call in calls:
        assert isinstance(call.name, str) and "__" not in call.name
        assert all(
            isinstance(v, (str, int, float, bool, type(None), list, dict))
            for v in call.arguments.values()
        )


def test_literal_arguments_round_trip():
    calls = parse_python_calls("[f(a=1, b=-2.5, c='x', d=[1, (2, 3)], e={'k': None}), g()]")
    assert [c.name for c in calls] == ["f", "g"]
    assert calls[0].arguments == {"a": 1, "b": -2.5, "c": "x", "d": [1, [2, 3]], "e": {"k": None}}
    assert format_python_call("f", {"a": 1, "c": "x"}) == "f(a=1, c='x')"


def test_positional_arguments_are_refused_unless_dropped():
    with pytest.raises(UnsafeCallError):
        parse_python_calls("sort('f')")
    assert parse_python_calls("sort('f', reverse=True)", drop_positional=True)[0].arguments == {
        "reverse": True
    }


def test_megabyte_arguments_and_deep_nesting_do_not_crash():
    big = parse_python_calls("f(a='" + "x" * 1_000_000 + "')")
    assert len(big[0].arguments["a"]) == 1_000_000
    with pytest.raises(UnsafeCallError):
        parse_python_calls("f(a=" + "[" * 100_000 + "]" * 100_000 + ")")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_arbitrary_text_never_raises_anything_but_unsafe_call_error(text):
    try:
        parse_python_calls(text)
    except UnsafeCallError:
        pass
