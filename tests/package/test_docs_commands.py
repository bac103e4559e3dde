"""The README and docs/ stay true to the CLI: every `harness ...` command they show
parses with the current parser (no unknown command, no unknown flag), `--help` of
every command they name exits 0, and every relative link points at a file that
exists.

Commands come from ```bash / ```sh / ``` blocks (line continuations joined, comments
stripped, one shell line at a time, quoted `uv run harness ...` inside a line too) and
from inline code spans that start with `harness `. Placeholders (PATH, RUN, `$I/$N`,
`results/<run>`) stay as values. A span, or a block line that elides arguments with
`...`, is a fragment: it must name a real command and real flags, but may leave out
required arguments or a flag's value.
"""

from __future__ import annotations

import argparse
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest
from support import REPO, TOY_ADAPTER

from harness.cli import build_parser, main
from harness.errors import ConfigError

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"^```([\w+-]*)[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
SHELL_FENCES = {"", "bash", "sh", "shell", "console"}
INLINE = re.compile(r"`(harness\s[^`]+)`")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
SHELL_OPERATORS = {"|", "||", "&&", ";", "&", ">", ">>", "<", "2>", "2>&1"}
# What argparse says when a fragment leaves out what a full command needs.
# A placeholder (all capitals) given where argparse takes one of its choices.
PLACEHOLDER_CHOICE = re.compile(r"invalid choice: '[A-Z][A-Z0-9_]*'")
INCOMPLETE = ("the following arguments are required", "expected one argument")


@dataclass(frozen=True)
class Example:
    """One `harness` command shown in a document: its arguments after `harness`."""

    where: str  # file:line, for the failure message
    tokens: tuple[str, ...]
    fragment: bool


def code_blocks(text: str) -> list[tuple[int, str, str]]:
    """(line of the block's first line, language, body) of every fenced block."""
    return [
        (text.count("\n", 0, match.start(2)) + 1, match.group(1).lower(), match.group(2))
        for match in FENCE.finditer(text)
    ]


def shell_lines(body: str, first_line: int) -> list[tuple[int, str]]:
    """Logical shell lines of a block: continuations joined, with their first line."""
    lines: list[tuple[int, str]] = []
    pending: list[str] = []
    start = first_line
    for number, line in enumerate(body.splitlines(), first_line):
        if not pending:
            start = number
        if line.rstrip().endswith("\\"):
            pending.append(line.rstrip()[:-1])
            continue
        lines.append((start, " ".join([*pending, line])))
        pending = []
    if pending:
        lines.append((start, " ".join(pending)))
    return lines


def commands_in(tokens: list[str]) -> list[list[str]]:
    """The argument lists of every `harness` invocation in one split shell line:
    `harness ...`, `uv run harness ...` or `VAR=value ... harness ...` up to a shell
    operator, and those inside a quoted argument (`--wrap "uv run harness ..."`)."""
    found: list[list[str]] = []
    for index, token in enumerate(tokens):
        if token != "harness":
            if " " in token and re.search(r"(^|\s)harness\s", token):
                found.extend(commands_in(shlex.split(token, comments=True)))
            continue
        before = tokens[:index]
        if before[-2:] == ["uv", "run"]:
            before = before[:-2]
        if all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", word) for word in before):
            rest: list[str] = []
            for word in tokens[index + 1 :]:
                if word in SHELL_OPERATORS:
                    break
                rest.append(word)
            found.append(rest)
    return found


def examples(path: Path) -> list[Example]:
    return examples_in(path.read_text(encoding="utf-8"), path.relative_to(REPO).as_posix())


def examples_in(text: str, name: str) -> list[Example]:
    found: list[Example] = []
    for first_line, language, body in code_blocks(text):
        if language not in SHELL_FENCES:
            continue
        for number, line in shell_lines(body, first_line):
            if not re.search(r"(^|[\s\"'])harness\s", line):
                continue  # a layout tree or output, not a command
            for tokens in commands_in(shlex.split(line, comments=True)):
                elided = "..." in tokens
                kept = tuple(token for token in tokens if token != "...")
                found.append(Example(f"{name}:{number}", kept, elided))
    prose = FENCE.sub(lambda match: "\n" * match.group(0).count("\n"), text)
    for match in INLINE.finditer(prose):
        number = prose.count("\n", 0, match.start()) + 1
        tokens = tuple(token for token in shlex.split(match.group(1))[1:] if token != "...")
        found.append(Example(f"{name}:{number}", tokens, True))
    return found


@pytest.fixture(scope="module")
def parser() -> argparse.ArgumentParser:
    # The toy adapter contributes the command docs/adapters.md shows (`toy-targets`).
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HARNESS_ADAPTERS", TOY_ADAPTER)
        yield build_parser()


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("the harness parser has no commands")


def problem(example: Example, parser: argparse.ArgumentParser) -> str | None:
    """Why the example does not parse, or None."""
    commands = subcommands(parser)
    if not example.tokens:
        return "no command"
    command, *arguments = example.tokens
    if command.startswith("-"):  # `harness --help`: the top-level parser's own flags
        unknown = [t for t in example.tokens if t not in parser._option_string_actions]
        return f"unknown top-level flag {unknown[0]!r}" if unknown else None
    if command not in commands:
        return f"unknown command {command!r}"
    flags = commands[command]._option_string_actions
    for token in arguments:
        if token.startswith("--") and token.split("=", 1)[0] not in flags:
            return f"unknown flag {token.split('=', 1)[0]!r} for `harness {command}`"
    try:
        parser.parse_args(list(example.tokens))
    except ConfigError as exc:
        if example.fragment and any(text in str(exc) for text in INCOMPLETE):
            return None
        if PLACEHOLDER_CHOICE.search(str(exc)):
            return None  # `harness toy-targets SUBSET`: a placeholder where a choice goes
        return str(exc)
    return None


ALL_EXAMPLES = [example for path in DOCS for example in examples(path)]


def test_the_documents_show_commands():
    """The extraction finds what it must: a block command, a continued line, one
    inside quotes, inline spans; and every doc page is read."""
    shown = {(example.tokens[0] if example.tokens else "") for example in ALL_EXAMPLES}
    assert {"run", "compare", "leaderboard", "plot", "report", "sweep", "merge"} <= shown
    merge = [e for e in ALL_EXAMPLES if e.tokens[:1] == ("merge",) and not e.fragment]
    assert merge and "--out" in merge[0].tokens  # from `--wrap "uv run harness merge ..."`
    continued = [e for e in ALL_EXAMPLES if "--serve-timeout" in e.tokens]
    assert continued and continued[0].tokens[0] == "run" and "--tool-parser" in continued[0].tokens
    assert any(e.fragment for e in ALL_EXAMPLES)
    assert {path.name for path in DOCS} >= {"README.md", "adapters.md"}


@pytest.mark.parametrize(
    "example", ALL_EXAMPLES, ids=lambda e: f"{e.where} {' '.join(e.tokens)[:40]}"
)
def test_documented_command_parses(example: Example, parser: argparse.ArgumentParser):
    assert problem(example, parser) is None, f"{example.where}: harness {' '.join(example.tokens)}"


def test_the_check_catches_a_wrong_command(parser: argparse.ArgumentParser):
    """The check fails on what the documents must not show."""
    text = (
        "```bash\nuv run harness run --suite smoke --model oracle --no-such-flag 1\n"
        "harness frobnicate --out x\nuv run harness run --suite smoke \\\n    --modle m\n```\n"
        "and `harness compare A B --bogus`, `harness merge --out`, `harness --version`\n"
    )
    found = examples_in(text, "probe.md")
    verdicts = [problem(example, parser) for example in found]
    assert verdicts[0] is not None and "--no-such-flag" in verdicts[0]
    assert verdicts[1] is not None and "frobnicate" in verdicts[1]
    assert verdicts[2] is not None and "--modle" in verdicts[2]
    assert verdicts[3] is not None and "--bogus" in verdicts[3]
    assert verdicts[4] is None  # a fragment: `merge` takes --out, its value left out
    assert verdicts[5] is not None and "--version" in verdicts[5]
    assert problem(Example("probe", ("toy-targets", "SUBSET"), True), parser) is None
    assert problem(Example("probe", ("toy-targets", "subset"), True), parser) is not None
    incomplete = Example("probe", ("run", "--model", "oracle"), False)
    assert problem(incomplete, parser) is not None  # a full block command needs --suite


def test_help_of_every_documented_command_exits_0(capsys, monkeypatch):
    monkeypatch.setenv("HARNESS_ADAPTERS", TOY_ADAPTER)
    commands = sorted(
        {e.tokens[0] for e in ALL_EXAMPLES if e.tokens and not e.tokens[0].startswith("-")}
    )
    for command in [*commands, None]:
        argv = [command, "--help"] if command else ["--help"]
        with pytest.raises(SystemExit) as exit_info:
            main(argv)
        assert exit_info.value.code == 0, command
        assert "usage: harness" in capsys.readouterr().out, command


def relative_links(path: Path) -> list[tuple[int, str]]:
    text = path.read_text(encoding="utf-8")
    prose = FENCE.sub(lambda match: "\n" * match.group(0).count("\n"), text)
    return [
        (prose.count("\n", 0, match.start()) + 1, match.group(1))
        for match in LINK.finditer(prose)
        if not re.match(r"[a-z][a-z0-9+.-]*:", match.group(1))
        and not match.group(1).startswith("#")
    ]


def test_relative_links_resolve():
    broken = [
        f"{path.relative_to(REPO)}:{line}: {target}"
        for path in DOCS
        for line, target in relative_links(path)
        if not (path.parent / target.split("#", 1)[0]).exists()
    ]
    assert not broken
    assert "docs/running.md" in {t for _, t in relative_links(REPO / "README.md")}


def test_every_doc_page_is_linked_from_the_readme():
    linked = {
        (REPO / target.split("#", 1)[0]).resolve()
        for _, target in relative_links(REPO / "README.md")
    }
    pages = {page.resolve() for page in (REPO / "docs").glob("*.md")}
    assert pages <= linked, sorted(str(p.relative_to(REPO)) for p in pages - linked)


def test_the_readme_is_short_and_keeps_its_two_commands():
    """A newcomer's five minutes: at most 180 lines, set-up in `make demo` and
    `make test` (the command .ci/run runs as the README's test command)."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 180
    blocks = [body for _, language, body in code_blocks(readme) if language in SHELL_FENCES]
    setup = [line.split("#")[0].strip() for line in blocks[0].splitlines()]
    assert setup == ["make demo", "make test"]
    assert "make test" in (REPO / ".ci" / "run").read_text(encoding="utf-8")
