"""How much of the code says what its values are: ``typing.Any`` per 1,000 lines
of harness/ and adapters/ stays under a ceiling, and no type alias hides an Any
(an alias of ``dict[str, Any]`` used everywhere would pass the count and say
nothing). The ceiling only goes down: lower it when the count drops."""

from __future__ import annotations

import ast
from pathlib import Path

from support import REPO

from harness.boundary.threadsafe_ast import parse

CEILING_PER_1000_LINES = 2.3
# Aliases of Any-holding types that stand for an interface another program
# defines (OpenAI chat messages and tool schemas are open-ended JSON objects).
ALLOWED_ALIASES = {"Message", "ToolSchema"}


def source_files() -> list[Path]:
    return sorted(p for root in ("harness", "adapters") for p in (REPO / root).rglob("*.py"))


def any_nodes(tree: ast.AST) -> list[ast.AST]:
    """Each use of Any: the bare name or ``typing.Any`` (the import itself is no use)."""
    return [
        node
        for node in ast.walk(tree)
        if (isinstance(node, ast.Name) and node.id == "Any")
        or (isinstance(node, ast.Attribute) and node.attr == "Any")
    ]


def count_any() -> tuple[int, int]:
    uses = lines = 0
    for path in source_files():
        text = path.read_text(encoding="utf-8")
        lines += text.count("\n")
        uses += len(any_nodes(parse(text)))
    return uses, lines


def aliases_of_any(tree: ast.Module) -> list[str]:
    """Module-level names bound to a type that holds Any (``X = dict[str, Any]``,
    ``X: TypeAlias = ...``)."""
    found = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        if isinstance(target, ast.Name) and any_nodes(value):
            found.append(target.id)
    return found


def test_any_per_thousand_lines_is_under_the_ceiling() -> None:
    uses, lines = count_any()
    density = 1000 * uses / lines
    assert density <= CEILING_PER_1000_LINES, (
        f"Any is used {uses} times in {lines} lines ({density:.1f} per 1,000), over the "
        f"ceiling of {CEILING_PER_1000_LINES}: say what the values are"
    )


def test_no_alias_hides_an_any() -> None:
    hidden = {
        f"{path.relative_to(REPO)}:{name}"
        for path in source_files()
        for name in aliases_of_any(parse(path.read_text(encoding="utf-8")))
        if name not in ALLOWED_ALIASES
    }
    assert not hidden, f"type aliases that hold Any: {sorted(hidden)}"


def test_the_counter_sees_each_kind_of_use() -> None:
    tree = parse(
        "import typing\nfrom typing import Any\n"
        "X = dict[str, Any]\ndef f(a: Any) -> typing.Any: ...\n"
    )
    assert len(any_nodes(tree)) == 3  # the alias, the parameter, typing.Any; not the import
    assert aliases_of_any(tree) == ["X"]
