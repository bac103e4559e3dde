"""Every parse of Python text in the harness and its adapters goes through
``harness.boundary.threadsafe_ast`` (CPython 3.11's AST conversion is not thread-safe:
python/cpython#106905), and that parse lets one thread in at a time.
(``ast.literal_eval`` is only ever given parsed nodes, which it walks.)"""

from __future__ import annotations

import ast
import threading
import time

from support import REPO

from harness.boundary import threadsafe_ast


def test_no_module_parses_python_text_around_the_lock():
    found = []
    for folder in ("harness", "adapters"):
        for path in sorted((REPO / folder).rglob("*.py")):
            if path == REPO / "harness" / "boundary" / "threadsafe_ast.py":
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == "ast"
                    and node.func.attr == "parse"
                ):
                    found.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert found == []


def test_a_parse_waits_while_another_thread_parses():
    finished = threading.Event()

    def parse_in_another_thread():
        threadsafe_ast.parse("f(a=1)", mode="eval")
        finished.set()

    with threadsafe_ast._LOCK:  # as if this thread were inside a parse
        worker = threading.Thread(target=parse_in_another_thread)
        worker.start()
        time.sleep(0.2)
        assert not finished.is_set()
    worker.join(timeout=5)
    assert finished.is_set()


def test_the_same_thread_may_parse_inside_a_parse():
    # A finalizer that runs during a parse and parses again must not deadlock.
    with threadsafe_ast._LOCK:
        tree = threadsafe_ast.parse("[1, (2, 3)]", mode="eval")
    assert isinstance(tree.body, ast.List)
