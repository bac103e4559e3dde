"""A progress bar with rate, ETA and the count of errored samples."""

from __future__ import annotations

import sys
from typing import Any


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
        )
        self._progress.start()
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
