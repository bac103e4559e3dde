"""Cell text of the human tables: percent with an interval, durations, tokens, money."""

from __future__ import annotations

from typing import Any

from harness.report.leaderboard.rows import MetricValue
from harness.results.coverage import PARTIAL_MARK
from harness.results.nonstandard import NONSTANDARD_MARK


def format_seconds(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(round(seconds)), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def format_metric(cell: MetricValue | None, with_interval: bool = True) -> str:
    if cell is None or cell.value is None:
        return cell.note if cell is not None and cell.note else "-"
    text = f"{100 * float(cell.value):.2f}"
    if with_interval and cell.interval is not None:
        text += f" ({100 * cell.interval.low:.1f}–{100 * cell.interval.high:.1f})"
    if cell.partial:
        text += PARTIAL_MARK
    if cell.nonstandard:
        text += NONSTANDARD_MARK
    if cell.note:
        text += cell.note
    return text


def format_cell(value: Any, kind: str) -> str:
    if kind == "metric":
        return format_metric(value)
    if value is None or value == "":
        return "-"
    if kind == "seconds":
        return format_seconds(value)
    if kind == "tokens":
        return f"{int(value):,}"
    if kind == "usd" and isinstance(value, int | float):
        return f"{value:,.2f}" if value >= 0.01 else f"{value:.4f}"
    if kind == "gpu_seconds" and isinstance(value, int | float):
        return f"{value:,.0f}"
    return str(value)
