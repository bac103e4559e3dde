"""What the harness shows on a terminal never acts on the terminal.

Text from outside reaches stdout and stderr in many ways: model ids a server
lists, a server's error body in a refusal, the end of a server's log, an
exception's message, a library's log line. A control character in it acts on
the terminal (``ESC[2J`` clears the screen, ``ESC]0;...BEL`` sets the window
title, a C1 ``CSI`` does what ``ESC[`` does), and a bidirectional control
(U+202E) shows text in another order than it is. ``terminal_text`` writes each
such character as its escape (``\\x1b``, ``\\u202e``), visibly.

It is applied once, to everything written: the CLI's ``sys.stdout`` and
``sys.stderr`` are ``TerminalSafeStream``s for the whole command
(``terminal_safe_streams``), so no print site can forget it. The harness's own
terminal control (the progress bar) writes to the stream underneath
(``unwrapped``).
"""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Iterable, Iterator
from typing import Any, TextIO

# C0 controls but newline and tab (carriage return too: it rewrites the line),
# DEL, C1 controls, the bidirectional controls (embeddings, overrides, isolates,
# marks), and lone surrogates (which a UTF-8 stream cannot write).
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_text(text: str) -> str:
    """``text`` with every character that would act on a terminal, or reorder
    what it shows, written as its escape; everything else, newlines and tabs
    included, as it is."""
    return _UNSAFE.sub(_escape, text)


class TerminalSafeStream:
    """A text stream that writes ``terminal_text`` of whatever it is given to
    ``raw``; everything else (``isatty``, ``fileno``, ``encoding`` ...) is
    ``raw``'s."""

    def __init__(self, raw: TextIO):
        self.raw = raw

    def write(self, text: str) -> int:
        self.raw.write(terminal_text(text))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        self.raw.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)


def wrap_line(line: str, width: int = 100) -> list[str]:
    """``line`` wrapped to ``width`` columns, its continuation lines indented by two; a
    path or URL longer than the width stays whole on its own line."""
    import textwrap

    wrapped = textwrap.wrap(
        line, width, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False
    )
    return wrapped or [line]


def unwrapped(stream: TextIO) -> TextIO:
    """The stream under a TerminalSafeStream (for the harness's own terminal
    control), or ``stream`` itself."""
    while isinstance(stream, TerminalSafeStream):
        stream = stream.raw
    return stream


def safe(stream: Any) -> Any:
    """``stream`` as a TerminalSafeStream (once)."""
    return stream if isinstance(stream, TerminalSafeStream) else TerminalSafeStream(stream)


@contextlib.contextmanager
def terminal_safe_streams() -> Iterator[None]:
    """``sys.stdout`` and ``sys.stderr`` write ``terminal_text`` inside the block
    (one command); the streams that were there are back after it."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = safe(saved[0]), safe(saved[1])
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
