"""SIGTERM handled like Ctrl-C, and which of the two stopped the command.

A run stopped by SIGTERM (Slurm's time limit, ``kill``, a container stop) must
flush and close what it writes exactly as after Ctrl-C, then say so in one line
and exit with 143 (128 + SIGTERM), as a shell reports a process ended by it.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

_received: set[int] = set()


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Handle SIGTERM like Ctrl-C while the block runs, so that every ``finally``
    and ``with`` on the way out runs (the default action ends the process on
    the spot and would leave a server running or a file unflushed). Only the
    main thread can handle signals; elsewhere this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_sigterm(signum: int, frame: FrameType | None) -> None:
        _received.add(signum)
        # The SIGINT handler in force: asyncio.run's cancels the run gracefully
        # (which then ends in KeyboardInterrupt); Python's default raises at once.
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler):
            handler(signal.SIGINT, frame)
            return
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def was_terminated() -> bool:
    """Whether SIGTERM arrived since the last ``forget()``."""
    return signal.SIGTERM in _received


def forget() -> None:
    _received.clear()
