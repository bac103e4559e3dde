"""``ast.parse`` behind one lock for the whole process.

CPython 3.11 (up to 3.11.8; python/cpython#106905) keeps the depth counter of
the C code that turns a parse tree into Python objects per interpreter, not per
thread: two threads parsing at once can make it raise ``SystemError: AST
constructor recursion depth mismatch`` for a valid expression. A run parses on
the event loop (calls written as text) and in its tool threads (an adapter's
executor for calls) at the same time, so every parse in the harness and its
adapters goes through ``parse`` (tests/package/test_threadsafe_ast.py checks
that). The texts are short and the GIL serialises parsing anyway: the lock
costs nothing measurable.
"""

from __future__ import annotations

import ast
import threading
from typing import Literal, overload

# Re-entrant: a finalizer that runs inside a parse may parse again on the same thread.
_LOCK = threading.RLock()


@overload
def parse(
    source: str, mode: Literal["exec"] = "exec", filename: str = "<unknown>"
) -> ast.Module: ...
@overload
def parse(source: str, mode: Literal["eval"], filename: str = "<unknown>") -> ast.Expression: ...
@overload
def parse(source: str, mode: str, filename: str = "<unknown>") -> ast.AST: ...
def parse(source: str, mode: str = "exec", filename: str = "<unknown>") -> ast.AST:
    """``ast.parse(source, filename, mode)``, one thread at a time."""
    with _LOCK:
        return ast.parse(source, filename=filename, mode=mode)
