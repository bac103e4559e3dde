"""Cell text of the human tables: percent with an interval, durations, tokens, money."""

from __future__ import annotations

from harness.report.leaderboard.rows import MetricValue
from harness.results.conditions import DRIFT_MARK
from harness.results.coverage import PARTIAL_MARK
from harness.results.nonstandard import NONSTANDARD_MARK
from harness.results.stats import Interval


def zero_width_text(interval: Interval) -> str:
    """A zero-width interval says how few tasks it rests on, never a range like
    (73.3–73.3): too few tasks, or no variation among them."""
    return f"n={interval.n}" if interval.n is not None else "no spread"


def interval_text(interval: Interval) -> str:
    """'(low–high)' in percent with one decimal; a zero-width interval as '(n=N)'."""
    if interval.zero_width:
        return f"({zero_width_text(interval)})"
    return f"({100 * interval.low:.1f}–{100 * interval.high:.1f})"


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
        text += " " + interval_text(cell.interval)
    if cell.partial:
        text += PARTIAL_MARK
    if cell.nonstandard:
        text += NONSTANDARD_MARK
    if cell.drift:
        text += DRIFT_MARK
    if cell.note:
        text += cell.note
    return text


def format_cell(value: object, kind: str) -> str:
    if kind == "metric":
        return format_metric(value if isinstance(value, MetricValue) else None)
    if value is None or value == "":
        return "-"
    if kind == "seconds" and isinstance(value, int | float):
        return format_seconds(value)
    if kind == "tokens" and isinstance(value, int | float | str):
        return f"{int(value):,}"
    if kind == "usd" and isinstance(value, int | float):
        return f"{value:,.2f}" if value >= 0.01 else f"{value:.4f}"
    if kind == "gpu_seconds" and isinstance(value, int | float):
        return f"{value:,.0f}"
    return str(value)
