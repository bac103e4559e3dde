"""What a run is doing, while it runs: ``RunProgress`` keeps the state, and
``ProgressReporter`` shows it.

On a terminal (stderr a tty) a live panel: done/total, the rate and the ETA from
recent throughput, the samples and model calls in flight, and the errors by kind
with the latest message. Elsewhere (Slurm, nohup, ``> log 2>&1``) a progress line
every ``interval_s`` seconds and at each 10% of the work (at most one every
``STEP_MIN_GAP_S``), so a log shows the run moving. Either way, each kind of
error is said once, when it is first seen, with its likely cause
(harness/run/error_kinds.py); the end-of-run summary counts them.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

from harness.boundary.terminal import safe, terminal_text, unwrapped
from harness.models.base import CallMeter
from harness.run.error_kinds import ErrorTally, KindCount, fit
from harness.store.records import OK, Record

if TYPE_CHECKING:
    from rich.console import Group, RenderableType
    from rich.live import Live

DEFAULT_INTERVAL_S = 30.0
# A line at a tenth of the work waits this long (or the interval, if shorter) after
# the previous such line: a run of a few seconds logs its summary only, not ten lines.
STEP_MIN_GAP_S = 5.0
# The rate is over the samples finished in this window (or since the start).
RATE_WINDOW_S = 120.0
PANEL_WIDTH = 100


def clock_text(seconds: float | None) -> str:
    if seconds is None:
        return "-:--:--"
    seconds = int(max(seconds, 0))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


class RunProgress:
    """Done and total, recent throughput, what is in flight, errors by kind."""

    def __init__(
        self,
        total: int,
        already_done: int = 0,
        calls: CallMeter | None = None,
        api_base: str | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.total = total
        self.done = already_done
        self.calls = calls or CallMeter()
        self.errors = ErrorTally(api_base)
        self.in_flight: dict[str, float] = {}  # key -> when it started
        self._clock = clock
        self.started_at = clock()
        self._finished_at: deque[float] = deque()

    def now(self) -> float:
        return self._clock()

    def started(self, key: str) -> None:
        self.in_flight[key] = self._clock()

    def finished(self, record: Record) -> KindCount | None:
        """Count one record; its error kind's tally when this is the first of that kind."""
        self.in_flight.pop(record.key, None)
        self.done += 1
        now = self._clock()
        self._finished_at.append(now)
        while self._finished_at and now - self._finished_at[0] > RATE_WINDOW_S:
            self._finished_at.popleft()
        if record.status == OK:
            return None
        tally = self.errors.add(record.error, record.status)
        return tally if tally.count == 1 else None

    @property
    def elapsed_s(self) -> float:
        return self._clock() - self.started_at

    def rate(self) -> float | None:
        """Samples a second over the recent window; None before the first finishes."""
        now = self._clock()
        recent = [t for t in self._finished_at if now - t <= RATE_WINDOW_S]
        if not recent:
            return None
        return len(recent) / max(min(RATE_WINDOW_S, now - self.started_at), 1e-9)

    def eta_s(self) -> float | None:
        rate = self.rate()
        return (self.total - self.done) / rate if rate else None

    def oldest_in_flight(self) -> tuple[str, float] | None:
        if not self.in_flight:
            return None
        key = min(self.in_flight, key=self.in_flight.__getitem__)
        return key, self._clock() - self.in_flight[key]

    def counts_text(self) -> str:
        share = f" ({100 * self.done // self.total}%)" if self.total else ""
        rate = self.rate()
        rate_text = "-" if rate is None else f"{rate:.0f}" if rate >= 10 else f"{rate:.2f}"
        return (
            f"{self.done}/{self.total}{share} in {clock_text(self.elapsed_s)}, {rate_text}/s, "
            f"eta {clock_text(self.eta_s())}"
        )

    def in_flight_text(self, oldest: bool = True) -> str:
        text = f"in flight: {len(self.in_flight)} samples, {self.calls.in_flight} calls"
        found = self.oldest_in_flight() if oldest else None
        if found is not None:
            text += f" (oldest {found[0]}, {clock_text(found[1])})"
        return text

    def errors_text(self) -> str:
        if not self.errors.kinds:
            return "0 errors"
        kinds = ", ".join(f"{t.kind.kind} {t.count}" for t in self.errors.kinds.values())
        return f"{self.errors.total} errors ({kinds})"

    def line(self) -> str:
        """One progress line for a log."""
        return (
            f"progress: {self.counts_text()}; {self.in_flight_text(oldest=False)}; "
            f"{self.errors_text()}"
        )


class _Panel:
    """The live panel's content, rebuilt at each refresh."""

    def __init__(self, progress: RunProgress):
        self.progress = progress

    def __rich__(self) -> Group:
        from rich.console import Group
        from rich.progress_bar import ProgressBar
        from rich.table import Table
        from rich.text import Text

        progress = self.progress
        head = Table.grid(padding=(0, 1))
        head.add_row(
            Text("harness", style="bold"),
            ProgressBar(total=max(progress.total, 1), completed=progress.done, width=30),
            Text(progress.counts_text()),
        )
        lines: list[RenderableType] = [head, Text(fit(progress.in_flight_text(), PANEL_WIDTH))]
        for tally in progress.errors.kinds.values():
            text = f"  {tally.kind.kind} × {tally.count}: {tally.latest}"
            lines.append(Text(terminal_text(fit(text, PANEL_WIDTH)), style="red"))
        return Group(*lines)


class ProgressReporter:
    """Shows a run's progress: a live panel on a terminal, else progress lines;
    first-seen error kinds either way. ``enabled`` False (``--quiet``): only
    counts, nothing shown. The runner calls ``started`` and ``finished``."""

    def __init__(
        self,
        progress: RunProgress,
        enabled: bool = True,
        interval_s: float = DEFAULT_INTERVAL_S,
        terminal: bool | None = None,
    ):
        self.progress = progress
        self.enabled = enabled
        self.interval_s = interval_s
        self.terminal = sys.stderr.isatty() if terminal is None else terminal
        self._live: Live | None = None  # when the panel is up
        self._ticker: asyncio.Task[None] | None = None
        self._last_step = self._step()
        self._last_step_at = progress.now()
        self._saved_streams: tuple[TextIO, TextIO] | None = None

    def _step(self) -> int:
        """Tenths of the work done."""
        total = self.progress.total
        return 10 * self.progress.done // total if total else 10

    def say(self, line: str) -> None:
        """A line above the panel (or on stderr)."""
        if self._live is not None:
            from rich.text import Text

            self._live.console.print(Text(terminal_text(line)), soft_wrap=True)
        else:
            print(line, file=sys.stderr, flush=True)

    def start(self) -> None:
        if not self.enabled:
            return
        if self.terminal:
            self._start_panel()
        self._ticker = asyncio.get_running_loop().create_task(self._tick())

    def _start_panel(self) -> None:
        from rich.console import Console
        from rich.live import Live

        # The panel's own escape codes go to the terminal itself (harness/boundary/terminal.py).
        console = Console(file=unwrapped(sys.stderr))
        self._live = Live(_Panel(self.progress), console=console, refresh_per_second=4)
        self._saved_streams = sys.stdout, sys.stderr
        self._live.start()
        # rich now shows what is printed above the panel, through proxies of its
        # own that write to the terminal itself: text goes through ours first.
        sys.stdout, sys.stderr = safe(sys.stdout), safe(sys.stderr)

    async def _tick(self) -> None:
        """A progress line every ``interval_s`` (without a terminal)."""
        while True:
            await asyncio.sleep(self.interval_s)
            if self._live is None:
                self.say(self.progress.line())

    def started(self, key: str) -> None:
        self.progress.started(key)

    def finished(self, record: Record) -> None:
        first = self.progress.finished(record)
        if not self.enabled:
            return
        if first is not None:
            self.say(f"error ({first.kind.kind}, first seen in {record.key}): {first.kind.cause}")
        step = self._step()
        if step > self._last_step:
            self._last_step = step
            gap = min(STEP_MIN_GAP_S, self.interval_s)
            if self._live is None and self.progress.now() - self._last_step_at >= gap:
                self._last_step_at = self.progress.now()
                self.say(self.progress.line())

    def stop(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
            self._ticker = None
        if self._live is not None:
            self._live.stop()
            self._live = None
            if self._saved_streams is not None:
                sys.stdout, sys.stderr = self._saved_streams
                self._saved_streams = None
