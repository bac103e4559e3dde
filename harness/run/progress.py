"""A progress bar with rate, ETA and the count of errored samples."""

from __future__ import annotations

import sys
from typing import Any

from harness.boundary.terminal import safe, unwrapped


class ProgressDisplay:
    def __init__(self, total: int, enabled: bool = True):
        self.total = total
        self.enabled = enabled and sys.stderr.isatty()
        self.errors = 0
        self._progress: Any = None  # rich's Progress, imported when the display starts
        self._task: Any = None

    def start(self, already_done: int = 0) -> None:
        if not self.enabled:
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._progress = Progress(
            TextColumn("[bold]harness[/bold]"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TextColumn("errors: {task.fields[errors]}"),
            TimeElapsedColumn(),
            TextColumn("eta"),
            TimeRemainingColumn(),
            transient=False,
            # The bar's own escape codes go to the terminal itself (harness/boundary/terminal.py).
            console=Console(file=unwrapped(sys.stderr)),
        )
        self._progress.start()
        # rich now shows what is printed above the bar, through proxies of its
        # own that write to the terminal itself: text goes through ours first.
        sys.stdout, sys.stderr = safe(sys.stdout), safe(sys.stderr)
        self._task = self._progress.add_task(
            "run", total=self.total, completed=already_done, errors=0, rate=""
        )

    def advance(self, key: str, ok: bool) -> None:
        if not ok:
            self.errors += 1
        if self._progress is None:
            return
        self._progress.advance(self._task)
        task = self._progress.tasks[0]
        rate = f"{task.speed:.1f}/s" if task.speed else ""
        self._progress.update(self._task, errors=self.errors, rate=rate)

    def stop(self) -> None:
        if self._progress is not None:
            self._progress.stop()
