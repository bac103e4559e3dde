"""BFCL's Python call decoder, reproduced without evaluating model text.

The official prompt-mode decoder (``model_handler.utils.ast_parse`` with
``resolve_ast_call`` / ``resolve_ast_by_type``) walks the ``ast`` of a reply
such as ``[f(a=1), g(b='x')]`` and turns it into ``[{"f": {"a": 1}}, ...]``.
It is an AST walk except in two places, which call ``eval()`` on model text:
arithmetic (``BinOp``) and lambdas. We cannot call it, so this module repeats
its rules node by node and replaces those two places:

- arithmetic is computed here over literal operands only (numbers, strings,
  bytes, None, booleans and lists / tuples / sets / dicts of them) with
  Python's own operators and size bounds; an operand that is a name, a call,
  an attribute or anything else is refused (officially eval() would look it
  up or call it);
- a lambda always fails officially (the decoder indexes the lambda's body,
  which is not indexable), so it fails here too.

Everything else is decoded as the official code decodes it, quirks included
(see DEVIATIONS.md): keyword arguments only (positional ones are dropped
unread); a unary operator of any kind negates its literal operand (``+5`` and
``~5`` read as -5, ``not True`` as -1); ``...`` reads as the string "...";
a bare name reads as its name; a nested call with keyword arguments reads as
``{name: {arg: value}}``, one without as its source text; a subscript as its
source text; tuples stay tuples; ``**mapping`` is stored under the key None.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import NoReturn

from harness.boundary import threadsafe_ast

# Call text longer than this is refused before parsing (memory grows with it).
MAX_TEXT_CHARS = 2_000_000
# Bounds on computed arithmetic, so that "9**9**9" or "'a'*10**9" cannot hang
# or exhaust memory (officially they would be computed).
MAX_EXPONENT = 10_000
MAX_SHIFT = 10_000
MAX_SEQUENCE_LENGTH = 1_000_000


class PythonDecodeError(ValueError):
    """The text does not decode (the official decoder would raise too, or we
    refuse to compute what it would have evaluated)."""


def _bounded_pow(base: object, exponent: object) -> object:
    if isinstance(exponent, int) and abs(exponent) > MAX_EXPONENT and base not in (0, 1, -1):
        raise PythonDecodeError("exponent too large to compute safely")
    return operator.pow(base, exponent)


def _bounded_shift(shift: Callable[[object, object], object]) -> Callable[[object, object], object]:
    def apply(left: object, right: object) -> object:
        if isinstance(right, int) and right > MAX_SHIFT:
            raise PythonDecodeError("shift too large to compute safely")
        return shift(left, right)

    return apply


def _bounded_mul(left: object, right: object) -> object:
    for sequence, count in ((left, right), (right, left)):
        if isinstance(sequence, (str, bytes, list, tuple)) and isinstance(count, int):
            if len(sequence) * max(count, 0) > MAX_SEQUENCE_LENGTH:
                raise PythonDecodeError("repetition too long to compute safely")
    return operator.mul(left, right)


def _numeric_mod(left: object, right: object) -> object:
    if isinstance(left, (str, bytes)):
        # printf-style formatting can build arbitrarily large strings.
        raise PythonDecodeError("string formatting with % is not computed")
    return operator.mod(left, right)


_BINARY: dict[type, Callable[[object, object], object]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: _bounded_mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: _numeric_mod,
    ast.Pow: _bounded_pow,
    ast.LShift: _bounded_shift(operator.lshift),
    ast.RShift: _bounded_shift(operator.rshift),
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
    ast.BitAnd: operator.and_,
    ast.MatMult: operator.matmul,
}
# Typed by what they accept (a number, or a bool for ``not``); _apply turns a
# wrong operand's TypeError into a decode error.
_UNARY: dict[type, Callable[..., object]] = {
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
    ast.Invert: operator.invert,
    ast.Not: operator.not_,
}


def literal_value(node: ast.AST) -> object:
    """The value Python gives a literal expression: constants, signs, arithmetic
    and containers of those. Anything that would need a name, a call or an
    attribute is refused. Used for BFCL's arithmetic and by the executor."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp):
        return _apply(_UNARY[type(node.op)], literal_value(node.operand))
    if isinstance(node, ast.BinOp):
        function = _BINARY[type(node.op)]
        return _apply(function, literal_value(node.left), literal_value(node.right))
    if isinstance(node, ast.List):
        return [literal_value(item) for item in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(literal_value(item) for item in node.elts)
    if isinstance(node, ast.Set):
        return _apply(set, [literal_value(item) for item in node.elts])
    if isinstance(node, ast.Dict):
        pairs = []
        for key, value in zip(node.keys, node.values, strict=True):
            if key is None:  # ``**other``
                raise PythonDecodeError("dict unpacking is not computed")
            pairs.append((literal_value(key), literal_value(value)))
        return _apply(dict, pairs)
    raise PythonDecodeError(f"{type(node).__name__} is not computed from model text")


def _apply(function: Callable[..., object], *values: object) -> object:
    try:
        return function(*values)
    except PythonDecodeError:
        raise
    except (ArithmeticError, TypeError, ValueError, RecursionError, MemoryError) as exc:
        raise PythonDecodeError(f"{type(exc).__name__}: {exc}") from None


def _unary_negation(node: ast.UnaryOp) -> object:
    # Officially every unary operator reads as "minus its operand's .value":
    # only a constant operand has one that negates (others raise).
    operand = node.operand
    if not isinstance(operand, ast.Constant):
        raise PythonDecodeError(f"unary operator on {type(operand).__name__}")
    return _apply(operator.neg, operand.value)


def _subscript_text(node: ast.Subscript) -> str:
    return ast.unparse(node.value) + "[" + ast.unparse(node.slice) + "]"


def argument_value(node: ast.AST) -> object:
    """One argument value, decoded by the official rules (see the module doc)."""
    if isinstance(node, ast.Constant):
        return "..." if node.value is Ellipsis else node.value
    if isinstance(node, ast.UnaryOp):
        return _unary_negation(node)
    if isinstance(node, ast.List):
        return [argument_value(item) for item in node.elts]
    if isinstance(node, ast.Dict):
        keys = [argument_value(key) if key is not None else _fail_none() for key in node.keys]
        values = [argument_value(value) for value in node.values]
        return _apply(dict, list(zip(keys, values, strict=True)))
    if isinstance(node, ast.BinOp):
        return literal_value(node)
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Call):
        return ast.unparse(node) if not node.keywords else decode_call(node)
    if isinstance(node, ast.Tuple):
        return tuple(argument_value(item) for item in node.elts)
    if isinstance(node, ast.Lambda):
        raise PythonDecodeError("a lambda does not decode")
    if isinstance(node, ast.Subscript):
        return _subscript_text(node)
    raise PythonDecodeError(f"Unsupported AST type: {type(node)}")


def _fail_none() -> NoReturn:
    # "{**x}" inside a dict value: the official decoder fails on the missing key.
    raise PythonDecodeError("Unsupported AST type: <class 'NoneType'>")


def function_name(node: ast.AST) -> str:
    """Dotted names joined by "."; a callee that is not a name chain leaves only
    the attribute parts (officially the same)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def decode_call(node: ast.Call) -> dict[str, object]:
    arguments: dict[str | None, object] = {}
    for keyword in node.keywords:
        arguments[keyword.arg] = argument_value(keyword.value)
    return {function_name(node.func): arguments}


def decode_python_calls(text: str) -> list[dict[str, object]]:
    """``[f(a=1), g()]`` -> ``[{"f": {"a": 1}}, {"g": {}}]`` as BFCL's ``ast_parse``
    decodes Python (the caller has already wrapped the text in brackets)."""
    if len(text) > MAX_TEXT_CHARS:
        raise PythonDecodeError(f"reply too long to decode ({len(text)} characters)")
    cleaned = text.strip().strip("'")
    try:
        tree = threadsafe_ast.parse(cleaned, mode="eval")
        body = tree.body
        if isinstance(body, ast.Call):
            return [decode_call(body)]
        elements = getattr(body, "elts", None)
        if elements is None:
            raise PythonDecodeError(f"{type(body).__name__} is not a list of calls")
        decoded = []
        for element in elements:
            if not isinstance(element, ast.Call):
                raise PythonDecodeError(f"{type(element).__name__} is not a call")
            decoded.append(decode_call(element))
        return decoded
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        if isinstance(exc, PythonDecodeError):
            raise
        raise PythonDecodeError(f"{type(exc).__name__}: {exc}") from None
