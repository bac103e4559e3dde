"""What a leaderboard row holds: one run (or published row), its benchmarks and composite."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.results import stats
from harness.results.coverage import Coverage
from harness.results.headlines import benchmark_label
from harness.results.pricing import MoneyCost
from harness.results.stats import Estimate, Interval, TaskOutcome

if TYPE_CHECKING:
    import pandas as pd

FRACTION = "fraction"  # the unit of metrics in CSV and JSON (0 to 1)
# A recomputed metric must match the official one this closely before its CI is shown.
CI_TOLERANCE = 5e-4
STANDARD_FEEDBACK = "standard"


@dataclass
class MetricValue:
    value: float | None
    interval: Interval | None = None
    note: str = ""  # shown instead of the value when there is none
    partial: bool = False  # over less than the official set: marked PARTIAL_MARK
    nonstandard: bool = False  # not the benchmark's own configuration: NONSTANDARD_MARK


@dataclass
class BenchmarkEntry:
    """One benchmark of one run (or of one published row)."""

    benchmark: str
    headline: dict[str, float | None]
    primary: str | None
    interval: Interval | None = None
    ci_note: str = ""
    replicates: Any = None  # bootstrap replicates of the primary metric
    counts: dict[str, int] = field(default_factory=dict)
    missing: int = 0
    not_run: dict[str, str] = field(default_factory=dict)  # subset -> reason
    notes: list[str] = field(default_factory=list)
    subsets: dict[str, Any] = field(default_factory=dict)
    unscored: str = ""  # why the benchmark has no number (harness.results.unscored), if it has none
    unscored_subsets: dict[str, str] = field(default_factory=dict)  # subset -> why
    coverage: Coverage | None = None  # what the numbers cover; None for published rows
    # headline metric -> the subsets it is computed from (Adapter.metric_subsets)
    metric_scopes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # metric -> why it has no number: none of the subsets it is over was run
    not_run_metrics: dict[str, str] = field(default_factory=dict)
    # subset -> k -> pass^k with its interval (benchmarks that report pass^k)
    pass_hat_k: dict[str, dict[int, Estimate]] = field(default_factory=dict)
    # settings that are not the benchmark's own (harness.results.nonstandard)
    nonstandard: list[str] = field(default_factory=list)

    @property
    def primary_value(self) -> float | None:
        return None if self.primary is None else self.headline.get(self.primary)

    @property
    def partial(self) -> bool:
        """Whether the headline is over less than the benchmark's official set."""
        return self.coverage is not None and self.coverage.partial

    def metric_coverage(self, metric: str) -> Coverage | None:
        """What one headline metric covers: the benchmark's coverage itself when the
        metric is over all of its official subsets, else that of its subsets."""
        if self.coverage is None:
            return None
        found = self.coverage.for_metric(metric, self.metric_scopes.get(metric))
        whole = found.official_subsets == self.coverage.official_subsets and (
            found.official_subsets or len(found.subsets) == len(self.coverage.subsets)
        )
        return self.coverage if whole else found

    def metric_partial(self, metric: str) -> bool:
        """Whether one headline metric (of the benchmark or of a subset) is partial."""
        coverage = self.metric_coverage(metric)
        return coverage is not None and coverage.partial

    def why_none(self, metric: str) -> str:
        """Why ``metric`` has no value because nothing behind it was scored ('' otherwise)."""
        if self.unscored:
            return self.unscored
        if metric in self.not_run_metrics:
            return self.not_run_metrics[metric]
        for subset, why in self.unscored_subsets.items():
            if subset in metric.split("/"):
                return why
        return ""

    @property
    def errors(self) -> int:
        return self.counts.get("infra_errors", 0) + self.counts.get("score_errors", 0)

    def incomplete(self) -> str:
        """Why this benchmark's number does not cover all it should ('' when it does)."""
        parts = []
        if self.not_run:
            parts.append("not run: " + ", ".join(sorted(self.not_run)))
        if self.missing:
            parts.append(f"{self.missing} sample(s) missing")
        if self.errors:
            parts.append(f"{self.errors} error record(s)")
        if self.counts.get("excluded"):
            parts.append(f"{self.counts['excluded']} record(s) left out by the benchmark's rule")
        return "; ".join(parts)


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
    strategy_settings: dict[str, Any] = field(default_factory=dict)
    reference: str | None = None
    extra: dict[str, float] = field(default_factory=dict)
    note: str = ""
    run_dir: Path | None = None
    tasks: dict[str, TaskOutcome] = field(default_factory=dict, repr=False)
    # The run's record table (harness.results.frames.records_of), None for published rows.
    records: pd.DataFrame | None = field(default=None, repr=False)
    fingerprint: str | None = None  # of the weights evaluated (models/fingerprint.py)

    @property
    def is_reference(self) -> bool:
        return self.reference is not None


def metric_interval(entry: BenchmarkEntry, metric: str) -> Interval | None:
    """The interval of a headline metric: the primary's, or a ``pass^k/<subset>``
    key's from the core's pass^k estimates when they give the same value."""
    if metric == entry.primary:
        return entry.interval
    name, _, subset = metric.partition("/")
    if (
        not name.startswith(stats.PASS_HAT_PREFIX)
        or not name[len(stats.PASS_HAT_PREFIX) :].isdigit()
    ):
        return None
    found = entry.pass_hat_k.get(subset, {}).get(int(name[len(stats.PASS_HAT_PREFIX) :]))
    value = entry.headline.get(metric)
    if found is None or value is None or abs(found.value - float(value)) > CI_TOLERANCE:
        return None
    return found.interval
