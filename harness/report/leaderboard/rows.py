"""What a leaderboard row holds: one run (or published row), its benchmarks and composite.

A benchmark of a row is a ``harness.results.entries.BenchmarkEntry``, named here too."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from harness.results.entries import CI_TOLERANCE, BenchmarkCounts, BenchmarkEntry, metric_interval
from harness.results.headlines import benchmark_label
from harness.results.pricing import MoneyCost
from harness.results.stats import Interval, TaskOutcome

if TYPE_CHECKING:
    import pandas as pd

    from harness.results.frames import RunOutcomes

FRACTION = "fraction"  # the unit of metrics in CSV and JSON (0 to 1)
STANDARD_FEEDBACK = "standard"
__all__ = [
    "CI_TOLERANCE",
    "FRACTION",
    "STANDARD_FEEDBACK",
    "BenchmarkCounts",
    "BenchmarkEntry",
    "Composite",
    "Cost",
    "MetricValue",
    "RunResult",
    "metric_interval",
]


@dataclass
class MetricValue:
    value: float | None
    interval: Interval | None = None
    note: str = ""  # shown instead of the value when there is none
    partial: bool = False  # over less than the official set: marked PARTIAL_MARK
    nonstandard: bool = False  # not the benchmark's own configuration: NONSTANDARD_MARK
    drift: bool = False  # other score conditions than its column's: DRIFT_MARK


@dataclass
class Composite:
    """A composite across benchmarks (``harness.results.composite``), when all it names are present."""

    value: float | None
    interval: Interval | None = None
    missing: list[str] = field(default_factory=list)
    caveats: list[str] = field(default_factory=list)
    published: bool = False

    def metric(self) -> MetricValue:
        if self.value is None:
            if not self.missing:
                return MetricValue(None)
            absent = ", ".join(benchmark_label(b) for b in self.missing)
            return MetricValue(None, note=f"partial (no {absent})")
        return MetricValue(self.value, self.interval, partial=bool(self.caveats))


@dataclass
class Cost:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_calls: int = 0  # model calls answered by the response cache
    wall_s: float | None = None
    by_role: dict[str, dict[str, int]] = field(default_factory=dict)
    money: MoneyCost | None = None  # USD, GPU-seconds, rehearsal ratio (harness.results.pricing)


@dataclass
class RunResult:
    """A leaderboard row: a run of the harness, or a published row (``reference`` set)."""

    name: str
    model: str
    strategy: str
    env_feedback: str
    user_model: str
    judge_model: str
    benchmarks: dict[str, BenchmarkEntry]
    composite: Composite
    cost: Cost | None = None
    step: int | None = None
    strategy_settings: dict[str, object] = field(default_factory=dict)
    reference: str | None = None
    extra: dict[str, float] = field(default_factory=dict)
    note: str = ""
    run_dir: Path | None = None
    tasks: dict[str, TaskOutcome] = field(default_factory=dict, repr=False)
    # The run's tasks and record table (harness.results.frames.RunOutcomes), None
    # for published rows.
    outcomes: RunOutcomes | None = field(default=None, repr=False)
    fingerprint: str | None = None  # of the weights evaluated (models/fingerprint.py)

    @property
    def records(self) -> pd.DataFrame | None:
        """The run's record table (``harness.results.frames.records_of``), built
        when first read; None for published rows."""
        return None if self.outcomes is None else self.outcomes.records

    @property
    def is_reference(self) -> bool:
        return self.reference is not None
