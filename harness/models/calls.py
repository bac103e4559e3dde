"""Safe parsing of Python-style call text such as ``[f(a=1), g(b='x')]``.

Models in prompt mode (and some benchmarks' gold answers) write tool calls as Python
expressions. This module reads them with ``ast`` and accepts only literal
arguments: numbers, strings, booleans, None, and lists / tuples / dicts / sets of
those, plus negative numbers. Nothing is ever evaluated: a name, an attribute
chain, a call inside an argument, a lambda or a comprehension is rejected.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass

from harness.boundary import threadsafe_ast
from harness.boundary.sanitise import BoundsError, clean_value
from harness.types import ToolCall

# Call text longer than this is refused before parsing (the parser's memory use
# grows with the input, and no real call is this long).
MAX_CALL_TEXT_CHARS = 2_000_000


class UnsafeCallError(ValueError):
    """The text is not a list of calls with literal arguments."""


@dataclass
class ParsedCalls:
    calls: list[ToolCall]
    error: str | None = None


def _literal(node: ast.AST) -> object:
    """The value of a literal: a Python constant, list or dict (its keys any constant)."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, (str, int, float, bool, type(None))):
            return node.value
        raise UnsafeCallError(f"unsupported constant {type(node.value).__name__}")
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _literal(node.operand)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise UnsafeCallError("a sign applies only to numbers")
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.List):
        return [_literal(item) for item in node.elts]
    if isinstance(node, ast.Tuple):
        # Arguments are stored as JSON, which has no tuples.
        return [_literal(item) for item in node.elts]
    if isinstance(node, ast.Dict):
        pairs: dict[object, object] = {}
        for key, value in zip(node.keys, node.values, strict=True):
            if key is None:  # ``**other``
                raise UnsafeCallError("dict unpacking is not a literal")
            pairs[_literal(key)] = _literal(value)
        return pairs
    raise UnsafeCallError(f"argument is not a literal ({type(node).__name__})")


def _function_name(node: ast.AST) -> str:
    """A plain or dotted name (``f`` or ``math.factorial``); dotted names are
    kept as text, never resolved."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_function_name(node.value)}.{node.attr}"
    raise UnsafeCallError(f"function name is not a name ({type(node).__name__})")


def _call(node: ast.AST, drop_positional: bool) -> tuple[str, dict[str, object]]:
    """A call's name and its keyword arguments' literal values."""
    if not isinstance(node, ast.Call):
        raise UnsafeCallError(f"expected a call, got {type(node).__name__}")
    name = _function_name(node.func)
    if "__" in name:
        raise UnsafeCallError(f"dunder names are not allowed: {name}")
    if node.args and not drop_positional:
        # Positional arguments cannot be matched to parameter names here.
        raise UnsafeCallError(f"positional arguments are not supported in {name}()")
    for positional in node.args:
        _literal(positional)  # still refuse anything that is not a literal
    arguments: dict[str, object] = {}
    for keyword in node.keywords:
        if keyword.arg is None:
            raise UnsafeCallError(f"**kwargs are not allowed in {name}()")
        arguments[keyword.arg] = _literal(keyword.value)
    return name, arguments


def parse_python_calls(text: str, drop_positional: bool = False) -> list[ToolCall]:
    """Parse ``[f(a=1), g()]``, ``f(a=1)`` or ``(f(), g())`` into tool calls.

    ``drop_positional`` ignores (literal) positional arguments instead of refusing
    the call, as some benchmarks' official prompt-mode decoders do.

    Raises UnsafeCallError for anything that is not calls with literal keyword
    arguments. Never evaluates the text.
    """
    if len(text) > MAX_CALL_TEXT_CHARS:
        raise UnsafeCallError(f"call text too long ({len(text)} characters)")
    stripped = text.strip()
    if not stripped:
        return []
    try:
        tree = threadsafe_ast.parse(stripped, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise UnsafeCallError(f"not a Python expression: {exc}") from None
    body = tree.body
    nodes = body.elts if isinstance(body, (ast.List, ast.Tuple)) else [body]
    try:
        literals = [_call(node, drop_positional) for node in nodes]
    except RecursionError:
        raise UnsafeCallError("arguments nested too deeply") from None
    except TypeError as exc:  # e.g. a list as a dict key
        raise UnsafeCallError(f"argument is not a usable literal: {exc}") from None
    calls = []
    for index, (name, arguments) in enumerate(literals):
        # The JSON parse bounds hold here too: an integer beyond Python's
        # int-string limit or an overflowing float (1e999) would fail only when
        # the record is written, nesting when it is copied.
        try:
            cleaned = clean_value(arguments).value
        except BoundsError as exc:
            raise UnsafeCallError(f"arguments are not usable: {exc}") from None
        calls.append(ToolCall(id=f"call_{index}", name=name, arguments=cleaned))
    return calls


def try_parse_python_calls(text: str, drop_positional: bool = False) -> ParsedCalls:
    """Like parse_python_calls, but returns the error instead of raising."""
    try:
        return ParsedCalls(parse_python_calls(text, drop_positional))
    except UnsafeCallError as exc:
        return ParsedCalls([], str(exc))


def format_python_call(name: str, arguments: Mapping[str, object]) -> str:
    """``name(a=1, b='x')``: the inverse of parsing, for records and exports."""
    rendered = ", ".join(f"{key}={value!r}" for key, value in arguments.items())
    return f"{name}({rendered})"
