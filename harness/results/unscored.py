"""Why a benchmark or subset has no number: none of its records was scored.

An aggregate over no scored record is a formula applied to nothing (a micro F1 of
0 from zero counts, a pass rate of 0 over errors only). Tables, comparisons and
plots show no value and no interval for such a scope, only the reason given here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol


class TrialCounts(Protocol):
    """What is read of a task's trials (``harness.results.stats.TaskOutcome``,
    which imports this module)."""

    @property
    def trials(self) -> Mapping[int, Mapping[str, float]]: ...
    @property
    def errors(self) -> int: ...
    @property
    def infra_errors(self) -> int: ...


PREFIX = "no scored record"


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def reason(infra_errors: int, score_errors: int, excluded: int = 0) -> str:
    """The text shown in place of a number, e.g. 'no scored record: 6 infrastructure errors'."""
    parts = []
    if infra_errors:
        parts.append(_plural(infra_errors, "infrastructure error"))
    if score_errors:
        parts.append(_plural(score_errors, "scoring error"))
    if excluded:
        parts.append(f"{_plural(excluded, 'record')} left out by the benchmark's rule")
    return f"{PREFIX}: {', '.join(parts) or 'not run'}"


def tasks_reason(tasks: Iterable[TrialCounts]) -> str:
    """'' when some trial of ``tasks`` (``harness.results.stats.TaskOutcome``) was scored, else why not."""
    tasks = list(tasks)
    if any(values.get("ok", 1.0) for task in tasks for values in task.trials.values()):
        return ""
    infra = sum(task.infra_errors for task in tasks)
    excluded = sum(getattr(task, "excluded", 0) for task in tasks)
    return reason(infra, sum(task.errors for task in tasks) - infra, excluded)
