"""BFCL's execution strings run against the simulators, without eval().

The official executor takes call strings such as ``cd(folder='docs')`` (built
from the model's decoded calls, or the gold answers), prefixes each method name
with its instance and ``eval()``s the string. Here the string is parsed with
``ast`` and interpreted: literals as Python reads them, and calls only to public
methods of the entry's classes, executed in Python's evaluation order (callee,
positional arguments, keyword arguments, then the call), so that a call nested
in an argument runs first and passes its return value, as under eval().

What eval() would resolve besides the methods (Python builtins, the executor
module's globals such as ``json``) is an error here, reported with eval()'s
NameError text; see DEVIATIONS.md.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

from harness.boundary import threadsafe_ast

from .python_decoder import PythonDecodeError, literal_value
from .simulators import REFUSED_NAMES, SimulatorSet, format_result

# Calls nested deeper than this are refused (eval() would recurse as deep).
MAX_NESTED_CALLS = 50


class ExecutionError(Exception):
    """A failure eval() would raise; its text becomes the call's result."""


def _refused_name(text: str, sims: SimulatorSet) -> str | None:
    """The official pre-eval check on the called name (after the instance prefix)."""
    head = text.split("(")[0] if "(" in text else text
    parts = head.split(".")
    if sims.has_method(parts[-1].strip()):
        # The executor prefixed the method with "<instance>.": its check then
        # reads the part after the first dot.
        parts = [*parts[:-1], "instance", parts[-1]]
    candidate = parts[1] if len(parts) > 1 else parts[0]
    return candidate if candidate in REFUSED_NAMES else None


def _root_name(node: ast.AST) -> str:
    """The name eval() looks up first in a callee such as ``a.b``, ``f(x).g``."""
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else type(node).__name__


class _Interpreter:
    def __init__(self, sims: SimulatorSet):
        self.sims = sims
        self.depth = 0

    def value(self, node: ast.AST) -> object:
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.Name):
            raise ExecutionError(f"name '{node.id}' is not defined")
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            items = [self.value(item) for item in node.elts]
            if isinstance(node, ast.List):
                return items
            if isinstance(node, ast.Tuple):
                return tuple(items)
            return self._python(set, items)
        if isinstance(node, ast.Dict):
            pairs = []
            for key, value in zip(node.keys, node.values, strict=True):
                if key is None:  # ``**other``
                    raise ExecutionError("dict unpacking is not supported")
                pairs.append((self.value(key), self.value(value)))
            return self._python(dict, pairs)
        try:
            return literal_value(node)  # constants, signs, arithmetic
        except PythonDecodeError as exc:
            raise ExecutionError(str(exc)) from None

    @staticmethod
    def _python(function: Callable[..., object], value: object) -> object:
        try:
            return function(value)
        except TypeError as exc:
            raise ExecutionError(str(exc)) from None

    def call(self, node: ast.Call) -> object:
        self.depth += 1
        if self.depth > MAX_NESTED_CALLS:
            raise ExecutionError("calls nested too deeply")
        if not isinstance(node.func, ast.Name):
            # "a.b(...)": eval() fails on the unknown root name first.
            raise ExecutionError(f"name '{_root_name(node.func)}' is not defined")
        name = node.func.id
        if not self.sims.has_method(name):
            raise ExecutionError(f"name '{name}' is not defined")
        args = []
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                raise ExecutionError("starred arguments are not supported")
            args.append(self.value(arg))
        kwargs = {}
        for keyword in node.keywords:
            if keyword.arg is None:
                raise ExecutionError("keyword unpacking is not supported")
            kwargs[keyword.arg] = self.value(keyword.value)
        try:
            return self.sims.call_method(name, args, kwargs)
        except Exception as exc:  # any failure inside a simulator is the model's problem
            raise ExecutionError(str(exc)) from None


# The official executor's pattern for a called name: it rewrites every match in
# the whole string, also inside string arguments, and drops the whitespace
# between the name and "(" ("itself (maybe)" becomes "itself(maybe)").
_CALLED_NAME = re.compile(r"\b([a-zA-Z_]\w*)\s*(?=\()")


def execute_string(text: str, sims: SimulatorSet) -> tuple[str, bool]:
    """One execution string as the official executor runs it: (result text, failed)."""
    # As officially, minus the instance prefix it also writes before method names.
    text = _CALLED_NAME.sub(lambda match: match.group(1), text)
    refused = _refused_name(text, sims)
    if refused is not None:
        return f"Error during execution: Function call {refused} is not allowed.", True
    try:
        tree = threadsafe_ast.parse(text, mode="eval", filename="<string>")
        value = _Interpreter(sims).value(tree.body)
    except ExecutionError as exc:
        return f"Error during execution: {exc}", True
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return f"Error during execution: {exc}", True
    return format_result(value), False


def execute_strings(texts: list[str], sims: SimulatorSet) -> list[str]:
    return [execute_string(text, sims)[0] for text in texts]
